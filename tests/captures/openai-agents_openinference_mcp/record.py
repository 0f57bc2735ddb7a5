"""Re-record: openai-agents (Responses API) using a local MCP server's tools, traced by OpenInference.

    python3 -m venv /tmp/cap-oa-mcp && /tmp/cap-oa-mcp/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation-mcp==2.0.13 mcp==2.3.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-mcp/bin/python tests/captures/openai-agents_openinference_mcp/record.py

The agent's tools are those of `docs_server.py` (beside this file), an `MCPServer` (mcp 2's FastMCP)
run over stdio by `MCPServerStdio`: `search_docs` and `read_file` over a small in-memory corpus.
Two turns of one conversation kept by an `SQLiteSession`: turn one searches, then reads two
documents in parallel; turn two searches and reads in parallel, the read failing (the server's
`ToolError`: an `isError` result the model is shown), then reads the right document. The SDK lists
the server's tools before each turn (its `mcp_tools` span). Both processes trace to the same OTLP
endpoint, with the tracer provider set globally (as `phoenix.otel.register` does) and
`MCPInstrumentor` on both sides, so the MCP SDK's own client and server spans are exported too, in
the agent's trace. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK sends back
names) and its item's own `id` (`fc_…`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-mcp-docs-1"
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "search_docs", "arguments": {"query": "refund"}}],
     "input_tokens": 412, "output_tokens": 18},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "policies/refunds.md"}},
                    {"name": "read_file", "arguments": {"path": "faq.md"}}],
     "input_tokens": 461, "output_tokens": 41},
    {"text": "Refunds are issued within 14 days to the original payment method; after that, only store credit.",
     "input_tokens": 548, "output_tokens": 27},
    {"tool_calls": [{"name": "search_docs", "arguments": {"query": "shipping"}},
                    {"name": "read_file", "arguments": {"path": "policies/shipping.md"}}],
     "input_tokens": 602, "output_tokens": 39},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "handbook/shipping.md"}}],
     "input_tokens": 671, "output_tokens": 20},
    {"text": "Shipping is free over 50 EUR, otherwise a flat 4.90 EUR.",
     "input_tokens": 713, "output_tokens": 17},
], SESSION)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation-mcp", "mcp", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="tools from a local MCP server over stdio (MCPServerStdio); SQLiteSession over two turns; "
                         "parallel MCP tool calls; an MCP tool returning an isError result; the MCP SDK's client "
                         "and server spans in the same trace"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, Runner, SQLiteSession
        from agents.mcp import MCPServerStdio
        from openinference.instrumentation import using_session
        from openinference.instrumentation.mcp import MCPInstrumentor
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "docs-assistant"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        MCPInstrumentor().instrument(tracer_provider=provider)
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        server_env = {key: os.environ[key] for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "PATH")}

        async def run() -> None:
            async with MCPServerStdio(
                    name="docs",
                    params={"command": sys.executable, "args": [str(Path(__file__).with_name("docs_server.py"))],
                            "env": server_env}) as docs:
                agent = Agent(name="Docs assistant", model="gpt-4o-mini",
                              instructions="Answer from the company docs: search them, then read what you need.",
                              mcp_servers=[docs])
                memory = SQLiteSession(SESSION)
                with using_session(SESSION):
                    first = await Runner.run(agent, "What is our refund policy?", session=memory)
                    print(first.final_output)
                    second = await Runner.run(agent, "And what does shipping cost?", session=memory)
                    print(second.final_output)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
