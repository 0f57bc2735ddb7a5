"""Re-record: a LangChain 1.x `create_agent` on `ChatOpenAI` whose tools are a local MCP server's, loaded by
langchain-mcp-adapters' `MultiServerMCPClient` (stdio), its graph checkpointed (`MemorySaver`, a `thread_id`), traced
by OpenInference's LangChain instrumentation, with OpenInference's MCP instrumentation on both sides.

    python3 -m venv /tmp/cap-langgraph_openinference_mcp && /tmp/cap-langgraph_openinference_mcp/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 langchain-mcp-adapters==0.3.2 \
        mcp==1.30.0 openinference-instrumentation-langchain==0.1.80 openinference-instrumentation-mcp==2.0.13 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_mcp/bin/python tests/captures/langgraph_openinference_mcp/record.py

mcp 1.30.0, not 2.x: langchain-mcp-adapters 0.3.2 (the newest) requires `mcp<2`.

Why: MCP tools under LangGraph. The tools are `travel_server.py`'s (beside this file, FastMCP), loaded as
langchain-mcp-adapters' README shows first: `MultiServerMCPClient({"travel": {"command", "args", "transport":
"stdio", "env"}})` and `await client.get_tools()`, each a LangChain `StructuredTool` that opens a new client session
(a new server process: initialize, then `tools/call`) for every call. An MCP tool's result comes back as LangChain
content blocks (`[{"type": "text", "text": …, "id": …}]`), its `isError` result as a ToolMessage with
`status="error"` (the adapter's `handle_tool_errors=True`, its default). MCP tools are async only: the agent runs
with `ainvoke` / `astream`. OpenInference's MCP instrumentor makes no span (its README: it only propagates context);
set up in both processes, it carries the tool span's context to the server in each request's `_meta`, so the spans
the server makes itself (one per tool, as OpenInference's MCP example server does, exported by its own provider to
the same endpoint) are in the agent's trace under the LangChain tool span. A trajectory should show the MCP tools as
ordinary tool calls with the text the model was sent, the failure flagged, no step for the MCP protocol work, and no
step for the server's spans.

Built as LangChain's docs show: `create_agent(model, tools, system_prompt=…, name=…, checkpointer=MemorySaver())`
run with `config={"configurable": {"thread_id": …}}` ("Short-term memory"). The session is that thread id alone, as
in the other create_agent captures: OpenInference's LangChain tracer records a run's `metadata.thread_id` as
`session.id`, and LangGraph copies the configurable thread id into every run's metadata; no `using_session`.

Turn 1 (`ainvoke`): the model says it will look and calls book_hotel and get_weather in parallel; the server's
get_weather raises once (FastMCP answers `isError`, "Error executing tool get_weather: …"); the model calls
get_weather again; then answers. Turn 2, same thread, streamed (`astream(…, stream_mode="messages")`: LangGraph's
message streaming makes ChatOpenAI stream, `stream_usage=True` so the streamed calls report tokens): the model calls
convert_currency, then answers. Five LLM calls, two traces. (The versions the capture was recorded with are in
meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-mcp-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    # turn 1: text and two MCP tool calls in parallel; get_weather's server raises once
    {"text": "I'll book the hotel and check the weather in Oslo.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "langchain-mcp-adapters", "mcp", "openinference-instrumentation-langchain",
            "openinference-instrumentation-mcp", "openinference-instrumentation", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name travel_agent) on ChatOpenAI(gpt-4o-mini, stream_usage=True), its tools a FastMCP "
         "server's (travel_server.py, mcp 1.30) over stdio through langchain-mcp-adapters' MultiServerMCPClient."
         "get_tools() (a new session and server process per tool call); MCPInstrumentor in both processes, the "
         "server exporting a span of its own per tool (OpenInference's MCP example server), in the agent's trace; "
         "MemorySaver, thread_id the session (no using_session). Turn 1 ainvoke: text and book_hotel + get_weather "
         "in parallel, get_weather an isError result once (the adapter's ToolMessage status='error'), retried, "
         "answered; turn 2 astream(stream_mode='messages') (the model streams): convert_currency, answered. "
         "Two traces")


async def run(base_url: str, failures: Path) -> None:
    from langchain.agents import create_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # stdio servers get a default environment unless given one: the OTLP endpoint and the failure file go along.
    server_env = {key: os.environ[key] for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "PATH")}
    client = MultiServerMCPClient({"travel": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("travel_server.py"))], "transport": "stdio",
        "env": {**server_env, "TRAVEL_FAILURES": str(failures)}}})
    tools = await client.get_tools()
    model = ChatOpenAI(model=MODEL, base_url=base_url, api_key="sk-fake", stream_usage=True)  # type: ignore[arg-type]
    agent = create_agent(model, tools=tools, name="travel_agent",
                         system_prompt="You are a travel agent. Book hotels, check the weather, convert costs to EUR.",
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = await agent.ainvoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    async for chunk, _metadata in agent.astream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                                stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from openinference.instrumentation.mcp import MCPInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-mcp-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        MCPInstrumentor().instrument(tracer_provider=provider)
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with tempfile.TemporaryDirectory() as scratch:
            asyncio.run(run(rec.base_url, Path(scratch) / "failures"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
