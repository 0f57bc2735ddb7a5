"""Re-record: Claude Code's own OpenTelemetry export of a session compacting its context (`/compact`), driven by the
Claude Agent SDK.

    python3 -m venv /tmp/cap-claude-code_native_compaction
    /tmp/cap-claude-code_native_compaction/bin/pip install claude-agent-sdk==0.2.190
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.337)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-code_native_compaction/bin/python tests/captures/claude-code_native_compaction/record.py

The pins, telemetry flags and environment of `claude-code_native` (its docstring says why each; all the
`claude-code_*` scripts take them, and the client's run of the questions, from `recording/claude_code.py`): the
CLI's own export, traces (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1) and log events over OTLP/HTTP protobuf, every
content flag on, the raw API bodies inline. The CLI is the newest on npm (2.1.337; the other captures' 2.1.332),
the SDK the newest on PyPI; what matters of the virtualenv's `pip freeze`: claude-agent-sdk==0.2.190 and mcp==2.3.0
(its in-process MCP server's), both in meta.json. Every request Claude Code sends the Messages API is streamed.

What differs is a compaction: between two questions of one session (the SDK's `session_id` option, Claude Code's
session id) the client sends Claude Code's own `/compact` command, as the Agent SDK's docs show for slash commands
(`client.query("/compact")`). Claude Code then asks the model, in a request of its own, for a summary of the
conversation so far (its summary prompt the request's last message, asking for an `<analysis>` and a `<summary>`
block); the fake LLM answers as a model does, both blocks. The next question's requests are sent that summary
(Claude Code's "This session is being continued from a previous conversation…" message) in place of the
conversation it summarized.

Turn one: text and two parallel `get_weather` calls (Porto raises: the SDK sends the model its message as an
`is_error` tool result), text and a retry, the answer. `/compact`: the summary. Turn two: one `get_forecast` call,
the answer. Each reply is matched by the request's last message (`when`), so a request the script did not foresee
fails loudly instead of taking another's reply.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import PACKAGES, run_claude_code
from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "b2e7c4a9-5d31-4f08-9a6e-3c8f1d72e5b4"  # Claude Code session ids are UUIDs
SERVER = "weather"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
COMPACT = "/compact"  # Claude Code's command: summarize the conversation, carry on from the summary
QUESTIONS = ["What is the weather like in Lisbon and Porto right now?",
             COMPACT,
             "Will it be warm enough for the beach in Lisbon tomorrow?"]
# Claude Code's summary prompt, the compaction request's last message (what its reply is matched by).
SUMMARY_PROMPT = "Your task is to create a detailed summary of the conversation so far"
# The model's answer to it: the analysis, then the summary (the blocks and sections Claude Code's prompt asks for).
SUMMARY_ANSWER = (
    "<analysis>\n"
    "The user asked for the current weather in Lisbon and Porto. I called get_weather for both cities at once; "
    "the Porto lookup timed out, so I retried it, and it then answered. I reported both results.\n"
    "</analysis>\n\n"
    "<summary>\n"
    "1. Primary Request and Intent: the user wants the current weather in Lisbon and Porto.\n"
    "2. Key Technical Concepts: the weather MCP server's get_weather and get_forecast tools.\n"
    "3. Errors and fixes: the first Porto lookup timed out; a retry succeeded.\n"
    "4. All user messages: \"What is the weather like in Lisbon and Porto right now?\"\n"
    "5. Current Work: answered: Lisbon is sunny at 24 degrees C, Porto cloudy at 18 degrees C.\n"
    "6. Pending Tasks: none.\n"
    "</summary>"
)
REPLIES: list[dict[str, Any]] = [
    # The fake LLM matches `when` against the last message as JSON: ASCII only, `°` is escaped there.
    {"text": "I'll check both cities at once.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Lisbon"}},
                    {"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "when": "Lisbon and Porto right now", "input_tokens": 2400, "output_tokens": 64},
    {"text": "The Porto lookup timed out; trying again.",
     "tool_calls": [{"name": WEATHER_TOOL, "arguments": {"city": "Porto"}}],
     "when": "weather service timed out", "input_tokens": 2550, "output_tokens": 38},
    {"text": "Lisbon is sunny at 24°C; Porto is cloudy at 18°C.", "when": "cloudy, 18",
     "input_tokens": 2640, "output_tokens": 21},
    {"text": SUMMARY_ANSWER, "when": SUMMARY_PROMPT, "input_tokens": 2900, "output_tokens": 180},
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": "beach in Lisbon tomorrow", "input_tokens": 1900, "output_tokens": 30},
    {"text": "Yes: tomorrow Lisbon will be sunny with a high of 27°C, good beach weather.",
     "when": "day(s): sunny, high 27", "input_tokens": 2000, "output_tokens": 22},
]
NOTES = ("Claude Code's own OTel export (enhanced telemetry beta traces + log events, every content flag on, raw "
         "API bodies inline), driven by a ClaudeSDKClient: one session, an in-process MCP server with two tools, "
         "Claude Code's /compact between its two questions. Turn one: text and two parallel get_weather calls "
         "(Porto raising: an is_error tool result), text and a retry, the answer; /compact: Claude Code's summary "
         "request, answered with an <analysis> and a <summary>; turn two (sent the summary in place of turn one): "
         "get_forecast, the answer.")
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
                   packages=[*PACKAGES, "mcp"], session_id=SESSION_ID, notes=NOTES) as rec:
        run_claude_code(rec, QUESTIONS, options)


if __name__ == "__main__":
    main()
