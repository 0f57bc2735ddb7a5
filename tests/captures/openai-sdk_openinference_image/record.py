"""Re-record: images sent to the OpenAI Python SDK's Chat Completions in a hand-written tool loop, under OpenInference.

    python3 -m venv /tmp/cap-openai-sdk_openinference_image
    /tmp/cap-openai-sdk_openinference_image/bin/pip install \
        openai==3.63.0 openinference-instrumentation-openai==0.1.66 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-sdk_openinference_image/bin/python tests/captures/openai-sdk_openinference_image/record.py

Why: multimodal input as OpenInference's openai instrumentation records it (each `image_url` part a
`message.contents.<k>.message_content.image.image.url`, a base64 data URL longer than its
`OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH`, 32,000 characters by default, replaced by `__REDACTED__` there and in
`input.value`), beside the text-only loop of `openai-sdk_openinference`. The loop as the SDK's docs show it: a system
prompt, `image_url` content parts, the model's `tool_calls` answered by `tool` messages, the whole message list re-sent
on every call. Two user turns of one session (`using_session`), each its own trace under an application AGENT span, the
tools OpenInference TOOL spans (`OITracer.tool`). Turn 1's question is text and two images: a small PNG (a 40x40
picture made here with zlib and struct, ~6,500 characters as a data URL: kept by OpenInference, over evalkit's
inline limit) and an `https://` URL. Its first answer is two parallel `get_weather` calls, of which Oslo's raises
once: the loop sends the model the error text as that call's result, and the model calls it again. Turn 2 adds a
third image, a larger PNG (~50,000 characters as a data URL: over OpenInference's default limit), and is streamed
(`stream=True` with `stream_options.include_usage`); the model calls one tool, then answers. Five calls in all. The
newest openai and OpenInference packages at the time of recording; the versions recorded are in meta.json.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-openai-image-trip-1"
MODEL = "gpt-4o"
SYSTEM = "You are a terse travel assistant. Name the place in each photo; use the tools for the weather."
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"
QUESTIONS = ["Where were these two photos taken, and what's the weather there today?",
             "And this one? Is it warmer there than in Paris?"]
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "The first photo is the Eiffel Tower in Paris (sunny, 21°C); the second is the Oslo Opera House "
             "(rainy, 9°C)."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
    {"text": "That is the Colosseum in Rome: clear and 27°C, warmer than Paris's 21°C."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Rome": "clear, 27°C"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city today",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def png_data_url(size: int, seed: int) -> str:
    """A `size`x`size` RGB PNG as a data URL: a gradient with deterministic noise, so zlib cannot shrink it much."""
    state = seed
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            noise = state >> 24
            rows += bytes(((x * 255 // size + noise) & 255, (y * 255 // size + noise) & 255, (noise * 3) & 255))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


def main() -> None:
    small, large = png_data_url(40, seed=7), png_data_url(112, seed=11)
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openinference",
                   packages=["openai", "openinference-instrumentation-openai", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes=f"Chat Completions with images; two turns of one session (two traces); turn 1's question "
                         f"text, a {len(small)}-character PNG data URL and an https URL: two parallel get_weather "
                         f"calls, Oslo's raising once (its error text sent as the result) and called again; turn 2 "
                         f"adds a {len(large)}-character PNG data URL (over OpenInference's 32,000 default: redacted) "
                         f"and is streamed with include_usage; tools are OITracer.tool spans") as rec:
        rec.env()
        import openai
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("photo-trip-bot"), config=TraceConfig())
        failures = {"Oslo": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        client = openai.OpenAI()

        def ask(messages: list[dict[str, Any]], streamed: bool) -> dict[str, Any]:
            """The model's answer as the assistant message to send back."""
            if not streamed:
                message = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
                return message.model_dump(exclude_none=True)
            text, calls = "", {}  # the tool calls by their index in the answer, as the deltas name them
            for chunk in client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True,
                                                        stream_options={"include_usage": True}):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for delta in choice.delta.tool_calls or ():
                        call = calls.setdefault(delta.index, {"id": "", "type": "function",
                                                              "function": {"name": "", "arguments": ""}})
                        call["id"] = delta.id or call["id"]
                        call["function"]["name"] += (delta.function and delta.function.name) or ""
                        call["function"]["arguments"] += (delta.function and delta.function.arguments) or ""
            answer: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                answer["tool_calls"] = [calls[index] for index in sorted(calls)]
            return answer

        def run_tool(call: dict[str, Any]) -> dict[str, Any]:
            try:
                output = get_weather(**json.loads(call["function"]["arguments"]))
            except Exception as exc:  # the model is told, as a real loop would
                output = f"{type(exc).__name__}: {exc}"
            return {"role": "tool", "tool_call_id": call["id"], "content": output}

        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        turns = [[{"type": "text", "text": QUESTIONS[0]}, {"type": "image_url", "image_url": {"url": small}},
                  {"type": "image_url", "image_url": {"url": PHOTO_URL}}],
                 [{"type": "text", "text": QUESTIONS[1]}, {"type": "image_url", "image_url": {"url": large}}]]
        for streamed, content in enumerate(turns):
            with using_session(SESSION), tracer.start_as_current_span(
                    "photo-trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(content[0]["text"])
                messages.append({"role": "user", "content": content})
                while True:
                    answer = ask(messages, bool(streamed))
                    messages.append(answer)
                    if not answer.get("tool_calls"):
                        break
                    messages += [run_tool(call) for call in answer["tool_calls"]]
                agent.set_output(answer.get("content"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
