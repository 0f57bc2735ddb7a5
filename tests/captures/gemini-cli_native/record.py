"""Re-record: Google's Gemini CLI and its own OpenTelemetry export (log events and trace spans).

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/gemini-cli_native/record.py

It writes a small Node script into a temporary directory and, there, `npm install @google/gemini-cli@0.61.0`,
then runs the CLI twice with the Recording's fakes (`recording/node.py`): `gemini --session-id <SESSION_ID> -p
<question 1> --yolo`, then `gemini --resume <SESSION_ID> -p <question 2> --yolo` (the same session, its history
re-sent). No instrumentation package: the CLI exports its own telemetry, configured in `~/.gemini/settings.json`
(`telemetry`: `enabled`, `target: local`, `otlpEndpoint` the recorder, `otlpProtocol: http` (OTLP/JSON over HTTP
for logs, traces and metrics; replay skips metrics), `logPrompts`, and `traces` on: the `llm_call`,
`schedule_tool_calls` and `tool_call` spans with their content). Each run has a temporary HOME (its settings, the
session's chat record the resume reads) and works in a temporary project directory holding `README.md` and
`tides.py`.

The model: API-key auth (`GEMINI_API_KEY=fake`, `security.auth.selectedType: gemini-api-key`) with
`GOOGLE_GEMINI_BASE_URL` at the fake LLM (the Gemini API's `generateContent` / `streamGenerateContent`). The model
is left `auto`: each question is first given to the CLI's router (`NumericalClassifierStrategy`, role
`utility_router`: a non-streamed JSON call to gemini-3.5-flash-lite scoring the question's complexity), which picks
the model for the turn (a low score: gemini-3.8-flash). No other network: usage statistics, auto-update and its
notification off in the settings, the workspace trusted (`GEMINI_CLI_TRUST_WORKSPACE=true`), and HTTP(S)_PROXY at a
closed local port for anything else (NO_PROXY for the fakes).

The run: question 1, "What does this project do? Check its readme.": the router's score; then thoughts (`thought:
true` parts, thoughtsTokenCount), text and `list_directory`; `read_file` of `readme.md`, which fails (the file is
`README.md`: "File not found", sent the model as the functionResponse's `error`); text and `read_file` of
`README.md`; the answer (cache reads). Question 2 (resumed), "How many lines does tides.py have?": the router's
score (shown the whole history); `run_shell_command` `wc -l tides.py`; the answer (cache reads).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

PINS = {"@google/gemini-cli": "0.61.0"}
SESSION_ID = "4f1c2b7e-9a3d-4e6f-8b21-5c0d7e9a1f34"  # `--session-id` takes a UUID-like id
QUESTIONS = ["What does this project do? Check its readme.", "How many lines does tides.py have?"]
FILES = {"README.md": "# Tides\nPrints tomorrow's high tide for Lisbon.\n",
         "tides.py": "import datetime\n\nprint('High tide tomorrow: 14:32')\n"}
# The router's answer (its `responseJsonSchema`): a low score picks the flash model for the turn.
ROUTED = '{"complexity_reasoning": "A simple read-only question about the project.", "complexity_score": 12}'
REPLIES: list[dict[str, Any]] = [
    {"text": ROUTED},
    {"reasoning": "The user asks what the project does. I should look at its files first, then read the readme.",
     "reasoning_tokens": 48, "text": "I'll list the project first.",
     "tool_calls": [{"name": "list_directory", "arguments": {"dir_path": "."}}], "output_tokens": 70},
    {"text": "", "tool_calls": [{"name": "read_file", "arguments": {"file_path": "readme.md"}}],
     "when": "Directory listing"},
    {"text": "The file name is upper case; reading README.md.",
     "tool_calls": [{"name": "read_file", "arguments": {"file_path": "README.md"}}], "when": "File not found"},
    {"text": "This project prints tomorrow's high tide for Lisbon (tides.py).", "when": "high tide for Lisbon",
     "input_tokens": 11900, "cache_read_tokens": 8192},
    {"text": ROUTED},
    {"text": "", "tool_calls": [{"name": "run_shell_command",
                                 "arguments": {"command": "wc -l tides.py",
                                               "description": "Count the lines of tides.py"}}],
     "input_tokens": 12050, "cache_read_tokens": 11264},
    {"text": "tides.py has 3 lines.", "when": "run_shell_command", "input_tokens": 12170, "cache_read_tokens": 11264},
]
NOTES = ("Gemini CLI's own OTel export (settings.json telemetry: local target, OTLP/JSON over HTTP, logPrompts, "
         "traces on), non-interactive (-p, --yolo), model auto: each question first scored by the CLI's router "
         "(utility_router, gemini-3.5-flash-lite, JSON), then gemini-3.8-flash streamed. Turn 1: thoughts, text and "
         "list_directory; read_file of a missing file (error); text and read_file; the answer. Turn 2 (--resume): "
         "run_shell_command; the answer.")

SCRIPT = r"""
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = mkdtempSync(join(tmpdir(), "gemini-cli-"));
const home = join(root, "home"), project = join(root, "tides");
mkdirSync(join(home, ".gemini"), { recursive: true });
mkdirSync(project);
for (const [name, text] of Object.entries(JSON.parse(process.env.CAPTURE_FILES))) {
  writeFileSync(join(project, name), text);
}
writeFileSync(join(home, ".gemini", "settings.json"), process.env.CAPTURE_SETTINGS);
// Only what the CLI needs: no OTEL_* variable of the Recording's (the settings name the endpoint).
const env = {
  PATH: process.env.PATH, HOME: home, TERM: "dumb", GEMINI_API_KEY: "fake",
  GOOGLE_GEMINI_BASE_URL: process.env.CAPTURE_GEMINI_BASE_URL, GEMINI_CLI_TRUST_WORKSPACE: "true",
  HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9", NO_PROXY: "127.0.0.1,localhost",
};
const gemini = join(process.cwd(), "node_modules", ".bin", "gemini");
const session = process.env.CAPTURE_SESSION_ID;
const [first, second] = JSON.parse(process.env.CAPTURE_QUESTIONS);
for (const args of [["--session-id", session, "-p", first], ["--resume", session, "-p", second]]) {
  execFileSync(gemini, [...args, "--yolo"], { cwd: project, env, stdio: "inherit", timeout: 240000 });
}
"""


def settings(otlp_endpoint: str) -> dict[str, Any]:
    return {"telemetry": {"enabled": True, "target": "local", "otlpEndpoint": otlp_endpoint, "otlpProtocol": "http",
                          "logPrompts": True, "traces": True},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}}}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="gemini-cli", instrumentation="native",
                   packages=list(PINS), session_id=SESSION_ID, notes=NOTES) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={
            "CAPTURE_SESSION_ID": SESSION_ID, "CAPTURE_QUESTIONS": json.dumps(QUESTIONS),
            "CAPTURE_FILES": json.dumps(FILES), "CAPTURE_SETTINGS": json.dumps(settings(rec.otlp_endpoint)),
            "CAPTURE_GEMINI_BASE_URL": rec.base_url.removesuffix("/v1")})


if __name__ == "__main__":
    main()
