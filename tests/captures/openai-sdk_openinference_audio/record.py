"""Re-record: a spoken question and spoken answers over the OpenAI Python SDK's Chat Completions, under OpenInference.

    python3 -m venv /tmp/cap-openai-sdk_openinference_audio
    /tmp/cap-openai-sdk_openinference_audio/bin/pip install \
        openai==3.63.0 openinference-instrumentation-openai==0.1.66 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-sdk_openinference_audio/bin/python tests/captures/openai-sdk_openinference_audio/record.py

Why: audio in and out of a model as OpenInference's openai instrumentation records it, beside the images of
`openai-sdk_openinference_image`. The loop as OpenAI's audio guide shows it: every request asks
`modalities=["text", "audio"]` and `audio={"voice": "alloy", "format": …}` of `gpt-audio`; the first question is a
text part and an `input_audio` part (a half-second WAV voice note made here with `wave`, a 330 Hz tone, sent as base64);
a spoken answer comes back as `message.audio` (`id`, base64 `data`, `transcript`, `expires_at`, no content) and is
re-sent on the next turn as `{"role": "assistant", "audio": {"id": …}}`, the model's tool calls answered by `tool`
messages, the whole message list re-sent on every call. Two user turns of one session (`using_session`), each its own
trace under an application AGENT span, the tools OpenInference TOOL spans (`OITracer.tool`). Turn 1: two parallel
`get_weather` calls, of which Oslo's raises once (the loop sends the model the error text as that call's result, and
the model calls it again), then a spoken answer as a WAV. Turn 2 is text, streamed (`stream=True` with
`stream_options.include_usage`; the audio guide's streamed format `pcm16`): a tool call, then a spoken answer whose
`delta.audio` pieces (its id, the transcript and the data in pieces, its expiry) the loop joins. Five calls in all;
each reports its audio tokens (`prompt_tokens_details.audio_tokens`: the voice note, and from turn 2 the re-sent
answer; `completion_tokens_details.audio_tokens`). The newest openai and OpenInference packages at the time of
recording; the versions recorded are in meta.json.
"""

from __future__ import annotations

import base64
import io
import json
import math
import struct
import sys
import wave
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-openai-audio-trip-1"
MODEL = "gpt-audio"
SYSTEM = "You are a terse travel assistant. Listen to the traveller's voice notes; use the tools for the weather."
QUESTIONS = ["Here is my voice note about the trip: what's the weather where I'm going?",
             "And Rome, is it warmer there than in Paris?"]
ANSWERS = ["Paris is sunny at 21°C and Oslo is rainy at 9°C: pack an umbrella for Oslo.",
           "Rome is clear and 27°C, warmer than Paris's 21°C."]
VOICE_NOTE_TOKENS = 25  # the voice note, as audio tokens of every prompt re-sending it
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_audio_tokens": VOICE_NOTE_TOKENS},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}], "input_audio_tokens": VOICE_NOTE_TOKENS},
    {"audio": ANSWERS[0], "output_tokens": 18 + 64, "input_audio_tokens": VOICE_NOTE_TOKENS,
     "output_audio_tokens": 64},
    # Turn 2's prompts re-send the spoken answer too: its 64 audio tokens are heard again.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}],
     "input_audio_tokens": VOICE_NOTE_TOKENS + 64},
    {"audio": ANSWERS[1], "output_tokens": 13 + 42, "input_audio_tokens": VOICE_NOTE_TOKENS + 64,
     "output_audio_tokens": 42},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Rome": "clear, 27°C"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city today",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def voice_note() -> str:
    """Half a second of a 330 Hz tone, 8 kHz 16-bit mono, as a WAV file in base64 (what `input_audio.data` takes)."""
    rate = 8000
    frames = b"".join(struct.pack("<h", int(6000 * math.sin(2 * math.pi * 330 * n / rate))) for n in range(rate // 2))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as note:
        note.setnchannels(1)
        note.setsampwidth(2)
        note.setframerate(rate)
        note.writeframes(frames)
    return base64.b64encode(buffer.getvalue()).decode()


def main() -> None:
    note = voice_note()
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openinference",
                   packages=["openai", "openinference-instrumentation-openai", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes=f"Chat Completions with audio in and out (modalities text and audio, {MODEL}); two turns of "
                         f"one session (two traces); turn 1's question a text part and an input_audio part (a "
                         f"{len(base64.b64decode(note))}-byte WAV, {len(note)} base64 characters): two parallel "
                         "get_weather calls, Oslo's raising once (its error text sent as the result) and called "
                         "again, then a spoken answer (wav); turn 2 re-sends it as {role: assistant, audio: {id}}, "
                         "asks in text and is streamed with include_usage (pcm16): a tool call, then a spoken answer "
                         "joined from its delta.audio pieces; tools are OITracer.tool spans") as rec:
        rec.env()
        import openai
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "voice-trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("voice-trip-bot"), config=TraceConfig())
        failures = {"Oslo": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        client = openai.OpenAI()

        def ask(messages: list[dict[str, Any]], streamed: bool) -> tuple[dict[str, Any], str]:
            """The assistant message to send back (a spoken answer by its audio's id alone, as the audio guide
            re-sends it) and what the model said (its text, or its audio's transcript)."""
            if not streamed:
                message = client.chat.completions.create(
                    model=MODEL, messages=messages, tools=TOOLS, modalities=["text", "audio"],
                    audio={"voice": "alloy", "format": "wav"}).choices[0].message
                if message.audio is not None:
                    return {"role": "assistant", "audio": {"id": message.audio.id}}, message.audio.transcript
                return message.model_dump(exclude_none=True), message.content or ""
            text, calls, audio = "", {}, {"id": "", "transcript": "", "data": ""}
            for chunk in client.chat.completions.create(
                    model=MODEL, messages=messages, tools=TOOLS, modalities=["text", "audio"],
                    audio={"voice": "alloy", "format": "pcm16"}, stream=True, stream_options={"include_usage": True}):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    piece = choice.delta.audio  # an id, base64 data or transcript text; the last its expiry alone
                    if piece is not None:
                        audio["id"] = piece.id or audio["id"]
                        audio["transcript"] += piece.transcript or ""
                        audio["data"] += piece.data or ""
                    for delta in choice.delta.tool_calls or ():
                        call = calls.setdefault(delta.index, {"id": "", "type": "function",
                                                              "function": {"name": "", "arguments": ""}})
                        call["id"] = delta.id or call["id"]
                        call["function"]["name"] += (delta.function and delta.function.name) or ""
                        call["function"]["arguments"] += (delta.function and delta.function.arguments) or ""
            if audio["id"]:
                return {"role": "assistant", "audio": {"id": audio["id"]}}, audio["transcript"]
            answer: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                answer["tool_calls"] = [calls[index] for index in sorted(calls)]
            return answer, text

        def run_tool(call: dict[str, Any]) -> dict[str, Any]:
            try:
                output = get_weather(**json.loads(call["function"]["arguments"]))
            except Exception as exc:  # the model is told, as a real loop would
                output = f"{type(exc).__name__}: {exc}"
            return {"role": "tool", "tool_call_id": call["id"], "content": output}

        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        turns: list[str | list[dict[str, Any]]] = [
            [{"type": "text", "text": QUESTIONS[0]},
             {"type": "input_audio", "input_audio": {"data": note, "format": "wav"}}],
            QUESTIONS[1]]
        for streamed, content in enumerate(turns):
            with using_session(SESSION), tracer.start_as_current_span(
                    "voice-trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(QUESTIONS[streamed])
                messages.append({"role": "user", "content": content})
                while True:
                    answer, said = ask(messages, bool(streamed))
                    messages.append(answer)
                    if not answer.get("tool_calls"):
                        break
                    messages += [run_tool(call) for call in answer["tool_calls"]]
                agent.set_output(said)
        rec.flush(provider)


if __name__ == "__main__":
    main()
