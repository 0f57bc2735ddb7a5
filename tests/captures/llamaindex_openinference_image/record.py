"""Re-record: images in a LlamaIndex 0.14 FunctionAgent conversation on `OpenAIResponses` (the Responses API), a
tool answering with an image too, two turns continuing one `Context`, traced by OpenInference.

    python3 -m venv /tmp/cap-llamaindex_openinference_image && \
        /tmp/cap-llamaindex_openinference_image/bin/pip install \
        llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 llama-index-workflows==2.26.1 \
        llama-index-instrumentation==0.6.0 openai==2.54.0 \
        openinference-instrumentation-llama-index==4.6.1 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-llamaindex_openinference_image/bin/python tests/captures/llamaindex_openinference_image/record.py

Why: multimodal input and a tool's image output as OpenInference's llama-index instrumentation records them. Set up
as `llamaindex_openinference_agent-workflow` is (a tracer provider exporting OTLP/HTTP,
`LlamaIndexInstrumentor().instrument()`, the session by OpenInference's `using_session`); the question is a
`ChatMessage` of content blocks, as LlamaIndex's multimodal docs show: a `TextBlock`, an
`ImageBlock(image=<PNG bytes>, image_mimetype="image/png")` (a PNG made here with zlib and struct, ~7,800 characters as
a data URL: over evalkit's 4,096 inline limit, under OpenInference's 32,000 base64 limit) and an
`ImageBlock(url="https://…")`. The instrumentation writes each block of a message as
`llm.input_messages.<i>.message.contents.<j>.message_content.*` (an image block's URL, a base64 one as a data URL).

A tool returns content blocks (`city_map`: `[TextBlock, ImageBlock(image=<PNG bytes>)]`), which `FunctionTool` keeps as
its `ToolOutput.blocks` and `FunctionAgent` as the blocks of the `tool` message it sends back. `OpenAIResponses` is
used because that is where LlamaIndex sends the model a tool's image: a `function_call_output` whose `output` is
`[input_text, input_image]` (`to_openai_responses_message_dict`); the Chat Completions `OpenAI` class sends a tool
message's text alone (`to_openai_message_dict`: "if the role is … TOOL, 'content' cannot be a list").

The run: two `agent.run` turns continuing one workflow `Context` and one LlamaIndex `Memory` (llama-index-workflows
2.26 skips a continued context's memory, as `llamaindex_openinference_react` says). Turn 1, not streamed: the question
with its two images; the model says where the photos are and calls get_weather and city_map in parallel; get_weather
raises once (LlamaIndex shows the model the exception text as the tool output, the ToolOutput flagged is_error); the
model calls it again; then answers. Turn 2, streamed (`streaming=True`, events consumed from
`handler.stream_events()`; the Responses API's stream ends with its usage): a text question; the model calls city_map
(a small map, ~1,400 characters as a data URL: inline), then answers. Five LLM calls. Every function call is scripted
with the two ids the Responses API gives it (`with_api_call_ids`: `call_…` and `fc_…`). Every package the newest
release but openai, 2.54.0, the newest llama-index-llms-openai 0.8.3 allows (`openai<3`). (The versions the capture
was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "li-oi-image-1"
MODEL = "gpt-4o"
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"
QUESTIONS = [("Where did I take these photos? What's the weather there now, and show me a map of the place.", False),
             ("And Bergen? Send me its map as well.", True)]
REPLIES = with_api_call_ids([
    # turn 1: text and two function calls in parallel
    {"text": "These are Oslo: the fjord and the Opera House. I'll check the weather and get a map.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "city_map", "arguments": {"city": "Oslo"}}]},
    # get_weather raised: try it again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Your photos are from Oslo (the fjord, the Opera House). It is rainy there, 9°C; the map shows the "
             "centre around the Opera House."},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "city_map", "arguments": {"city": "Bergen"}}]},
    {"text": "Here is Bergen's centre: Bryggen on the harbour's east side, the fish market at its head."},
], SESSION)
PACKAGES = ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "llama-index-instrumentation",
            "openai", "openinference-instrumentation-llama-index", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def png(size: int, seed: int) -> bytes:
    """A `size`x`size` RGB PNG: a gradient with deterministic noise, so zlib cannot shrink it much."""
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


def data_url_length(image: bytes) -> int:
    return len("data:image/png;base64,") + (len(image) + 2) // 3 * 4


FJORD = png(44, seed=5)
MAPS = {"Oslo": png(40, seed=13), "Bergen": png(18, seed=17)}
NOTES = (f"FunctionAgent (name photo_agent) on OpenAIResponses(model='gpt-4o'), two agent.run turns continuing one "
         f"Context and one Memory in using_session. Turn 1: a ChatMessage of blocks: TextBlock, ImageBlock(image=PNG "
         f"bytes, image/png; {data_url_length(FJORD)} characters as a data URL) and ImageBlock(url=https://…); text "
         f"and get_weather + city_map in parallel, get_weather raising once (its exception text the output, "
         f"is_error), retried, answered; city_map returns [TextBlock, ImageBlock(PNG bytes)] "
         f"({data_url_length(MAPS['Oslo'])} characters as a data URL), sent as a function_call_output of "
         f"[input_text, input_image]. Turn 2 streamed: city_map for Bergen ({data_url_length(MAPS['Bergen'])} "
         f"characters), answered. Function call item ids (fc_) distinct from their call_ids (call_)")


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import AgentStream, FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock
    from llama_index.core.memory import Memory
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAIResponses

    failures = {"get_weather": 1}  # the weather service fails once

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise RuntimeError("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]

    def city_map(city: str) -> list[Any]:
        """A map of a city's centre, as an image."""
        return [TextBlock(text=f"Map of {city} centre"), ImageBlock(image=MAPS[city], image_mimetype="image/png")]

    llm = OpenAIResponses(model=MODEL, api_base=rec.base_url, api_key="sk-fake")
    agent = FunctionAgent(name="photo_agent", tools=[get_weather, city_map], llm=llm,
                          system_prompt="You are a travel assistant. Say where photos were taken; use the tools for "
                                        "the weather and for maps.", streaming=False)
    first = ChatMessage(role="user", blocks=[
        TextBlock(text=QUESTIONS[0][0]),
        ImageBlock(image=FJORD, image_mimetype="image/png"),
        ImageBlock(url=PHOTO_URL),
    ])

    async def main() -> None:
        ctx = Context(agent)
        memory = Memory.from_defaults(session_id=SESSION)
        for question, streamed in [(first, QUESTIONS[0][1]), (QUESTIONS[1][0], QUESTIONS[1][1])]:
            agent.streaming = streamed
            handler = agent.run(user_msg=question, ctx=ctx, memory=memory)
            if streamed:
                async for event in handler.stream_events():
                    if isinstance(event, AgentStream):
                        print(event.delta, end="", flush=True)
                print()
            print(await handler)

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-trip"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
