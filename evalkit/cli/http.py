"""How the CLI talks to the service: URL and token discovery, one JSON call, printing.

Under `--json` stdout carries JSON only: the result, or (on failure) `{"error": {"message", "exit_code",
"status"}}`, with the same non-zero exit code as without `--json`. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from evalkit.service_address import NOT_THE_API_STATUSES, not_the_api, service_message

EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 1, 2, 3


class CliError(Exception):
    """A command that cannot go on; the message says why and what to do next.

    `status` is the HTTP status when the service refused a request (None otherwise), `detail` the service's
    own words, so that a command can say it in its own terms (`evalkit experiments list`, not a route)."""

    def __init__(self, message: str, code: int = EXIT_FAILED, status: int | None = None,
                 detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.detail = detail if detail is not None else message


# The service words its advice for every client; on the command line it is said with commands, not with
# Python keyword arguments or JSON bodies.
_CLI_WORDS: list[tuple[re.Pattern[str], str]] = [(re.compile(a), b) for a, b in (
    (r"`?run_experiment\(\.\.\., resume=(\d+)\)`? or (`evalkit run [^`]*--resume \1`)", r"\2"),
    (r"`?run_experiment\(\.\.\., resume=(\d+)\)`? \((?:or )?(`evalkit run [^`]*--resume \1`)\)", r"\2"),
    (r"`?evaluate_experiment\(experiment_id=(\d+), partial=True\)`? \((`evalkit evaluate \1 --partial`)\)", r"\2"),
    (r"`?run_experiment\(\.\.\., resume=(\d+)\)`?", r"`evalkit run DATASET --agent AGENT --resume \1`"),
    (r" or `evaluate_experiment\(experiment_id=(\d+)[^`]*\)`", ""),  # scoring_hint.finish_scoring_hint's
    (r" or `?run_experiment\(\.\.\., resume=(\d+), take_over=True\)`?", ""),
    (r"add --take-over \(take_over=True\)", "add --take-over"),  # sdk/lease.py's lease not given back
    (r"with \"partial\": true \(`evaluate_experiment\(experiment_id=(\d+), partial=True\)`\)",
     r"with `evalkit evaluate \1 --partial`"),
    (r"with \"partial\": true \((`evalkit evaluate [^`]*--partial[^`]*`)\)", r"with \1"),
    (r"allow_incomplete=true \(`--allow-incomplete`\)", "`--allow-incomplete`"),
    (r"pass allow_incomplete=true", "pass --allow-incomplete"),
    (r"`PATCH /api/agents/([^`]+)` \{\"archived\": false\}", r"`evalkit agents set \1 --unarchive`"),
    (r"list yours with `GET /api/experiments`", "list them with `evalkit experiments list`"),
    (r"say which workspace the agent belongs to: \{\"name\": \.\.\., \"workspace\": \.\.\.\}",
     "write the agent as name@workspace, e.g. support-bot@acme (`evalkit workspaces list` lists yours)"),
    (r" \(or pass workspace=\.\.\.\)", ""),
    (r"or lower min_pairs to gate on fewer", "or lower `--min-pairs` to gate on fewer"),
    (r"re-score the candidate, or set allow_incomplete", "re-score the candidate, or pass `--allow-incomplete`"),
    (r"\(run_experiment\(evaluators=\[\.\.\.\]\)\)", "(`--evaluator module:name`)"),
    # A session not in yet (trajectory/routes.py): the route's ?wait= is `evalkit trajectory get`'s --wait.
    (r"sessions with `evalkit sessions list ([^`]+)`, or ask again with \?wait=SECONDS",
     r"sessions with `evalkit sessions list \1`, or wait for it: `evalkit trajectory get \1 SESSION --wait SECONDS`"),
)]


def cli_words(message: str) -> str:
    for pattern, replacement in _CLI_WORDS:
        message = pattern.sub(replacement, message)
    return message


def client_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--url", help="service URL (default: EVALKIT_URL, `evalkit login`, http://127.0.0.1:8000)")
    p.add_argument("--token", help="API token (default: EVALKIT_TOKEN or the stored login of that URL)")
    p.add_argument("--json", action="store_true", help="print JSON only on stdout (errors too), for scripts")
    return p


def service_url(args: argparse.Namespace) -> str:
    from evalkit.sdk_config import load_login

    return (getattr(args, "url", None) or os.environ.get("EVALKIT_URL") or load_login().get("url")
            or "http://127.0.0.1:8000").rstrip("/")


def service_token(args: argparse.Namespace) -> str | None:
    from evalkit.sdk_config import load_login

    # The stored login of the server being talked to: never one server's token sent to another.
    return (getattr(args, "token", None) or os.environ.get("EVALKIT_TOKEN")
            or load_login(service_url(args)).get("token"))


def quote(value: object) -> str:
    """A path segment: names like bot@acme or case ids with spaces, safely."""
    return urllib.parse.quote(str(value), safe="@~")


def open_response(args: argparse.Namespace, method: str, path: str, body: dict[str, Any] | None = None,
                  timeout: float = 30) -> Any:
    """The service's response to one request, open for reading; errors become CliErrors that say why."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(service_url(args) + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    token = service_token(args)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        said = service_message(exc.read())
        if said is None and exc.code in NOT_THE_API_STATUSES:
            # No status: it is not evalkit's 404 ("no such experiment"), which commands word in their own terms.
            raise CliError(not_the_api(service_url(args), path, f"answered {exc.code} {exc.reason}")) from exc
        message = cli_words(said if said is not None else str(exc.reason))
        if exc.code == 401:
            # The service's advice is for any client: on the command line the command is said once, with this URL.
            reason = message.split(";")[0] if token else "no token was given"
            message = f"{reason}; log in with `evalkit login {service_url(args)} --token TOKEN` or set EVALKIT_TOKEN"
        raise CliError(f"{method} {path}: {exc.code} {message}", status=exc.code, detail=message) from exc
    except urllib.error.URLError as exc:
        raise CliError(f"evalkit is not reachable at {service_url(args)} ({exc.reason}); start it with "
                       "`evalkit serve` or set EVALKIT_URL", EXIT_UNREACHABLE) from exc


def call(args: argparse.Namespace, method: str, path: str, body: dict[str, Any] | None = None,
         timeout: float = 30) -> Any:
    with open_response(args, method, path, body, timeout) as response:
        payload = response.read()
    try:
        return json.loads(payload or b"null")
    except ValueError as exc:  # a page of another server, not an answer of evalkit's API
        raise CliError(not_the_api(service_url(args), path, "answered with something other than JSON")) from exc


def text(args: argparse.Namespace, path: str, timeout: float = 60) -> str:
    with open_response(args, "GET", path, timeout=timeout) as response:
        return str(response.read().decode("utf-8", "replace"))


def emit(args: argparse.Namespace, data: Any, lines: Sequence[str]) -> None:
    """JSON under --json, else the lines for a human."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        for line in lines:
            print(line)


print_result = emit  # the older name, still used by other command modules


def error_json(exc: CliError) -> str:
    return json.dumps({"error": {"message": str(exc), "exit_code": exc.code, "status": exc.status}}, indent=2)
