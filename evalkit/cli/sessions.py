"""`evalkit sessions …`, `evalkit trajectory …` and `evalkit mapping …`: reading what agents did.

Tables for humans (rich); `--json` prints what the API returned, for scripts.
`trajectory export` writes JSONL to stdout as it streams in.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from evalkit.cli.http import EXIT_USAGE, CliError, call, client_options, open_response


def _query(pairs: list[tuple[str, Any]]) -> str:
    kept = [(k, str(v)) for k, v in pairs if v is not None and v is not False]
    return ("?" + urllib.parse.urlencode(kept)) if kept else ""


def _agent_path(agent: str) -> str:
    return "/api/agents/" + urllib.parse.quote(agent, safe="@")


def _console() -> Console:
    # Piped output is not a terminal of 80 columns: keep whole ids and numbers.
    return Console() if sys.stdout.isatty() else Console(width=240)


def _money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.6f}"


def _sessions_list(args: argparse.Namespace) -> int:
    query = _query([("since", args.since), ("until", args.until), ("sort", args.sort), ("limit", args.limit),
                    ("cursor", args.cursor), ("errors", "true" if args.errors else None), ("model", args.model),
                    ("min_cost", args.min_cost), ("search", args.search)])
    data = call(args, "GET", _agent_path(args.agent) + "/sessions" + query)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    table = Table(title=f"sessions of {data['agent']} (by {data['sort']})")
    for column in ("session", "status", "last seen", "spans", "LLM calls", "tokens in/out", "cost", "errors", "models"):
        table.add_column(column, justify="right" if column in ("spans", "LLM calls", "errors") else "left")
    for s in data["sessions"]:
        table.add_row(s["session_id"], s["status"], s["last_seen"], str(s["span_count"]), str(s["llm_calls"]),
                      f"{s['prompt_tokens']}/{s['completion_tokens']}", _money(s["cost_usd"]), str(s["errors"]),
                      ", ".join(s["models"]))
    console = _console()
    console.print(table)
    if data["has_more"]:
        console.print(f"more: --cursor {data['next_cursor']}")
    return 0


def _sessions_show(args: argparse.Namespace) -> int:
    query = _query([("limit", args.limit), ("offset", args.offset)])
    data = call(args, "GET", f"{_agent_path(args.agent)}/sessions/{urllib.parse.quote(args.session)}{query}")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    summary = data["summary"]
    table = Table(title=f"session {data['session_id']}: {summary['span_count']} spans, "
                        f"mapping {summary['mapping_version']}")
    for column in ("span", "parent", "name", "kind", "ms", "status"):
        table.add_column(column)
    for s in data["spans"]:
        table.add_row(s["span_id"], s["parent_span_id"] or "-", s["name"], s["kind"], f"{s['duration_ms']:.1f}",
                      s["status_code"])
    console = _console()
    console.print(table)
    if summary["unmapped_attributes"]:
        console.print("unmapped attributes: " + ", ".join(summary["unmapped_attributes"]))
    if data.get("next"):
        # The route says the next page as its query (?limit=&offset=); here it is said as this command's options.
        page = urllib.parse.parse_qs(urllib.parse.urlsplit(data["next"]).query)
        console.print(f"more spans: `evalkit sessions show {shlex.quote(args.agent)} {shlex.quote(args.session)} "
                      f"--limit {page['limit'][0]} --offset {page['offset'][0]}`")
    return 0


def _trajectory_get(args: argparse.Namespace) -> int:
    path = f"{_agent_path(args.agent)}/sessions/{urllib.parse.quote(args.session)}/trajectory"
    with open_response(args, "GET", path + _query([("wait", args.wait)]), timeout=(args.wait or 0) + 60) as response:
        document = json.loads(response.read())
        status = response.headers.get("X-Evalkit-Trajectory-Status", "?")
    if args.json:
        print(json.dumps(document, indent=2))
        return 0
    final = document.get("final_metrics") or {}
    table = Table(title=f"{document['agent']['name']} · session {document.get('session_id')} · {status}"
                        f" · {len(document['steps'])} steps · {_money(final.get('total_cost_usd'))}")
    for column in ("#", "source", "message", "tools", "tokens in/out", "cost"):
        table.add_column(column)
    for step in document["steps"]:
        metrics = step.get("metrics") or {}
        tools = ", ".join(c["function_name"] for c in step.get("tool_calls") or [])
        message = step.get("message") if isinstance(step.get("message"), str) else "[content parts]"
        table.add_row(str(step["step_id"]), step["source"], (message or "")[:80], tools,
                      f"{metrics.get('prompt_tokens', '')}/{metrics.get('completion_tokens', '')}" if metrics else "",
                      _money(metrics.get("cost_usd")) if metrics else "")
    console = _console()
    console.print(table)
    settlement = (document.get("extra") or {}).get("settlement") or {}
    for reason in settlement.get("reasons", []):
        console.print(f"not settled: {reason}")
    return 0 if status != "invalid" else 1


def _trajectory_export(args: argparse.Namespace) -> int:
    query = _query([("since", args.since), ("until", args.until), ("status", args.status)]
                   + [("session_id", s) for s in args.session or []])
    count = 0
    with open_response(args, "GET", f"{_agent_path(args.agent)}/trajectories.jsonl{query}", timeout=600) as response:
        for line in response:
            sys.stdout.write(line.decode("utf-8"))
            count += 1
    sys.stdout.flush()
    print(f"evalkit: exported {count} trajectories", file=sys.stderr)
    return 0


def _mapping_get(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"{_agent_path(args.agent)}/mapping" + _query([("version", args.version)]))
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"# {data['agent']}: mapping version {data['version']} ({data['mapping_version']})")
    print(yaml.safe_dump(data["overrides"] or {}, sort_keys=False).rstrip())
    return 0


def _mapping_set(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file in (None, "-") else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CliError(f"cannot read {args.file}: {reason}; pass a YAML or JSON file of mapping overrides "
                       "(or - for stdin); `evalkit mapping get AGENT` shows the current ones", EXIT_USAGE) from exc
    try:
        body = yaml.safe_load(text)  # JSON is YAML too
    except yaml.YAMLError as exc:
        raise CliError(f"{args.file or 'stdin'} is not YAML or JSON: {exc}") from exc
    data = call(args, "PUT", f"{_agent_path(args.agent)}/mapping", body)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"{data['agent']}: mapping version {data['version']} ({data['mapping_version']}) stored; "
              "trajectories built from now on use it")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sessions = sub.add_parser("sessions", help="an agent's sessions").add_subparsers(dest="action", required=True)
    p = client_options(sessions.add_parser("list", help="list sessions with steps, tokens, cost and status"))
    p.add_argument("agent", help="name@workspace")
    p.add_argument("--since", help="ISO 8601 or unix seconds")
    p.add_argument("--until", help="ISO 8601 or unix seconds")
    p.add_argument("--sort", choices=["last_seen", "first_seen", "cost", "spans"])
    p.add_argument("--limit", type=int)
    p.add_argument("--cursor")
    p.add_argument("--errors", action="store_true", help="only sessions with errors")
    p.add_argument("--model")
    p.add_argument("--min-cost", type=float)
    p.add_argument("--search", help="only sessions whose id holds this text (any case)")
    p.set_defaults(func=_sessions_list)
    p = client_options(sessions.add_parser("show", help="a session's raw spans"))
    p.add_argument("agent")
    p.add_argument("session")
    p.add_argument("--limit", type=int)
    p.add_argument("--offset", type=int)
    p.set_defaults(func=_sessions_show)

    trajectory = sub.add_parser("trajectory", help="ATIF trajectories").add_subparsers(dest="action", required=True)
    p = client_options(trajectory.add_parser("get", help="one session's ATIF trajectory"))
    p.add_argument("agent")
    p.add_argument("session")
    p.add_argument("--wait", type=float, help="wait up to this many seconds for the session to settle")
    p.set_defaults(func=_trajectory_get)
    p = client_options(trajectory.add_parser("export", help="trajectories as JSONL on stdout"))
    p.add_argument("agent")
    p.add_argument("--since")
    p.add_argument("--until")
    p.add_argument("--session", action="append", help="a session id (repeatable)")
    p.add_argument("--status", help="only these statuses, e.g. valid or valid,partial")
    p.set_defaults(func=_trajectory_export)

    mapping = sub.add_parser("mapping", help="per-agent mapping overrides").add_subparsers(dest="action",
                                                                                          required=True)
    p = client_options(mapping.add_parser("get", help="the agent's current (or a given) mapping overrides"))
    p.add_argument("agent")
    p.add_argument("--version", type=int)
    p.set_defaults(func=_mapping_get)
    p = client_options(mapping.add_parser("set", help="store new mapping overrides (YAML or JSON; stdin if no FILE)"))
    p.add_argument("agent")
    p.add_argument("file", nargs="?")
    p.set_defaults(func=_mapping_set)
