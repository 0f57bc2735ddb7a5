"""Re-record: a Google ADK agent using an MCP server's tools (`McpToolset`, stdio) beside a plain function tool, ADK's
own OTel tracing, two turns of one ADK session.

    python3 -m venv /tmp/cap-google-adk_native_mcp && /tmp/cap-google-adk_native_mcp/bin/pip install \
        google-adk==2.15.0 google-genai==2.34.0 litellm==1.110.2 openai==3.63.0 mcp==2.3.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-adk_native_mcp/bin/python tests/captures/google-adk_native_mcp/record.py

google-adk 2.15.0 is the newest release; it takes mcp 2 (2.3.0, the newest: FastMCP is `MCPServer` there) and
OpenTelemetry up to 1.45.2 (the newest), and requires google-genai < 3 (2.34.0, the newest such). `pip freeze`:
google-genai 2.34.0, litellm 1.110.2, openai 3.63.0, mcp / mcp-types 2.3.0, opentelemetry-api/-sdk/
-exporter-otlp-proto-http 1.45.2, opentelemetry-semantic-conventions 0.66b2 (also in meta.json).

Why: MCP tools under ADK. The `LlmAgent` (`travel_desk`, LiteLlm against the fake LLM, as the other LiteLlm
`google-adk_native*` captures) has an `McpToolset` over `mcp_server.py` (beside this file: `get_weather`,
`find_flights`), connected as ADK's MCP docs show (`McpToolset(connection_params=StdioConnectionParams(server_params=
StdioServerParameters(command, args, env)))` in the agent's tools), beside a plain function tool, `convert_currency`.
ADK answers the model an MCP tool's result as the whole `CallToolResult` it got (`_dump_mcp_model`: `content`,
`structuredContent`, `isError`), and marks an `isError` result's tool span ERROR (`error.type` `MCP_TOOL_ERROR`).
The tracer provider is set globally, so mcp 2's own client spans (`mcp-python-sdk`: one per request the client sends,
`initialize`, `tools/list`, `tools/call`) are exported beside ADK's; the server process exports its own spans to the
same endpoint (`mcp_server.py`), and ADK injects the tool span's trace context into each call's `_meta`, so they
show whether the trace crosses the process. A trajectory should show the MCP tools as ordinary tool calls with what
the model was sent, the failure flagged, no step for the MCP protocol work, and no step for the server's spans.

Turn one (`run_async`, three calls): the model asks for the weather in Oslo and Bergen (two MCP calls) and a
currency conversion (the function tool) in parallel; the weather service times out once for Oslo (the server's
`ToolError`: an `isError` result); the model asks for Oslo again, then answers. Turn two, the same ADK session
(`Runner.run_async(session_id=…)` on an `InMemorySessionService` session, as the other ADK captures) streamed
(`RunConfig(streaming_mode=SSE)`, two calls): text and a `find_flights` call, then the answer. Message content on
the spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`; ADK records none by default). (The
versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-mcp-travel-1"
QUESTIONS = ["I'm flying to Norway: what's the weather in Oslo and Bergen today, and what is 1500 NOK in euros?",
             "Any direct flights from Oslo to Bergen today?"]
REPLIES: list[dict[str, Any]] = [
    # Turn one: two MCP calls and the function tool at once; Oslo's weather times out (an isError result).
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "convert_currency", "arguments": {"amount": 1500, "currency": "NOK"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Oslo is rainy at 9°C and Bergen cloudy at 11°C today; 1500 NOK is about 128 EUR."},
    # Turn two, streamed.
    {"text": "Let me look the flights up.",
     "tool_calls": [{"name": "find_flights", "arguments": {"origin": "Oslo", "destination": "Bergen"}}]},
    {"text": "Two direct flights today: SK 267 at 08:05 and DY 612 at 12:40, 55 minutes, from 890 NOK."},
]
EUR_PER = {"NOK": 0.0853}
# What matters of the virtualenv: ADK, the google-genai types it is built on, LiteLlm's path to the fake LLM (its
# OpenAI client), the MCP SDK (client and server, its own tracing), the OpenTelemetry SDK and exporter.
PACKAGES = ["google-adk", "google-genai", "litellm", "openai", "mcp", "mcp-types", "opentelemetry-api",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions"]
NOTES = ("LlmAgent (LiteLlm) with an McpToolset over stdio (mcp_server.py, mcp 2's MCPServer: get_weather, "
         "find_flights) beside a function tool (convert_currency); turn one: parallel get_weather x2 (MCP) + "
         "convert_currency, Oslo's an isError result (ToolError, timed out) asked again, the answer; turn two, "
         "streamed (SSE): text and find_flights (MCP), the answer; one ADK session; mcp 2's own client spans (global "
         "provider) and the server process's spans (its own SDK) to the same endpoint")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        # ADK 2.x follows the GenAI semantic conventions and records no message content unless told
        # to; on the spans is what a user pointing it at an OTLP endpoint would choose.
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: no price table fetch
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-mcp-travel"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
        from google.genai import types
        from mcp import StdioServerParameters

        def convert_currency(amount: float, currency: str) -> str:
            """Convert an amount in a currency to euros."""
            return f"{amount} {currency} = {amount * EUR_PER[currency]:.2f} EUR"

        # The server inherits only a safe few of this process's variables (mcp's get_default_environment): its
        # exporter's endpoint is passed on.
        server_env = {key: os.environ[key] for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                                        "OTEL_EXPORTER_OTLP_PROTOCOL")}
        travel_info = McpToolset(connection_params=StdioConnectionParams(server_params=StdioServerParameters(
            command=sys.executable, args=[str(Path(__file__).with_name("mcp_server.py"))], env=server_env)))
        model = LiteLlm(model="openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = LlmAgent(name="travel_desk", model=model,
                         instruction="You answer travel questions: weather, flights and money.",
                         tools=[travel_info, convert_currency])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            runner = Runner(agent=agent, app_name="travel", session_service=sessions)
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for question, config in zip(QUESTIONS, configs, strict=True):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(event.content.parts[0].text)
            await runner.close()  # closes the agent's toolsets: the MCP session and its server process

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
