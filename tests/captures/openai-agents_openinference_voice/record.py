"""Re-record: openai-agents' voice pipeline (`VoicePipeline`, `SingleAgentVoiceWorkflow`: speech to text, the agent,
text to speech), traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_voice && \
        /tmp/cap-openai-agents_openinference_voice/bin/pip install \
        'openai-agents[voice]==0.25.0' openai==3.63.0 numpy==2.4.6 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_voice/bin/python tests/captures/openai-agents_openinference_voice/record.py

The newest releases of each (openai and numpy as pip resolved them). A travel desk spoken to: each turn a clip of
24 kHz PCM (`AudioInput`, a synthetic tone as long as the question takes to say: the fake transcription decides its
words) run through one `VoicePipeline` with `stt_model="gpt-4o-transcribe"`, `tts_model="gpt-4o-mini-tts"` and a
`SingleAgentVoiceWorkflow` around the travel desk of `recording/openai_agents_travel.py` (`book_hotel`, raising
`TimeoutError` the first time, and `get_weather`), the workflow keeping the conversation between turns, the
pipeline's `group_id` and OpenInference's `using_session` both the session id, the SDK's defaults for what traces
keep (`trace_include_sensitive_data`, `trace_include_sensitive_audio_data`: the clip and the transcript). Each turn
the SDK transcribes the clip (`POST /v1/audio/transcriptions`, a `transcription` span), runs the agent streamed
(`Runner.run_streamed`), and speaks the answer sentence by sentence as it streams (`POST /v1/audio/speech`, PCM
streamed back; a `speech_group` span of `speech` spans):

1. "Book me a hotel in Oslo for 2 nights, and what's the weather there?": both tools in parallel, `book_hotel`
   failing, called again, the answer spoken.
2. "Is Bergen warmer?": `get_weather` for Bergen, the answer spoken.

Five LLM calls (`llm_log.jsonl`); two transcriptions and the speech of each answer's sentences in
`llm_audio.jsonl`. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`). Why: a voice agent's user never typed: each question is what the transcription heard, once,
a user step marked as spoken; each answer was said aloud, the agent's step marked so, the speech no step of its own;
the tools' results on their calls. The scenario is `recording/openai_agents_voice.py`'s, shared with
`openai-agents_otel-genai_voice`. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_voice import run_voice_turns, voice_replies
from tests.captures.recording.session import Recording

SESSION = "oa-oi-voice-1"
PACKAGES = ["openai-agents", "openai", "numpy", "openinference-instrumentation-openai-agents",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("VoicePipeline(SingleAgentVoiceWorkflow(travel desk), stt gpt-4o-transcribe, tts gpt-4o-mini-tts, group_id, "
         "the SDK's default sensitive data and audio tracing), two AudioInput turns of synthetic 24 kHz PCM under "
         "using_session: turn 1 book_hotel and get_weather in parallel, book_hotel raising once and called again, the "
         "answer spoken; turn 2 get_weather for Bergen, the answer spoken; each turn's agent run streamed by the "
         "workflow; llm_audio.jsonl the transcriptions and speech requests; function_call item ids (fc_) distinct "
         "from their call_ids (call_)")


def main() -> None:
    with Recording(Path(__file__).parent, voice_replies(SESSION), framework="openai-agents",
                   instrumentation="openinference", packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter
        run_voice_turns(SESSION, lambda: using_session(SESSION))
        rec.flush(provider)


if __name__ == "__main__":
    main()
