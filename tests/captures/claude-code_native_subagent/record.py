"""Re-record: Claude Code's own OpenTelemetry export of a subagent run, driven by the Claude Agent SDK.

    python3 -m venv /tmp/cap-claude-agent && /tmp/cap-claude-agent/bin/pip install claude-agent-sdk==0.2.190
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.332)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-agent/bin/python tests/captures/claude-code_native_subagent/record.py

The pins, telemetry flags and environment of `claude-code_native` (its docstring says why each; both scripts
take them, and the client's run of the questions, from `recording/claude_code.py`): the CLI's own export, traces
(CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1) and log events over OTLP/HTTP protobuf, every content flag on, the raw
API bodies inline.

What differs is a subagent: the SDK's `agents=` option defines one (`AgentDefinition`, sent to the CLI in the
initialize request), `forecaster`, whose tools are the in-process MCP server's `get_forecast` alone, and the
main agent is given Claude Code's built-in `Agent` tool (the one that launches subagents: `Task` in older
CLIs; `tools=["Agent"]`, the MCP tools beside it). The main agent calls it with `run_in_background: false`
(the CLI runs subagents in the background by default, its result then a later notification): the subagent's
requests go out with its own system prompt, and their replies are matched by their last message (`when`).

Turn one: the main agent answers with text and two parallel calls, `get_weather` for Lisbon and `Agent`
(forecaster); the subagent calls `get_forecast`, which raises once (the SDK sends its message as an `is_error`
tool result), says so and calls it again, then reports; the main agent answers with both. Turn two, in the same
session (the SDK's `session_id` option, Claude Code's session id): one `get_weather` call for Porto, the answer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import PACKAGES, run_claude_code
from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "4c1e8a52-7b3d-4f96-a0e2-5d9b6c3f1a87"  # Claude Code session ids are UUIDs
SERVER = "weather"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
AGENT_TOOL = "Agent"  # Claude Code's subagent launcher, as the CLI lists it in the request's tools
SUBAGENT = "forecaster"
SUBAGENT_TASK = "Get tomorrow's forecast for Lisbon and say whether it is beach weather."
QUESTIONS = ["What is the weather in Lisbon now, and will tomorrow be warm enough for the beach?",
             "And what is it like in Porto right now?"]
REPLIES: list[dict[str, Any]] = [
    {"text": "I'll check Lisbon now and ask the forecaster about tomorrow.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Lisbon"}},
                    {"name": AGENT_TOOL, "arguments": {"description": "Lisbon beach forecast",
                                                       "prompt": SUBAGENT_TASK, "subagent_type": SUBAGENT,
                                                       "run_in_background": False}}],
     "input_tokens": 3100, "output_tokens": 88},
    # The subagent: its first request's last message is the task it was given, then its tool results. (The fake
    # LLM matches `when` against the last message as JSON: ASCII only, `°` is escaped there.)
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": SUBAGENT_TASK, "input_tokens": 1200, "output_tokens": 30},
    {"text": "The forecast service timed out; trying again.",
     "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": "forecast service timed out", "input_tokens": 1290, "output_tokens": 36},
    {"text": "Tomorrow Lisbon will be sunny with a high of 27°C: beach weather.",
     "when": "day(s): sunny, high 27", "input_tokens": 1360, "output_tokens": 20},
    # The main agent again, shown both results (the Agent call's is the subagent's report).
    {"text": "Lisbon is sunny at 24°C now, and tomorrow will be sunny with a high of 27°C: good beach weather.",
     "when": "sunny with a high of 27", "input_tokens": 3300, "output_tokens": 26},
    {"text": "", "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "when": "Porto", "input_tokens": 3400, "output_tokens": 24},
    {"text": "Porto is cloudy at 18°C right now.", "when": "cloudy, 18", "input_tokens": 3480,
     "output_tokens": 12},
]
NOTES = ("Claude Code's own OTel export (enhanced telemetry beta traces + log events, every content flag on, raw "
         "API bodies inline), driven by a ClaudeSDKClient: two queries of one session, an in-process MCP server "
         "with two tools and a subagent (`agents=`, AgentDefinition `forecaster`) the main agent launches with "
         "Claude Code's Agent tool. Turn one: text and parallel get_weather + Agent calls; the subagent's "
         "get_forecast raising once (an is_error tool result), text and a retry, its report; the main agent's "
         "answer. Turn two: get_weather, the answer.")
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}


def options(home: str, cli: str | None) -> Any:
    from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, create_sdk_mcp_server, tool

    failures = {"Lisbon": 1}  # the forecast service times out on the first Lisbon lookup

    @tool("get_weather", "The current weather in a city", {"city": str})
    async def get_weather(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": WEATHER[args["city"]]}]}

    @tool("get_forecast", "The forecast for a city, some days ahead", {"city": str, "days": int})
    async def get_forecast(args: dict[str, Any]) -> dict[str, Any]:
        city = args["city"]
        if failures.get(city):
            failures[city] -= 1
            raise TimeoutError(f"forecast service timed out for {city}")
        return {"content": [{"type": "text", "text": f"{city} in {args['days']} day(s): sunny, high 27°C"}]}

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
    with Recording(Path(__file__).parent, REPLIES, framework="claude-code", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        run_claude_code(rec, QUESTIONS, options)


if __name__ == "__main__":
    main()
