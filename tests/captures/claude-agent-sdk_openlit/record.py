"""Re-record: a Claude Agent SDK session (the Claude Code CLI under it) traced by OpenLIT's instrumentation of it.

    python3 -m venv /tmp/cap-claude-agent-sdk_openlit && /tmp/cap-claude-agent-sdk_openlit/bin/pip install -U pip && \
        /tmp/cap-claude-agent-sdk_openlit/bin/pip install claude-agent-sdk==0.2.190 openlit==1.45.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.332)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-agent-sdk_openlit/bin/python tests/captures/claude-agent-sdk_openlit/record.py

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture on by default) builds
the tracer, logger and meter providers, all to the endpoint (the recorder), and instruments every library it
finds: here its Claude Agent SDK instrumentation, which wraps `ClaudeSDKClient.connect` (a `create_agent` span),
`ClaudeSDKClient.query` (keeps the prompt) and `ClaudeSDKClient.receive_response` (one `invoke_agent` span a turn,
`chat` spans it makes up from the SDK's messages, `execute_tool` spans from hooks it adds to the options). The
model calls are made by the CLI, a Node process OpenLIT does not see: what the capture shows is what OpenLIT
makes of the SDK's message stream. Claude Code's own telemetry is off (`telemetry={}`: the `claude-code_native*`
captures record it); the rest of the CLI's environment and the client's run of the questions are
`recording/claude_code.py`'s (`run_claude_code`), like the other captures of the CLI.

The scenario: a ClaudeSDKClient with an in-process MCP server (`@tool` + `create_sdk_mcp_server`) of two tools,
`get_weather` (raises on the first Porto lookup: the SDK sends the model its message as an `is_error` tool
result) and `get_forecast`, and a subagent (`agents=`: `AgentDefinition` `forecaster`, holding `get_forecast`)
launched with Claude Code's `Agent` tool (`run_in_background: false`, as in `claude-code_native_subagent`). Two
queries of one session (the SDK's `session_id` option, Claude Code's session id, which OpenLIT records as
`gen_ai.conversation.id`). Turn one: text and two parallel calls, `get_weather` (Porto, failing) and
`get_forecast` (Lisbon); text and a retry of `get_weather`; the answer. Turn two: an `Agent` call to the
forecaster, whose `get_forecast` call and report are its own requests; the main agent's answer. The CLI streams
every Messages API call; the replies are matched by the request's last message (`when`), so the subagent's
requests get its own. Recorded offline: OpenLIT's pricing table is unreachable.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import run_claude_code
from tests.captures.recording.session import Recording

PACKAGES = ["@anthropic-ai/claude-code", "claude-agent-sdk", "openlit", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
MODEL = "claude-sonnet-4-5"
SESSION_ID = "2b7e4d19-5c83-4a6f-9e10-8d3c7a25f4b6"  # Claude Code session ids are UUIDs
SERVER = "weather"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
AGENT_TOOL = "Agent"  # Claude Code's subagent launcher, as the CLI lists it in the request's tools
SUBAGENT = "forecaster"
SUBAGENT_TASK = "Get tomorrow's forecast for Porto and say whether it is beach weather."
QUESTIONS = ["What is the weather in Porto right now, and the forecast for Lisbon tomorrow?",
             "Ask the forecaster whether Porto will be beach weather tomorrow."]
# Every reply names the request it answers (`when`: a text of its last message, as JSON: ASCII only, `°` is
# escaped there).
REPLIES: list[dict[str, Any]] = [
    {"text": "I'll check Porto now and Lisbon's forecast at once.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}},
                    {"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": "the forecast for Lisbon tomorrow", "input_tokens": 2400, "output_tokens": 64},
    {"text": "The Porto lookup timed out; trying again.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "when": "weather service timed out", "input_tokens": 2550, "output_tokens": 38},
    {"text": "Porto is cloudy at 18°C now; tomorrow Lisbon will be sunny with a high of 27°C.",
     "when": "cloudy, 18", "input_tokens": 2640, "output_tokens": 24},
    {"text": "", "tool_calls": [{"name": AGENT_TOOL, "arguments": {"description": "Porto beach forecast",
                                                                  "prompt": SUBAGENT_TASK, "subagent_type": SUBAGENT,
                                                                  "run_in_background": False}}],
     "when": "Ask the forecaster", "input_tokens": 2700, "output_tokens": 40},
    # The subagent: its first request's last message is the task it was given, then its tool result.
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Porto", "days": 1}}],
     "when": SUBAGENT_TASK, "input_tokens": 1200, "output_tokens": 30},
    {"text": "Tomorrow Porto will be cloudy with a high of 19°C: not beach weather.",
     "when": "Porto in 1 day(s)", "input_tokens": 1300, "output_tokens": 20},
    # The main agent again, shown the Agent call's result (the subagent's report).
    {"text": "No: the forecaster says Porto will be cloudy tomorrow with a high of 19°C, not beach weather.",
     "when": "high of 19", "input_tokens": 2850, "output_tokens": 26},
]
NOTES = ("openlit.init(otlp_endpoint=recorder): its claude_agent_sdk instrumentation (create_agent, one "
         "invoke_agent span a turn, chat spans made up from the SDK's messages, execute_tool spans from hooks; + "
         "log records, + metrics); Claude Code's own telemetry off. A ClaudeSDKClient, two queries of one session, "
         "an in-process MCP server with two tools and a subagent (AgentDefinition `forecaster`). Turn one: text and "
         "parallel get_weather (Porto raising: an is_error tool result) + get_forecast, text and a retry, the "
         "answer; turn two: an Agent call, the forecaster's get_forecast and report, the answer. Recorded offline: "
         "OpenLIT's pricing table unreachable")
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
FORECAST = {"Lisbon": "sunny, high 27°C", "Porto": "cloudy, high 19°C"}


def options(home: str, cli: str | None) -> Any:
    from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, create_sdk_mcp_server, tool

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

    server = create_sdk_mcp_server(SERVER, "1.0.0", tools=[get_weather, get_forecast])
    forecaster = AgentDefinition(
        description="Looks up weather forecasts for Portuguese cities and judges them for the beach.",
        prompt="You are a forecaster. Use get_forecast; never guess. Report in one sentence.",
        tools=[FORECAST_TOOL],
    )
    return ClaudeAgentOptions(
        model=MODEL, session_id=SESSION_ID, cwd=home, cli_path=cli,
        system_prompt="You are a terse travel assistant for Portugal. Use the weather tools and the "
                      "forecaster agent; never guess.",
        mcp_servers={SERVER: server}, agents={SUBAGENT: forecaster},
        allowed_tools=[WEATHER_TOOL, FORECAST_TOOL, AGENT_TOOL], tools=[AGENT_TOOL],
    )


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="claude-agent-sdk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="portugal-travel", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        run_claude_code(rec, QUESTIONS, options, telemetry={})
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
