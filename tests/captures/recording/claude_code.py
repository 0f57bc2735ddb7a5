"""`run_claude_code`: record Claude Code's own OpenTelemetry export, the CLI driven by the Claude Agent SDK.

The `claude-code_*` captures' `record.py` scripts hold their scenario (the replies, the questions, the tools and
`ClaudeAgentOptions`); this module does the rest, the same for all of them:

    with Recording(capture_dir, REPLIES, framework="claude-code", instrumentation="native", packages=PACKAGES,
                   session_id=SESSION_ID, notes=NOTES) as rec:
        run_claude_code(rec, QUESTIONS, options)   # options(home, cli) -> ClaudeAgentOptions

The CLI (npm `@anthropic-ai/claude-code`) is the one named by CLAUDE_CODE_CLI; without it the SDK runs the CLI
bundled in its wheel. Its version goes into `rec.meta["versions"]`. The environment the CLI inherits: the
Recording's (`rec.env()`: ANTHROPIC_BASE_URL at the fake LLM, the recorder's OTLP endpoints), a temporary
directory as CLAUDE_CONFIG_DIR (also the `home` given to `options`, for its `cwd`), nonessential traffic, error
reporting and the autoupdater off, CLAUDE_CODE_TOTAL_TOKENS_REMINDER=off (a `<system-reminder>` Claude Code
otherwise appends to the last tool result of each batch it sends the model), and `TELEMETRY`. `options` is
called after all that is set, so it may import `claude_agent_sdk` itself. Then one `ClaudeSDKClient` asks the
questions in turn, each answered to the end (`receive_response`), printing the messages.

Standard library only, like the rest of `recording/` (`claude_agent_sdk` is imported inside `run_claude_code`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

from .session import Recording

PACKAGES = ["@anthropic-ai/claude-code", "claude-agent-sdk"]
TELEMETRY = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",  # traces: claude_code.interaction / llm_request / tool spans
    "OTEL_TRACES_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOG_USER_PROMPTS": "1", "OTEL_LOG_ASSISTANT_RESPONSES": "1", "OTEL_LOG_TOOL_DETAILS": "1",
    "OTEL_LOG_TOOL_CONTENT": "1", "OTEL_LOG_RAW_API_BODIES": "1",
    # Short intervals: the CLI exits when the SDK closes it, nothing may be left in a batch.
    "OTEL_BSP_SCHEDULE_DELAY": "200", "OTEL_BLRP_SCHEDULE_DELAY": "200", "OTEL_LOGS_EXPORT_INTERVAL": "200",
    "OTEL_METRIC_EXPORT_INTERVAL": "1000", "OTEL_SERVICE_NAME": "weather-agent",
}


def run_claude_code(rec: Recording, questions: list[str], options: Callable[[str, str | None], Any], *,
                    telemetry: Mapping[str, str] = TELEMETRY) -> None:
    """Ask `questions` in one Claude Code session, its options `options(home, cli)`, under `rec`.

    `telemetry`: the CLI's own export flags; none (`{}`) for a capture of what an instrumentation of the SDK
    records, with the CLI exporting nothing beside it."""
    cli = os.environ.get("CLAUDE_CODE_CLI")
    with tempfile.TemporaryDirectory() as home:
        rec.env()
        rec.meta["versions"] = {"@anthropic-ai/claude-code": cli_version(cli)}
        os.environ.update({"CLAUDE_CONFIG_DIR": home, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                           "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                           "CLAUDE_CODE_TOTAL_TOKENS_REMINDER": "off", **telemetry})
        from claude_agent_sdk import ClaudeSDKClient

        client_options = options(home, cli)

        async def run() -> None:
            async with ClaudeSDKClient(options=client_options) as client:
                for question in questions:
                    await client.query(question)
                    async for message in client.receive_response():
                        print(type(message).__name__, str(message)[:160])

        asyncio.run(run())
        # No provider in this process to flush (rec.flush): the CLI shuts its exporters down as it exits, which
        # the SDK waits for when the client closes; the short schedule delays above leave nothing behind. A
        # moment more for the recorder to have written the last request.
        time.sleep(1.0)


def cli_version(cli: str | None) -> str:
    """The Claude Code CLI's version: `cli --version`, or the one bundled in the SDK's wheel (cli None)."""
    if cli is None:
        from claude_agent_sdk._cli_version import __cli_version__
        return f"{__cli_version__} (bundled)"
    return subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout.split()[0]
