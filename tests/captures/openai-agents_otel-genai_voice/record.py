"""Re-record: openai-agents' voice pipeline (`VoicePipeline`, `SingleAgentVoiceWorkflow`), traced by OpenTelemetry's
own GenAI instrumentation of openai-agents.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_voice && \
        /tmp/cap-openai-agents_otel-genai_voice/bin/pip install \
        'openai-agents[voice]==0.25.0' openai==3.63.0 numpy==2.4.6 \
        opentelemetry-instrumentation-openai-agents-v2==0.1.0 opentelemetry-util-genai==1.3b0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_voice/bin/python tests/captures/openai-agents_otel-genai_voice/record.py

The newest releases of each (openai and numpy as pip resolved them). The scenario of
`openai-agents_openinference_voice` (`recording/openai_agents_voice.py`: two `AudioInput` turns through one
`VoicePipeline`, `gpt-4o-transcribe` and `gpt-4o-mini-tts`, the travel desk's tools, `book_hotel` raising once), set up
as the `openai-agents_otel-genai*` captures are (`otel_genai_tracing`: the SDK's exporter off, message content in
spans, each turn inside an application span carrying `gen_ai.conversation.id`). Why: OpenInference's processor keeps
none of the voice spans' data; this instrumentation writes each transcription and speech span as a GenAI operation of
its own (`gen_ai.operation.name` `transcription` / `speech_generation`, the model, the voice), the record of which
model heard and which spoke. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import otel_genai_tracing
from tests.captures.recording.openai_agents_voice import run_voice_turns, voice_replies
from tests.captures.recording.session import Recording

SESSION = "oa-otel-voice-1"
PACKAGES = ["openai-agents", "openai", "numpy", "opentelemetry-instrumentation-openai-agents-v2",
            "opentelemetry-util-genai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("VoicePipeline(SingleAgentVoiceWorkflow(travel desk), stt gpt-4o-transcribe, tts gpt-4o-mini-tts, "
         "group_id, the SDK's default sensitive data and audio tracing), two AudioInput turns of synthetic 24 kHz "
         "PCM, each in an application span carrying gen_ai.conversation.id: turn 1 book_hotel and get_weather in "
         "parallel, book_hotel raising once and called again, the answer spoken; turn 2 get_weather for Bergen, the "
         "answer spoken; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only; llm_audio.jsonl the "
         "transcriptions and speech requests; function_call item ids (fc_) distinct from their call_ids (call_)")


def main() -> None:
    with Recording(Path(__file__).parent, voice_replies(SESSION), framework="openai-agents",
                   instrumentation="otel-genai", packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        run_voice_turns(SESSION, turn)
        rec.flush(provider)


if __name__ == "__main__":
    main()
