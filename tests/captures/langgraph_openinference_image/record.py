"""Re-record: images in a LangChain 1.x `create_agent` conversation on `ChatOpenAI` (the Responses API), a tool
answering with an image too, its graph checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_image && \
        /tmp/cap-langgraph_openinference_image/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_image/bin/python tests/captures/langgraph_openinference_image/record.py

Why: multimodal input and a tool's image output as OpenInference's LangChain tracer records them. The question is a
`HumanMessage` of LangChain v1's standard content blocks, as LangChain's "Messages" docs show multimodal input first:
a `text` block, two `{"type": "image", "base64": …, "mime_type": "image/png"}` blocks (PNGs made here with zlib and
struct: a small one, ~1,200 characters as a data URL, and a larger one, ~9,400 characters, over evalkit's 4,096
inline limit and under OpenInference's 32,000 base64 limit) and a `{"type": "image", "url": "https://…"}` block.
langchain-openai sends them as `input_image` items (the base64 ones as data URLs). The tracer flattens only `text`
and OpenAI `image_url` blocks into `llm.input_messages.*` (`_get_attributes_from_message_content`): a standard
`image` block leaves no attribute at all, its index skipped; the whole message, base64 and all, is in the call's
`input.value` (LangChain's `dumpd` of its messages) and in the graph's and its nodes' state.

A tool returns content blocks (`city_map`: a `text` block and a standard base64 `image` block, which LangChain's
tool machinery keeps as the ToolMessage's content, `TOOL_MESSAGE_BLOCK_TYPES`). The Responses API is used
(`use_responses_api=True`) because that is where OpenAI takes an image in a tool's result: langchain-openai sends the
ToolMessage as a `function_call_output` whose `output` is `[input_text, input_image]`
(`_ensure_valid_tool_message_content`); on Chat Completions it would send the blocks as `image_url` parts of the
`tool` message, which OpenAI rejects ("Image URLs are only allowed for messages with role 'user'").

Built as LangChain's docs show: `create_agent(model, tools, system_prompt=…, name=…, checkpointer=MemorySaver())`
run with `config={"configurable": {"thread_id": …}}`; the session is that thread id (the tracer records a run's
`metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a `ToolException` once, handled as
LangChain's tools docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the
ToolMessage the model is sent).

Turn 1 (`invoke`): the question with its three images; the model says where the photos are and calls get_weather and
city_map in parallel; get_weather raises once; the model calls it again; then answers. Turn 2, same thread, streamed
(`stream(…, stream_mode="messages")`: ChatOpenAI streams): a text question; the model calls city_map (a small map,
inline), then answers. Five LLM calls, two traces. Every function call is scripted with the two ids the Responses API
gives it (`with_api_call_ids`: `call_…` and `fc_…`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import base64
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "lg-oi-image-1"
MODEL = "gpt-4o"
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"
QUESTIONS = ["Where did I take these three photos? What's the weather there now, and show me a map of the place.",
             "And Bergen? Send me its map as well."]
REPLIES = with_api_call_ids([
    # turn 1: text and two function calls in parallel
    {"text": "These are Oslo: the harbour, the fjord and the Opera House. I'll check the weather and get a map.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "city_map", "arguments": {"city": "Oslo"}}]},
    # get_weather raised: try it again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Your photos are from Oslo (the harbour, the fjord, the Opera House). It is rainy there, 9°C; the map "
             "shows the centre around the Opera House."},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "city_map", "arguments": {"city": "Bergen"}}]},
    {"text": "Here is Bergen's centre: Bryggen on the harbour's east side, the fish market at its head."},
], SESSION)
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def png_base64(size: int, seed: int) -> str:
    """A `size`x`size` RGB PNG in base64: a gradient with deterministic noise, so zlib cannot shrink it much."""
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
    return base64.b64encode(png).decode()


HARBOUR, FJORD = png_base64(16, seed=3), png_base64(48, seed=5)
MAPS = {"Oslo": png_base64(40, seed=13), "Bergen": png_base64(18, seed=17)}
NOTES = (f"create_agent (name photo_agent) on ChatOpenAI(model='gpt-4o', use_responses_api=True), MemorySaver, "
         f"thread_id the session (no using_session). Turn 1 invoke: a HumanMessage of LangChain v1 standard blocks: "
         f"text, two base64 PNG image blocks ({len('data:image/png;base64,' + HARBOUR)} and "
         f"{len('data:image/png;base64,' + FJORD)} characters as data URLs) and an https URL image block; text and "
         f"get_weather + city_map in parallel, get_weather raising a ToolException once (handle_tool_error=True sends "
         f"its text), retried, answered; city_map returns [text, base64 PNG image block] "
         f"({len('data:image/png;base64,' + MAPS['Oslo'])} characters as a data URL), sent as a function_call_output "
         f"of [input_text, input_image]. Turn 2 stream_mode='messages' (the model streams): city_map for Bergen "
         f"({len('data:image/png;base64,' + MAPS['Bergen'])} characters), answered. Function call item ids (fc_) "
         f"distinct from their call_ids (call_)")


def run() -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    model = ChatOpenAI(model=MODEL, use_responses_api=True, timeout=30)
    failures = {"get_weather": 1}

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]

    @tool
    def city_map(city: str) -> list[dict[str, Any]]:
        """A map of a city's centre, as an image."""
        return [{"type": "text", "text": f"Map of {city} centre"},
                {"type": "image", "base64": MAPS[city], "mime_type": "image/png"}]

    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    agent = create_agent(model, tools=[weather, city_map], name="photo_agent",
                         system_prompt="You are a travel assistant. Say where photos were taken; use the tools for "
                                       "the weather and for maps.",
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    question = {"role": "user", "content": [
        {"type": "text", "text": QUESTIONS[0]},
        {"type": "image", "base64": HARBOUR, "mime_type": "image/png"},
        {"type": "image", "base64": FJORD, "mime_type": "image/png"},
        {"type": "image", "url": PHOTO_URL},
    ]}
    first = agent.invoke({"messages": [question]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-trip"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
