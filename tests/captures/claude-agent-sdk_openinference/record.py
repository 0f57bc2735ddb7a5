"""Re-record: a Claude Agent SDK session (the Claude Code CLI under it) traced by OpenInference's instrumentation of it.

    python3 -m venv /tmp/cap-claude-agent-sdk_openinference && /tmp/cap-claude-agent-sdk_openinference/bin/pip \
        install claude-agent-sdk==0.2.190 openinference-instrumentation-claude-agent-sdk==0.1.22 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.337)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-agent-sdk_openinference/bin/python tests/captures/claude-agent-sdk_openinference/record.py

Why this instrumentation: of the Claude Agent SDK's OpenTelemetry instrumentations on PyPI,
`openinference-instrumentation-claude-agent-sdk` is the most downloaded (the only one among PyPI's 15,000 most
downloaded packages), the one Arize Phoenix and Arize AX document, and the one Langfuse's JavaScript guide uses
(OpenLIT's is `claude-agent-sdk_openlit`; LangSmith's, which Langfuse's Python guide uses, is a part of langsmith).
Set up as its README shows: a TracerProvider exporting to the endpoint (the recorder) given to
`ClaudeAgentSDKInstrumentor().instrument(tracer_provider=…)`, which wraps `ClaudeSDKClient.connect` and `.query`
(keeps the prompt) and `.receive_response` (one AGENT span a turn, `ClaudeAgentSDK.ClaudeSDKClient.receive_response`,
whose `llm.output_messages` are the SDK's assistant messages; TOOL spans from hooks it adds to the options and from
the messages' tool_use / tool_result blocks; an AGENT span per subagent run, `ClaudeAgentSDK.Agent`). The model calls
are made by the CLI, a Node process the instrumentation does not see. Claude Code's own telemetry is off
(`telemetry={}`: the `claude-code_native*` captures record it); the rest of the CLI's environment and the client's
run of the questions are `recording/claude_code.py`'s (`run_claude_code`).

The scenario, what a Claude Agent SDK application does that the corpus lacked under this instrumentation: a
ClaudeSDKClient with an in-process MCP server (`@tool` + `create_sdk_mcp_server`) of three tools, `get_weather`
(raises on the first Porto lookup: the SDK sends the model its message as an `is_error` tool result),
`get_forecast` and `book_hotel`, which the application's `can_use_tool` callback denies (not in `allowed_tools`,
so the CLI asks it; the denial's message is the `is_error` result the model is shown); Claude Code's built-in
`Read` of the traveller's itinerary in the session's working directory (`TRIP_DIR`, written by this script); and a
subagent (`agents=`: `AgentDefinition` `forecaster`, holding `get_forecast`) launched with Claude Code's `Agent`
tool. Two queries of one session (the SDK's `session_id` option). Turn one: text and two parallel calls, `Read`
and `get_weather` (Porto, failing); text and two parallel calls again, the retry of `get_weather` and `book_hotel`
(denied); the answer. Turn two: an `Agent` call to the forecaster, whose `get_forecast` call and report are its own
requests; the main agent's answer. The CLI streams every Messages API call; the replies are matched by the
request's last message (`when`), so the subagent's requests get its own; the first call writes the prompt cache,
the others read it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import run_claude_code
from tests.captures.recording.session import Recording

PACKAGES = ["@anthropic-ai/claude-code", "claude-agent-sdk", "openinference-instrumentation-claude-agent-sdk",
            "openinference-instrumentation", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
MODEL = "claude-sonnet-4-5"
SESSION_ID = "7c1f0a52-93d4-4b8e-a6f2-5e0d8b14c3a9"  # Claude Code session ids are UUIDs
SERVER = "travel"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
BOOKING_TOOL = f"mcp__{SERVER}__book_hotel"
READ_TOOL = "Read"  # Claude Code's built-in file reader
AGENT_TOOL = "Agent"  # Claude Code's subagent launcher, as the CLI lists it in the request's tools
SUBAGENT = "forecaster"
TRIP_DIR = "/tmp/cap-claude-agent-sdk_openinference-trip"  # the session's working directory: a fixed path, as
ITINERARY = f"{TRIP_DIR}/itinerary.txt"                    # the scripted Read call names it
ITINERARY_TEXT = "Porto, 12-14 June: Hotel Infante, 2 nights.\nLisbon, 14-16 June: friends' flat.\n"
SUBAGENT_TASK = "Get tomorrow's forecast for Porto and say whether it is beach weather."
DENIAL = "The traveller books hotels themselves: ask them before booking."
QUESTIONS = ["Read my itinerary, check the weather in Porto now and book the hotel it names.",
             "Ask the forecaster whether Porto will be beach weather tomorrow."]
# Every reply names the request it answers (`when`: a text of its last message, as JSON: ASCII only, `°` is
# escaped there). `input_tokens` count every prompt token, the cached ones among them.
REPLIES: list[dict[str, Any]] = [
    {"text": "I'll read your itinerary and check Porto's weather at once.",
     "tool_calls": [{"name": READ_TOOL, "arguments": {"file_path": ITINERARY}},
                    {"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "when": "book the hotel it names", "input_tokens": 6240, "output_tokens": 72,
     "cache_write_tokens": 6200},
    {"text": "The Porto lookup timed out; trying again, and booking the Hotel Infante for 2 nights.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}},
                    {"name": BOOKING_TOOL, "arguments": {"hotel": "Hotel Infante", "city": "Porto", "nights": 2}}],
     "when": "weather service timed out", "input_tokens": 6460, "output_tokens": 96,
     "cache_read_tokens": 6200},
    {"text": "Porto is cloudy at 18°C now. I did not book the Hotel Infante: you book hotels yourself, so tell me "
             "if I should.",
     "when": "books hotels themselves", "input_tokens": 6620, "output_tokens": 40, "cache_read_tokens": 6200},
    {"text": "", "tool_calls": [{"name": AGENT_TOOL, "arguments": {"description": "Porto beach forecast",
                                                                  "prompt": SUBAGENT_TASK, "subagent_type": SUBAGENT,
                                                                  "run_in_background": False}}],
     "when": "Ask the forecaster", "input_tokens": 6680, "output_tokens": 44, "cache_read_tokens": 6200},
    # The subagent: its first request's last message is the task it was given, then its tool result.
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Porto", "days": 1}}],
     "when": SUBAGENT_TASK, "input_tokens": 1200, "output_tokens": 30},
    {"text": "Tomorrow Porto will be cloudy with a high of 19°C: not beach weather.",
     "when": "Porto in 1 day(s)", "input_tokens": 1300, "output_tokens": 20},
    # The main agent again, shown the Agent call's result (the subagent's report).
    {"text": "No: the forecaster says Porto will be cloudy tomorrow with a high of 19°C, not beach weather.",
     "when": "high of 19", "input_tokens": 6760, "output_tokens": 26, "cache_read_tokens": 6200},
]
NOTES = ("ClaudeAgentSDKInstrumentor().instrument(tracer_provider=…) (one AGENT span a turn with the SDK's assistant "
         "messages as llm.output_messages, TOOL spans from hooks and tool_use/tool_result blocks, an AGENT span per "
         "subagent run); Claude Code's own telemetry off. A ClaudeSDKClient, two queries of one session, an "
         "in-process MCP server of three tools, Claude Code's Read, a can_use_tool callback denying book_hotel, a "
         "subagent (AgentDefinition `forecaster`). Turn one: text and parallel Read + get_weather (Porto raising: an "
         "is_error tool result), text and parallel get_weather (retry) + book_hotel (denied), the answer; turn two: "
         "an Agent call, the forecaster's get_forecast and report, the answer. The first call writes the prompt "
         "cache, the main agent's later calls read it")
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
FORECAST = {"Lisbon": "sunny, high 27°C", "Porto": "cloudy, high 19°C"}


def options(home: str, cli: str | None) -> Any:
    from claude_agent_sdk import (
        AgentDefinition,
        ClaudeAgentOptions,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
        create_sdk_mcp_server,
        tool,
    )

    failures = {"Porto": 1}  # the weather service times out on the first Porto lookup

    @tool("get_weather", "The current weather in a city", {"city": str})
    async def get_weather(args: dict[str, Any]) -> dict[str, Any]:
        city = args["city"]
        if failures.get(city):
            failures[city] -= 1
            raise TimeoutError(f"weather service timed out for {city}")
        return {"content": [{"type": "text", "text": WEATHER[city]}]}

    @tool("get_forecast", "The forecast for a city, some days ahead", {"city": str, "days": int})
    async def get_forecast(args: dict[str, Any]) -> dict[str, Any]:
        city = args["city"]
        return {"content": [{"type": "text", "text": f"{city} in {args['days']} day(s): {FORECAST[city]}"}]}

    @tool("book_hotel", "Book a hotel in a city for some nights", {"hotel": str, "city": str, "nights": int})
    async def book_hotel(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"Booked {args['hotel']} for {args['nights']} nights"}]}

    async def can_use_tool(name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        if name == BOOKING_TOOL:
            return PermissionResultDeny(message=DENIAL)
        return PermissionResultAllow()

    server = create_sdk_mcp_server(SERVER, "1.0.0", tools=[get_weather, get_forecast, book_hotel])
    forecaster = AgentDefinition(
        description="Looks up weather forecasts for Portuguese cities and judges them for the beach.",
        prompt="You are a forecaster. Use get_forecast; never guess. Report in one sentence.",
        tools=[FORECAST_TOOL],
    )
    return ClaudeAgentOptions(
        model=MODEL, session_id=SESSION_ID, cwd=TRIP_DIR, cli_path=cli,
        system_prompt="You are a terse travel assistant for Portugal. Use the travel tools, the traveller's files "
                      "and the forecaster agent; never guess.",
        mcp_servers={SERVER: server}, agents={SUBAGENT: forecaster}, can_use_tool=can_use_tool,
        allowed_tools=[WEATHER_TOOL, FORECAST_TOOL, READ_TOOL, AGENT_TOOL], tools=[READ_TOOL, AGENT_TOOL],
    )


def main() -> None:
    Path(TRIP_DIR).mkdir(parents=True, exist_ok=True)
    Path(ITINERARY).write_text(ITINERARY_TEXT)
    with Recording(Path(__file__).parent, REPLIES, framework="claude-agent-sdk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.claude_agent_sdk import ClaudeAgentSDKInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(rec.otlp_endpoint + "/v1/traces")))
        ClaudeAgentSDKInstrumentor().instrument(tracer_provider=provider)
        run_claude_code(rec, QUESTIONS, options, telemetry={})
        rec.flush(provider)


if __name__ == "__main__":
    main()
