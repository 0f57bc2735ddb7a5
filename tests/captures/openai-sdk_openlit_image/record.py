"""Re-record: images sent to the OpenAI Python SDK's Chat Completions in a hand-written tool loop, traced by OpenLIT.

    python3 -m venv /tmp/cap-openai-sdk_openlit_image && /tmp/cap-openai-sdk_openlit_image/bin/pip install -U pip && \
        /tmp/cap-openai-sdk_openlit_image/bin/pip install openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1 \
        opentelemetry-instrumentation-httpx==0.66b1
    /tmp/cap-openai-sdk_openlit_image/bin/python tests/captures/openai-sdk_openlit_image/record.py

(openlit 1.45, the newest, requires `openai<3`, so openai 2.54.0, the newest 2.x; and pins OpenTelemetry's
instrumentations to the 1.45.1 SDK: 1.45.2 cannot be installed beside it. pip 23's resolver gives up on the set, hence
`pip install -U pip` first. opentelemetry-instrumentation-httpx, which openlit brings and instruments, makes the
capture's `POST` spans.)

Why: multimodal input as OpenLIT's OpenAI instrumentation records it, the scenario of `openai-sdk_openinference_image`
under OpenLIT's set-up of `openai-sdk_openlit`: `openlit.init(otlp_endpoint=…)` (its quickstart) builds the tracer,
logger and meter providers to the endpoint (the recorder) and instruments the OpenAI client (a `chat <model>` span
a call, `gen_ai.input.messages` / `gen_ai.output.messages` JSON, and a `gen_ai.client.inference.operation.details`
log record a call) and httpx (a `POST` span under each call). Its `build_input_messages` writes an `image_url` part
as a GenAI `uri` part (`modality: image`) but skips one whose URL is a `data:` URL ("Skip data URIs"), so what the
capture shows is what is left of the images in the spans. OpenLIT has no session API: each turn runs in
`openlit.using_attributes({"session.id": SESSION})` and `agent_context("photo_trip_bot")`, as in `openai-sdk_openlit`;
the tools and each turn are `@openlit.trace` functions.

The loop as the SDK's docs show it: a system prompt, `image_url` content parts, the model's `tool_calls` answered by
`tool` messages, the whole message list re-sent on every call. Turn 1's question is text and two images: a small PNG
(a 40x40 picture made here with zlib and struct, ~6,500 characters as a data URL: over evalkit's 4,096-character
inline limit) and an `https://` URL. Its first answer is two parallel `get_weather` calls, of which Oslo's raises once:
the loop sends the model the error text as that call's result, and the model calls it again, then answers. Turn 2,
same session, adds a third image, a larger PNG (~50,000 characters as a data URL), and is streamed (`stream=True`,
`stream_options={"include_usage": True}`): the model calls one tool, then answers. Five calls in all.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so every call's
`gen_ai.usage.cost` is 0, as in `openai-sdk_openlit`. (The versions recorded are in meta.json.)
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

SESSION = "openlit-image-trip-1"
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
PACKAGES = ["openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "httpx",
            "opentelemetry-instrumentation-httpx"]  # the last installed by openlit: its POST spans


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
    notes = (f"openlit.init(otlp_endpoint=recorder): its OpenAI instrumentation's chat spans (+ httpx POST spans, + an "
             f"inference event log record per call, + metrics); each turn an @openlit.trace function under "
             f"openlit.using_attributes({{'session.id': …}}) and agent_context; the tool an @openlit.trace function. "
             f"Chat Completions with images: turn 1's question text, a {len(small)}-character PNG data URL and an "
             f"https URL: two parallel get_weather calls, Oslo's raising once (its error text sent as the tool "
             f"message) and called again, then the answer; turn 2 adds a {len(large)}-character PNG data URL and is "
             f"streamed with include_usage: one tool call, then the answer. OpenLIT's build_input_messages skips "
             f"data: URLs (only the https image is in the spans). Recorded offline: OpenLIT's pricing table "
             f"unreachable, so gen_ai.usage.cost is 0 on every call")
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openai
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="photo-trip-bot", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        client = openai.OpenAI()
        failures = {"Oslo": 1}

        @openlit.trace
        def get_weather(city: str) -> str:
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

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

        @openlit.trace
        def chat_turn(messages: list[dict[str, Any]], content: list[dict[str, Any]], streamed: bool) -> str:
            messages.append({"role": "user", "content": content})
            while True:
                answer = ask(messages, streamed)
                messages.append(answer)
                if not answer.get("tool_calls"):
                    return answer.get("content") or ""
                messages += [run_tool(call) for call in answer["tool_calls"]]

        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        turns = [[{"type": "text", "text": QUESTIONS[0]}, {"type": "image_url", "image_url": {"url": small}},
                  {"type": "image_url", "image_url": {"url": PHOTO_URL}}],
                 [{"type": "text", "text": QUESTIONS[1]}, {"type": "image_url", "image_url": {"url": large}}]]
        for streamed, content in enumerate(turns):
            with openlit.using_attributes({"session.id": SESSION}), openlit.agent_context("photo_trip_bot"):
                print(chat_turn(messages, content, bool(streamed)))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
