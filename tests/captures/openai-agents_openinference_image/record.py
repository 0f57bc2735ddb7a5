"""Re-record: images in and out of an openai-agents (Responses API) tool loop, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_image
    /tmp/cap-openai-agents_openinference_image/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_image/bin/python tests/captures/openai-agents_openinference_image/record.py

Why: multimodal input and a tool's image output as OpenInference's openai-agents instrumentation records them,
beside the text-only `openai-agents_openinference` and the Chat Completions `openai-sdk_openinference_image`. Turn 1's
input is a list of Responses input items, as the SDK's docs show for images: one user message holding an
`input_text` and two `input_image` parts, a small PNG (a 40x40 picture made here with zlib and struct, ~6,500
characters as a data URL: under OpenInference's `OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH`, over evalkit's inline limit)
and an `https://` URL with `detail: "low"`. The model calls `get_weather` twice in parallel, Oslo's raising
`TimeoutError` once (the SDK sends the model its failure_error_function's text), then calls it again beside
`get_map`, a function tool returning a `ToolOutputImage` (a 36x36 PNG data URL, `detail: "low"`), which the SDK sends
as the `function_call_output`'s `input_image`; then it answers. Turn 2 (`Runner.run_streamed`) asks about a third
photo, a 112x112 PNG (~50,000 characters as a data URL: over OpenInference's limit); the model calls `get_weather`,
then answers. One session: the history kept by an `SQLiteSession` (the SDK re-sends turn 1's items, images and the
tool's image among them), the trace grouped by the RunConfig's `group_id`, both turns under OpenInference's
`using_session` (all the session id). Five calls; every function call scripted with the two ids the real Responses
API gives it (`with_api_call_ids`). The newest openai-agents and OpenInference packages at the time of recording;
the versions recorded are in meta.json.
"""

from __future__ import annotations

import asyncio
import base64
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-image-trip-1"
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"
QUESTIONS = ["Where were these two photos taken, and what's the weather there today? Show me a map of the second.",
             "And this one? Is it warmer there than in Paris?"]
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_map", "arguments": {"city": "Oslo"}}]},
    {"text": "The first photo is the Eiffel Tower in Paris (sunny, 21°C); the second is the Oslo Opera House "
             "(rainy, 9°C), on the harbour east of the centre, as the map shows."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
    {"text": "That is the Colosseum in Rome: clear and 27°C, warmer than Paris's 21°C."},
], SESSION)
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Rome": "clear, 27°C"}


def png_data_url(size: int, seed: int) -> str:
    """A `size`x`size` RGB PNG as a data URL: a gradient with deterministic noise, so zlib cannot shrink it much (the
    same picture as `openai-sdk_openinference_image/record.py` makes)."""
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
    small, map_png, large = png_data_url(40, seed=7), png_data_url(36, seed=5), png_data_url(112, seed=11)
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "openinference-semantic-conventions",
                             "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes=f"Responses API with images: turn 1 (run) a list of input items, a user message of "
                         f"input_text, a {len(small)}-character PNG data URL input_image and an https input_image "
                         f"(detail low); two parallel get_weather calls, Oslo's raising once, then get_weather again "
                         f"beside get_map, whose ToolOutputImage (a {len(map_png)}-character PNG data URL, detail low) "
                         f"is sent as the function_call_output's input_image; turn 2 (run_streamed) a "
                         f"{len(large)}-character PNG data URL (over OpenInference's 32,000 default); SQLiteSession "
                         f"memory, RunConfig group_id, OpenInference using_session; function_call item ids (fc_) "
                         f"distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, RunConfig, Runner, SQLiteSession, ToolOutputImage, function_tool
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-trip-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        failures = {"Oslo": 1}

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city today."""
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        @function_tool
        def get_map(city: str) -> Any:  # a ToolOutputImage; `Any`: the SDK reads the hints, this module's globals
            """A street map of a city's centre, as an image."""
            return ToolOutputImage(image_url=map_png, detail="low")

        desk = Agent(name="Photo trip desk", model="gpt-4o",
                     instructions="You are a terse travel assistant. Name the place in each photo; use the tools "
                                  "for the weather and for maps.",
                     tools=[get_weather, get_map])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)
        turns = [[{"role": "user", "content": [
                     {"type": "input_text", "text": QUESTIONS[0]},
                     {"type": "input_image", "image_url": small, "detail": "auto"},
                     {"type": "input_image", "image_url": PHOTO_URL, "detail": "low"}]}],
                 [{"role": "user", "content": [
                     {"type": "input_text", "text": QUESTIONS[1]},
                     {"type": "input_image", "image_url": large, "detail": "auto"}]}]]

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(desk, turns[0], session=memory, run_config=config)
                second = Runner.run_streamed(desk, turns[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
