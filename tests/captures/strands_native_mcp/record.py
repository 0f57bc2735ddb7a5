"""Re-record: Strands Agents using an MCP server's tools (`MCPClient`, stdio) beside a local `@tool`, traced by
Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_mcp && /tmp/cap-strands_native_mcp/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 mcp==2.3.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_mcp/bin/python tests/captures/strands_native_mcp/record.py

strands-agents 1.65.0 is the newest release (its `openai` extra now takes openai 3, and it takes mcp 2: FastMCP is
`MCPServer` there). opentelemetry-sdk 1.45.1 as in the other Strands captures: no opentelemetry-instrumentation-
threading (which strands-agents requires) accepts 1.45.2's opentelemetry-api yet.

The agent's tools are those of `mcp_server.py` (beside this file), run over stdio by Strands' `MCPClient` as its docs
show (`with client: tools = client.list_tools_sync()`, the tools given to the `Agent`): `find_book` and
`stock_level` over a small catalogue; and a local `@tool`, `shipping_quote`. `StrandsTelemetry` sets its tracer
provider globally, so mcp 2's own client spans (`mcp-python-sdk`: one per request the client sends, `initialize`,
`tools/list`, `tools/call`) are exported beside Strands' spans. The server process sets up an OpenTelemetry SDK of
its own exporting to the same endpoint (`mcp_server.py`), so its `tools/call <tool>` spans show whether the trace
crosses the process: the client's `_meta` carries the trace context (Strands injects it; mcp 2's dispatcher replaces
it with its own CLIENT span's).

Turn one (`agent(question)`, four calls): the model asks for both books by title and the shipping quote to France in
parallel (two MCP calls, one local); then both stock levels in parallel, the inventory service timing out once for
one of them (the server's `ToolError`: an `isError` result); it asks for that one again, then answers. Turn two (the
same agent and session, `agent.stream_async`, its events streamed as they come; two calls): a shipping quote to
Belgium and the book's stock again in parallel, then the answer. The session is the agent's
`trace_attributes={"session.id": …}`, as in the other Strands captures. (The versions the capture was recorded with
are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-mcp-bookshop-1"
QUESTIONS = ["Do you have The Left Hand of Darkness and The Dispossessed in stock? And what does shipping to France "
             "cost?",
             "Then just The Left Hand of Darkness, shipped to Belgium: how much, and is it still there?"]
LEFT_HAND, DISPOSSESSED = "978-0441478125", "978-0061054884"
REPLIES: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "find_book", "arguments": {"title": "The Left Hand of Darkness"}},
                    {"name": "find_book", "arguments": {"title": "The Dispossessed"}},
                    {"name": "shipping_quote", "arguments": {"country": "France"}}]},
    {"tool_calls": [{"name": "stock_level", "arguments": {"isbn": LEFT_HAND}},
                    {"name": "stock_level", "arguments": {"isbn": DISPOSSESSED}}]},
    {"tool_calls": [{"name": "stock_level", "arguments": {"isbn": LEFT_HAND}}]},
    {"text": "The Left Hand of Darkness: 3 copies in stock. The Dispossessed is out of stock (a reorder takes 5 "
             "days). Shipping to France costs 6.50 EUR."},
    {"tool_calls": [{"name": "shipping_quote", "arguments": {"country": "Belgium"}},
                    {"name": "stock_level", "arguments": {"isbn": LEFT_HAND}}]},
    {"text": "Shipping The Left Hand of Darkness to Belgium costs 5.90 EUR, and all 3 copies are still in stock."},
]
SHIPPING = {"France": "6.50 EUR, 2-3 days", "Belgium": "5.90 EUR, 2-4 days"}
# What was installed that the spans depend on: the framework and its tracer, the client it calls, the MCP SDK (client
# and server, its own tracing), the OpenTelemetry SDK and exporter, the threading instrumentation Strands uses to carry
# the span context into the threads its tools run in.
PACKAGES = ["strands-agents", "openai", "mcp", "mcp-types", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-api", "opentelemetry-instrumentation-threading",
            "opentelemetry-semantic-conventions"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION,
                   notes="tools from a local MCP server over stdio (Strands' MCPClient, mcp 2's MCPServer) beside a "
                         "local @tool; trace_attributes session.id; every call streamed (OpenAIModel); turn one: "
                         "parallel find_book x2 (MCP) + shipping_quote (local), parallel stock_level x2 (MCP) one "
                         "an isError result (ToolError, timed out) asked again, the answer; turn two (stream_async): "
                         "parallel shipping_quote + stock_level, the answer; mcp 2's own client spans (global "
                         "provider) and the server process's spans (its own SDK) to the same endpoint") as rec:
        rec.env()
        from mcp import StdioServerParameters, stdio_client
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry
        from strands.tools.mcp import MCPClient

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()

        @tool
        def shipping_quote(country: str) -> str:
            """What shipping an order to a country costs, and how long it takes."""
            return SHIPPING[country]

        # The server inherits only a safe few of this process's variables (mcp's get_default_environment): its
        # exporter's endpoint is passed on.
        server_env = {key: os.environ[key] for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                                        "OTEL_EXPORTER_OTLP_PROTOCOL")}
        catalogue = MCPClient(lambda: stdio_client(StdioServerParameters(
            command=sys.executable, args=[str(Path(__file__).with_name("mcp_server.py"))], env=server_env)))
        with catalogue:
            tools = catalogue.list_tools_sync()
            model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")
            agent = Agent(model=model, tools=[*tools, shipping_quote], name="bookshop-assistant",
                          system_prompt="You are a bookshop's assistant: look books up in the catalogue, check "
                                        "their stock and quote shipping.",
                          trace_attributes={"session.id": SESSION}, callback_handler=None)
            print(agent(QUESTIONS[0]))

            async def streamed() -> None:
                async for event in agent.stream_async(QUESTIONS[1]):
                    if "data" in event:
                        print(event["data"], end="", flush=True)
                    elif "result" in event:
                        print()

            asyncio.run(streamed())
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
