"""Re-record: images given to an Agno Agent on OpenAIChat and returned by its tool, traced by OpenInference.

    python3 -m venv /tmp/cap-agno_openinference_image
    /tmp/cap-agno_openinference_image/bin/pip install \
        agno==3.1.10 openai==3.63.0 openinference-instrumentation-agno==1.0.15 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno_openinference_image/bin/python tests/captures/agno_openinference_image/record.py

Why: multimodal input as OpenInference's Agno instrumentation records it, beside the text-only `agno_openinference`.
Agno takes a run's images as `agent.run(..., images=[Image(...)])` (an `agno.media.Image` of raw `content` bytes, a
`url`, a `filepath`) and sends them on Chat Completions as `image_url` parts of the user message (bytes as a base64
data URL, its type from the bytes' magic). The instrumentation writes a message's `message.content` as Agno's
`get_content_string()` (its text alone) and the whole `Message.to_dict()` list as `input.value` (an image there as
Agno's own dict: `content` the bare base64, or `url`). A tool may return `ToolResult(content=..., images=[...])`: Agno
sends the content as the tool message and the images in a user message it adds after the tool messages ("The tool
call above generated the attached media.", `Model._handle_function_call_media`), since a tool message carries no image.

One Agent (an in-memory db, `add_history_to_context`) given Agno's own `session_id`, run twice. Turn 1's question is
text and two images: a 40x40 PNG made here with zlib and struct (~4,900 bytes, a ~6,500-character data URL: over
evalkit's inline limit) and an `https://` URL. Its first answer is two parallel `get_weather` calls, of which Oslo's
raises once (Agno hands the model the exception's text); the model calls it again beside `get_map`, which returns a
`ToolResult` holding a 36x36 PNG (Agno's media message then follows two tool messages). Turn 2 (`stream=True`: Agno
streams with `stream_options.include_usage`) re-sends turn 1 as history, images and Agno's media message included, and
adds a 112x112 PNG (~50,000 characters as a data URL); the model says a word and calls `get_map` alone (a 30x30 PNG:
the media message follows its one tool message), then `get_weather`, then answers. Six calls in all. The newest agno,
openai and OpenInference packages at the time of recording, no pin conflict (`pip freeze` of what matters is the pip
line above); the versions recorded are in meta.json.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-image-trip-1"
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"
QUESTIONS = ["Where were these two photos taken, and what's the weather there today?",
             "And this one? Is it warmer there than in Paris?"]
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_map", "arguments": {"city": "Oslo"}}]},
    {"text": "The first photo is the Eiffel Tower in Paris (sunny, 21°C); the second is the Oslo Opera House "
             "(rainy, 9°C), on the fjord as the map shows."},
    {"text": "Let me find it on a map.", "tool_calls": [{"name": "get_map", "arguments": {"city": "Rome"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
    {"text": "That is the Colosseum in Rome, as the map shows: clear and 27°C, warmer than Paris's 21°C."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Rome": "clear, 27°C"}


def png(size: int, seed: int) -> bytes:
    """A `size`x`size` RGB PNG: a gradient with deterministic noise, so that zlib cannot shrink it much."""
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

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))


def main() -> None:
    small, large = png(40, seed=7), png(112, seed=11)
    maps = {"Oslo": png(36, seed=5), "Rome": png(30, seed=9)}
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=["agno", "openai", "openinference-instrumentation-agno", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes=f"two turns of one Agno session (history re-sent), images as agno.media.Image: turn 1's "
                         f"question text, a {len(small)}-byte PNG (content bytes) and an https URL; two parallel "
                         f"get_weather calls, Oslo's raising once, then get_weather again beside get_map, whose "
                         f"ToolResult holds a {len(maps['Oslo'])}-byte PNG (sent in a user message Agno adds after the "
                         f"tool messages: two results before it); turn 2 streamed (run stream=True) with a "
                         f"{len(large)}-byte PNG: get_map alone (a {len(maps['Rome'])}-byte PNG, one result before "
                         f"Agno's message), get_weather, then the answer") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.media import Image
        from agno.models.openai import OpenAIChat
        from agno.tools.function import ToolResult

        failures = {"Oslo": 1}

        def get_weather(city: str) -> str:
            """The weather in a city today.

            Args:
                city: the city
            """
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        def get_map(city: str) -> Any:
            """A map of a city's centre, as an image.

            Args:
                city: the city
            """
            return ToolResult(content=f"Map of central {city}.", images=[Image(content=maps[city])])

        agent = Agent(name="photo-trip-planner",
                      model=OpenAIChat(id="gpt-4o", base_url=rec.base_url, api_key="sk-fake"),
                      tools=[get_weather, get_map],
                      instructions="You are a terse travel assistant. Name the place in each photo; use the tools "
                                   "for the weather and maps.",
                      db=InMemoryDb(), add_history_to_context=True, session_id=SESSION, telemetry=False)
        print(agent.run(QUESTIONS[0], images=[Image(content=small), Image(url=PHOTO_URL)]).content)
        answer = ""  # a streamed run yields its answer in RunContent events (no RunCompleted unless stream_events)
        for event in agent.run(QUESTIONS[1], images=[Image(content=large)], stream=True):
            if getattr(event, "event", "") == "RunContent" and isinstance(event.content, str):
                answer += event.content
        print(answer)
        rec.flush(provider)


if __name__ == "__main__":
    main()
