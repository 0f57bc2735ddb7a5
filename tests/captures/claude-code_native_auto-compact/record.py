"""Re-record: Claude Code's own OpenTelemetry export of a session that compacts its context automatically in the
middle of a turn (auto-compact), driven by the Claude Agent SDK.

    python3 -m venv /tmp/cap-claude-code_native_auto-compact
    /tmp/cap-claude-code_native_auto-compact/bin/pip install claude-agent-sdk==0.2.190
    mkdir -p /tmp/cap-claude-code && (cd /tmp/cap-claude-code && npm install @anthropic-ai/claude-code@2.1.337)
    CLAUDE_CODE_CLI=/tmp/cap-claude-code/node_modules/.bin/claude \
        /tmp/cap-claude-code_native_auto-compact/bin/python tests/captures/claude-code_native_auto-compact/record.py

The pins, telemetry flags and environment of `claude-code_native_compaction` (the CLI the newest on npm, 2.1.337; the
SDK the newest on PyPI; all the `claude-code_*` scripts take the CLI's own export, traces and log events over OTLP/HTTP
protobuf, every content flag on, the raw API bodies inline, and the client's run of the questions from
`recording/claude_code.py`). What matters of the virtualenv's `pip freeze`: claude-agent-sdk==0.2.190 and mcp==2.3.0
(its in-process MCP server's), both in meta.json. Every request Claude Code sends the Messages API is streamed.

What differs from `claude-code_native_compaction` is who compacts, and when: nobody sends `/compact`; Claude Code
compacts on its own (auto-compact) while turn one is still running its tools. Its threshold is the model's context
window less the answer's reserve (200,000 - 20,000 tokens for claude-sonnet-4-5), or a percentage of it when
CLAUDE_AUTOCOMPACT_PCT_OVERRIDE says so (Claude Code's own settings, read by the CLI from its environment): 2% here, so
3,600 tokens. CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000 names the window too (the model's own): 2.1.337 does not
auto-compact while the window's source is its default, and the first recording, with the percentage alone, did not.
Before each request Claude Code counts the conversation from the last answer's usage, so the fake LLM's
scripted token counts decide where it compacts: the first answer reports 2,400 input tokens (under), the retry's
3,700 (over), so before the turn's next request Claude Code asks the model for a summary (its own request, query
source `compact`, its summary prompt appended to the last message), then carries the turn on from the summary.

Turn one: text and two parallel `get_weather` calls (Porto raises: the SDK sends the model its message as an
`is_error` tool result), text and a retry of Porto; auto-compact: the summary (an `<analysis>` and a `<summary>`, the
blocks Claude Code's prompt asks for); the turn's answer, sent the summary in place of the conversation. Turn two, in
the same session (the SDK's `session_id` option, Claude Code's session id): one `get_forecast` call, the answer. Each
reply is matched by the request's last message (`when`), so a request the script did not foresee fails loudly instead
of taking another's reply.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.claude_code import PACKAGES, run_claude_code
from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "5c0a8e21-7b4d-4e93-a1f6-2d9e8b3c7f10"  # Claude Code session ids are UUIDs
SERVER = "weather"
WEATHER_TOOL = f"mcp__{SERVER}__get_weather"
FORECAST_TOOL = f"mcp__{SERVER}__get_forecast"
QUESTIONS = ["What is the weather like in Lisbon and Porto right now?",
             "Will it be warm enough for the beach in Lisbon tomorrow?"]
# Auto-compact at 2% of the usable window (180,000 tokens): 3,600, between the first and the second answer's counts.
# The window named too: 2.1.337 does not auto-compact the SDK's session while its window is its own default ("auto").
AUTO_COMPACT = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "2"}
# Claude Code's summary prompt, the compaction request's last message (what its reply is matched by).
SUMMARY_PROMPT = "Your task is to create a detailed summary of the conversation so far"
# The model's answer to it: the analysis, then the summary (the blocks and sections Claude Code's prompt asks for).
SUMMARY_ANSWER = (
    "<analysis>\n"
    "The user asked for the current weather in Lisbon and Porto. I called get_weather for both cities at once; "
    "Lisbon answered, the Porto lookup timed out, so I retried it and it answered.\n"
    "</analysis>\n\n"
    "<summary>\n"
    "1. Primary Request and Intent: the user wants the current weather in Lisbon and Porto.\n"
    "2. Key Technical Concepts: the weather MCP server's get_weather and get_forecast tools.\n"
    "3. Errors and fixes: the first Porto lookup timed out; the retry answered.\n"
    "4. All user messages: \"What is the weather like in Lisbon and Porto right now?\"\n"
    "5. Current Work: Lisbon is sunny, 24 degrees C; Porto is cloudy, 18 degrees C; not yet reported to the user.\n"
    "6. Pending Tasks: report both cities' weather.\n"
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
     "when": "weather service timed out", "input_tokens": 3700, "output_tokens": 38},
    {"text": SUMMARY_ANSWER, "when": SUMMARY_PROMPT, "input_tokens": 3800, "output_tokens": 180},
    {"text": "Lisbon is sunny at 24°C; Porto is cloudy at 18°C.", "when": "cloudy, 18",
     "input_tokens": 1500, "output_tokens": 21},
    {"text": "", "tool_calls": [{"name": FORECAST_TOOL, "arguments": {"city": "Lisbon", "days": 1}}],
     "when": "beach in Lisbon tomorrow", "input_tokens": 1700, "output_tokens": 30},
    {"text": "Yes: tomorrow Lisbon will be sunny with a high of 27°C, good beach weather.",
     "when": "day(s): sunny, high 27", "input_tokens": 1800, "output_tokens": 22},
]
NOTES = ("Claude Code's own OTel export (enhanced telemetry beta traces + log events, every content flag on, raw "
         "API bodies inline), driven by a ClaudeSDKClient: one session, an in-process MCP server with two tools, "
         "auto-compact (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=2: 3,600 tokens) in the middle of turn one. Turn one: text "
         "and two parallel get_weather calls (Porto raising: an is_error tool result), text and a retry (its "
         "request reporting 3,700 input tokens); auto-compact: Claude Code's summary request, answered with an "
         "<analysis> and a <summary>; the turn's answer, sent the summary; turn two: get_forecast, the answer.")
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
    os.environ.update(AUTO_COMPACT)  # the CLI inherits it, as it does the telemetry flags
    with Recording(Path(__file__).parent, REPLIES, framework="claude-code", instrumentation="native",
                   packages=[*PACKAGES, "mcp"], session_id=SESSION_ID, notes=NOTES) as rec:
        run_claude_code(rec, QUESTIONS, options)


if __name__ == "__main__":
    main()
