"""Re-record: the OpenAI Codex CLI's own OpenTelemetry export (trace spans and log events), `codex exec` twice.

    mkdir -p /tmp/cap-codex && (cd /tmp/cap-codex && npm install @openai/codex@0.171.0)
    CODEX_CLI=/tmp/cap-codex/node_modules/.bin/codex python3 tests/captures/codex-cli_native/record.py

No instrumentation package and no virtualenv: the CLI (a Rust binary, npm's `@openai/codex-linux-x64` optional
dependency) exports its own telemetry when `$CODEX_HOME/config.toml`'s `[otel]` table names exporters: here
`exporter` (log events) and `trace_exporter` (spans), both `otlp-http` with `protocol = "binary"` (OTLP/HTTP
protobuf) to the recorder, `metrics_exporter = "none"` (its default sends metrics to OpenAI), `log_user_prompt`,
`log_agent_responses` and `log_sse_deltas` on (0.171 exports no answer text, reasoning or delta content with them
all the same: see meta.json's notes). `span_attributes` stamps `session.id` on every span: Codex's own
`conversation.id` is no session key evalkit reads, and without it each turn's trace is a session of its own.

The model is a `[model_providers.fake]` at the fake LLM (`base_url`, `wire_api = "responses"`, `env_key`), the
model `gpt-5.5` (one of the CLI's bundled model entries: its `exec_command` shell tool, reasoning summaries asked
for with `model_reasoning_summary = "auto"`). CODEX_HOME and HOME are a temporary directory, the working directory
another holding `greet.sh`; `--dangerously-bypass-approvals-and-sandbox` (no sandbox in the container); plugins,
apps, goals, subagents, image generation, web search, analytics and the update check off; HTTP(S)_PROXY at a port
that refuses (and counts) anything not at 127.0.0.1 (nothing tried with these settings).

Turn one (`codex exec --json`): reasoning, text and `ls`; text and `cat greeting.txt` (no such file: exits 1);
text and a `sed` edit of the typo, printing the file; the answer. Turn two (`codex exec resume <thread id>`, the
same session): reasoning and `bash greet.sh`; the answer.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

PACKAGES = ["@openai/codex"]
MODEL = "gpt-5.5"
SESSION_ID = "5b0e6f3a-2c41-4d8e-9a77-c3e1d28f4b90"
QUESTIONS = ["greet.sh should print a greeting but something is off. Have a look and fix it.",
             "Run it to confirm."]
EXEC = "exec_command"
REPLIES: list[dict[str, Any]] = [
    {"reasoning": "Start by seeing what is in the project.", "text": "Let me look at the project first.",
     "tool_calls": [{"name": EXEC, "arguments": {"cmd": "ls"}}], "input_tokens": 8600, "output_tokens": 40,
     "reasoning_tokens": 12},
    {"text": "Checking the greeting text file.",
     "tool_calls": [{"name": EXEC, "arguments": {"cmd": "cat greeting.txt"}}], "input_tokens": 8750,
     "output_tokens": 24},
    {"text": "No such file: the greeting is in greet.sh itself. Fixing the typo.",
     "tool_calls": [{"name": EXEC, "arguments": {"cmd": "sed -i 's/Helo/Hello/' greet.sh && cat greet.sh"}}],
     "input_tokens": 8900, "output_tokens": 46},
    {"text": "Fixed: greet.sh said \"Helo\"; it now prints \"Hello, world\".", "input_tokens": 9050,
     "output_tokens": 20},
    {"reasoning": "Running the script shows the fix works.", "text": "",
     "tool_calls": [{"name": EXEC, "arguments": {"cmd": "bash greet.sh"}}], "input_tokens": 9200,
     "output_tokens": 30, "reasoning_tokens": 9},
    {"text": "Confirmed: it prints \"Hello, world\".", "input_tokens": 9350, "output_tokens": 12},
]
NOTES = ("The Codex CLI's own OTel export (`[otel]` exporter and trace_exporter, otlp-http binary; log_user_prompt, "
         "log_agent_responses and log_sse_deltas on; span_attributes session.id), codex exec then codex exec resume "
         "of the same thread, model gpt-5.5 at a [model_providers] entry (wire_api responses). Turn one: reasoning, "
         "text and exec_command ls; text and cat of a missing file (exit 1); text and a sed edit; the answer. Turn "
         "two: reasoning and exec_command bash greet.sh; the answer. What 0.171 exports: tracing spans (hundreds a "
         "turn: one model_client.stream_responses_api per model call, one per tool dispatch named for the tool, "
         "session_task.turn with the turn's token sums) and log events (codex.user_prompt, codex.api_request, "
         "codex.tool_result with the call's arguments and output, linked to their turn's trace; codex.sse_event "
         "with each call's tokens, linked to no trace). No answer text or reasoning is exported.")


def config(llm: str, otlp: str) -> str:
    """`$CODEX_HOME/config.toml`: the fake provider, the telemetry, everything that would reach the network off."""
    return f'''model = "{MODEL}"
model_provider = "fake"
model_reasoning_summary = "auto"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.fake]
name = "Fake"
base_url = "{llm}"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"

[otel]
environment = "capture"
log_user_prompt = true
log_agent_responses = true
log_sse_deltas = true
exporter = {{ otlp-http = {{ endpoint = "{otlp}/v1/logs", protocol = "binary" }} }}
trace_exporter = {{ otlp-http = {{ endpoint = "{otlp}/v1/traces", protocol = "binary" }} }}
metrics_exporter = "none"

[otel.span_attributes]
"session.id" = "{SESSION_ID}"

[features]
plugins = false
apps = false
goals = false
multi_agent = false
image_generation = false

[analytics]
enabled = false
'''


class RefusingProxy:
    """An HTTP(S) proxy that refuses every request and keeps its first line: what the CLI tried to reach."""

    def __init__(self) -> None:
        self.tried: list[str] = []
        self.socket = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            connection, _ = self.socket.accept()
            with connection:
                self.tried.append(connection.recv(4096).split(b"\r\n")[0].decode(errors="replace"))
                connection.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")


def cli_version(cli: str) -> str:
    return subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]


def main() -> None:
    cli = os.environ.get("CODEX_CLI") or "codex"
    with Recording(Path(__file__).parent, REPLIES, framework="codex-cli", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec, \
            tempfile.TemporaryDirectory(prefix="codex-home-") as home, \
            tempfile.TemporaryDirectory(prefix="codex-work-") as work:
        rec.meta["versions"] = {"@openai/codex": cli_version(cli)}
        proxy = RefusingProxy()
        Path(home, "config.toml").write_text(config(rec.base_url, rec.otlp_endpoint))
        Path(work, "greet.sh").write_text('#!/bin/sh\necho "Helo, world"\n')
        env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "OPENAI_", "CODEX_"))}
        env.update({"CODEX_HOME": home, "HOME": home, "FAKE_OPENAI_API_KEY": "sk-fake",
                    "HTTP_PROXY": proxy.url, "HTTPS_PROXY": proxy.url, "ALL_PROXY": proxy.url,
                    "NO_PROXY": "127.0.0.1,localhost"})
        common = ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-C", work]
        first = run(cli, ["exec", *common, QUESTIONS[0]], env)
        thread = next(event["thread_id"] for event in first if event.get("type") == "thread.started")
        run(cli, ["exec", "resume", *common[:-2], thread, QUESTIONS[1]], env, cwd=work)
        rec.meta["thread_id"] = thread
        time.sleep(1.0)  # the CLI flushes its exporters as it exits; a moment for the recorder to write the last
        if proxy.tried:
            raise RuntimeError(f"the CLI tried the network: {proxy.tried}")


def run(cli: str, args: list[str], env: dict[str, str], cwd: str | None = None) -> list[dict[str, Any]]:
    """One `codex exec`, its `--json` events printed and returned."""
    done = subprocess.run([cli, *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    for event in events:
        print(json.dumps(event)[:200])
    if done.returncode != 0:
        raise RuntimeError(f"codex {args[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    return events


if __name__ == "__main__":
    main()
