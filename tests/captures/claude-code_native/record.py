"""Re-record: Claude Code's own OpenTelemetry export (traces and log events), driven by the Claude Agent SDK.

    python3 -m venv /tmp/cap-claude-agent && /tmp/cap-claude-agent/bin/pip install claude-agent-sdk==0.2.190
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.332)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-agent/bin/python tests/captures/claude-code_native/record.py

No instrumentation package: the Claude Code CLI exports its own telemetry (OpenTelemetry JS inside the CLI)
when CLAUDE_CODE_ENABLE_TELEMETRY=1, here traces (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1, OTEL_TRACES_EXPORTER=otlp)
and log events (OTEL_LOGS_EXPORTER=otlp), OTLP/HTTP protobuf to the recorder; no metrics (replay skips them).
The content flags are all on: OTEL_LOG_USER_PROMPTS, OTEL_LOG_ASSISTANT_RESPONSES, OTEL_LOG_TOOL_DETAILS,
OTEL_LOG_TOOL_CONTENT and OTEL_LOG_RAW_API_BODIES=1 (the Messages API request and response bodies, inline, as
`claude_code.api_request_body` / `claude_code.api_response_body` log events).

The run is the one of claude-agent-sdk_openinference: a ClaudeSDKClient with an in-process MCP server
(`@tool` + `create_sdk_mcp_server`) of two tools, `get_weather` (raises on the first Porto lookup: the SDK
sends the model its message as an `is_error` tool result) and `get_forecast`; two queries of one session
(the SDK's `session_id` option, Claude Code's session id). Turn one: text and two parallel get_weather calls
(Porto fails), then text and a retry, then the answer; turn two: one get_forecast call, then the answer.

The CLI (npm `@anthropic-ai/claude-code`, its platform binary an npm optional dependency) is named by
CLAUDE_CODE_CLI; without it the SDK runs the CLI bundled in its wheel. Its config dir and working directory are
a temporary directory. Disabled: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_ERROR_REPORTING,
DISABLE_AUTOUPDATER; and CLAUDE_CODE_TOTAL_TOKENS_REMINDER=off (a `<system-reminder>` Claude Code otherwise
appends to the last tool result of each batch it sends the model). That environment, the telemetry flags and
the client's run of the questions are `recording/claude_code.py`'s (`run_claude_code`), shared with the other
`claude-code_*` captures; this script holds the scenario: the replies, the questions, the tools and options.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import PACKAGES, run_claude_code
from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "9d3f2c71-6a0e-4b58-8c2d-1e7a4f90b6c5"  # Claude Code session ids are UUIDs
SERVER = "weather"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
QUESTIONS = ["What is the weather like in Lisbon and Porto right now?",
             "Will it be warm enough for the beach in Lisbon tomorrow?"]
REPLIES: list[dict[str, Any]] = [
    {"text": "I'll check both cities at once.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Lisbon"}},
                    {"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "input_tokens": 2400, "output_tokens": 64},
    {"text": "The Porto lookup timed out; trying again.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "input_tokens": 2550, "output_tokens": 38},
    {"text": "Lisbon is sunny at 24°C; Porto is cloudy at 18°C.", "input_tokens": 2640, "output_tokens": 21},
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": "beach", "input_tokens": 2700, "output_tokens": 30},
    {"text": "Yes: tomorrow Lisbon will be sunny with a high of 27°C, good beach weather.",
     "input_tokens": 2800, "output_tokens": 22},
]
NOTES = ("Claude Code's own OTel export (enhanced telemetry beta traces + log events, every content flag on, raw "
         "API bodies inline), driven by a ClaudeSDKClient: two queries of one session, an in-process MCP server "
         "with two tools. Turn one: text and two parallel get_weather calls (Porto raising: an is_error tool "
         "result), text and a retry, the answer; turn two: get_forecast, the answer.")
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}


def options(home: str, cli: str | None) -> Any:
    from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool

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
        return {"content": [{"type": "text", "text": f"{args['city']} in {args['days']} day(s): sunny, high 27°C"}]}

    server = create_sdk_mcp_server(SERVER, "1.0.0", tools=[get_weather, get_forecast])
    return ClaudeAgentOptions(
        model=MODEL, session_id=SESSION_ID, cwd=home, cli_path=cli,
        system_prompt="You are a terse travel assistant for Portugal. Use the weather tools; never guess.",
        mcp_servers={SERVER: server}, allowed_tools=[WEATHER_TOOL, FORECAST_TOOL], tools=[],
    )


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="claude-code", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        run_claude_code(rec, QUESTIONS, options)


if __name__ == "__main__":
    main()
