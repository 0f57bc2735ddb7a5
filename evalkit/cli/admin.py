"""`evalkit workspaces …`, `evalkit agents …` and `evalkit users …`: the admin side of the service."""

from __future__ import annotations

import argparse
from typing import Any

from evalkit.cli.http import call, client_options
from evalkit.cli.http import print_result as _print


def _workspaces_create(args: argparse.Namespace) -> int:
    data = call(args, "POST", "/api/workspaces", {"name": args.name})
    _print(args, data, [f"workspace {args.name} created"])
    return 0


def _workspaces_list(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/api/workspaces")
    _print(args, data, data["workspaces"])
    return 0


def _agents_create(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"name": args.agent, "kind": args.kind}
    if args.harness_url:
        body["harness_url"] = args.harness_url
    if args.max_concurrent_runs is not None:
        body["max_concurrent_runs"] = args.max_concurrent_runs
    if args.trajectory_wait_seconds is not None:
        body["trajectory_wait_seconds"] = args.trajectory_wait_seconds
    data = call(args, "POST", "/api/agents", body)
    _print(args, data, [f"agent {data['agent']} created ({data['kind']}); next: "
                        f"`evalkit agents keys create {data['agent']}`"])
    return 0


def _agents_list(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/api/agents")
    _print(args, data, [f"{a['agent']:40} {a['kind']:8} {'archived' if a['archived'] else ''}"
                        for a in data["agents"]])
    return 0


def _agents_archive(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/api/agents/{args.agent}/archive", {})
    _print(args, data, [f"agent {data['agent']} archived: it takes no new experiments or keys; its sessions "
                        "and experiments stay readable"])
    return 0


def _agents_set(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {k: v for k, v in (
        ("description", args.description), ("harness_url", args.harness_url),
        ("max_concurrent_runs", args.max_concurrent_runs), ("trajectory_wait_seconds", args.trajectory_wait_seconds),
        ("session_attribute", args.session_attribute)) if v is not None}
    if args.unarchive:
        body["archived"] = False
    if not body:
        from evalkit.cli.http import EXIT_USAGE, CliError

        raise CliError("nothing to change: pass a setting, e.g. --max-concurrent-runs 8 (see "
                       "`evalkit agents set --help`)", EXIT_USAGE)
    data = call(args, "PATCH", f"/api/agents/{args.agent}", body)
    _print(args, data, [f"agent {data['agent']}: " + ", ".join(f"{k} {data.get(k)}" for k in body)])
    return 0


def _keys_create(args: argparse.Namespace) -> int:
    scopes = sorted(set(args.scope or ["ingest"]), key=["ingest", "read"].index)
    data = call(args, "POST", f"/api/agents/{args.agent}/keys", {"scopes": scopes})
    _print(args, data, [data["key"], f"(key {data['key_id']}, scopes {','.join(data['scopes'])}; shown once, "
                                     "evalkit keeps only its hash)"])
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"/api/agents/{args.agent}/keys")
    _print(args, data, [f"{k['key_id']}  {k['prefix']}…  {','.join(k['scopes']):12} "
                        f"{'revoked' if k['revoked'] else 'active'}" for k in data["keys"]])
    return 0


def _when(seconds: float | None) -> str:
    from datetime import UTC, datetime

    return "never" if seconds is None else datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _tokens_list(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"/api/users/{args.name}/tokens")
    _print(args, data, [f"{t['token_id']}  created {_when(t['created_at'])}  last used {_when(t['last_used_at'])}  "
                        f"{'revoked' if t['revoked'] else 'active'}" for t in data["tokens"]])
    return 0


def _tokens_create(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/api/users/{args.name}/tokens", {})
    _print(args, data, [data["token"], "(shown once, evalkit keeps only its hash)"])
    return 0


def _tokens_revoke(args: argparse.Namespace) -> int:
    data = call(args, "DELETE", f"/api/users/{args.name}/tokens/{args.token_id}")
    _print(args, data, [f"token {args.token_id} of {args.name} revoked: it is refused from now on"])
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    data = call(args, "DELETE", f"/api/agents/{args.agent}/keys/{args.key_id}")
    _print(args, data, [f"key {args.key_id} revoked"])
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]

    client = client_options

    workspaces = sub.add_parser("workspaces", help="workspaces").add_subparsers(dest="action", required=True)
    p = client(workspaces.add_parser("create", help="create a shared workspace"))
    p.add_argument("name")
    p.set_defaults(func=_workspaces_create)
    client(workspaces.add_parser("list", help="list workspaces")).set_defaults(func=_workspaces_list)

    agents = sub.add_parser("agents", help="agents and their ingest keys").add_subparsers(dest="action",
                                                                                          required=True)
    p = client(agents.add_parser("create", help="create an agent, named name@workspace"))
    p.add_argument("agent")
    p.add_argument("--kind", choices=["code", "harness"], default="code")
    p.add_argument("--harness-url")
    p.add_argument("--max-concurrent-runs", type=int)
    p.add_argument("--trajectory-wait-seconds", type=float)
    p.set_defaults(func=_agents_create)
    client(agents.add_parser("list", help="list agents")).set_defaults(func=_agents_list)
    p = client(agents.add_parser("archive", help="archive an agent (no new experiments or keys)"))
    p.add_argument("agent")
    p.set_defaults(func=_agents_archive)
    p = client(agents.add_parser("set", help="change an agent's settings after creation"))
    p.add_argument("agent")
    p.add_argument("--description")
    p.add_argument("--harness-url")
    p.add_argument("--max-concurrent-runs", type=int)
    p.add_argument("--trajectory-wait-seconds", type=float)
    p.add_argument("--session-attribute")
    p.add_argument("--unarchive", action="store_true", help="take new experiments and keys again")
    p.set_defaults(func=_agents_set)
    keys = agents.add_parser("keys", help="ingest keys").add_subparsers(dest="keys_action", required=True)
    p = client(keys.add_parser("create", help="create an ingest key (shown once)"))
    p.add_argument("agent")
    p.add_argument("--scope", action="append", choices=["ingest", "read"],
                   help="what the key may do, repeatable: ingest (send spans; the default), read (read the "
                        "agent's workspace through the API)")
    p.set_defaults(func=_keys_create)
    p = client(keys.add_parser("list", help="list an agent's keys"))
    p.add_argument("agent")
    p.set_defaults(func=_keys_list)
    p = client(keys.add_parser("revoke", help="revoke a key"))
    p.add_argument("agent")
    p.add_argument("key_id")
    p.set_defaults(func=_keys_revoke)

    users = sub.add_parser("users", help="users' API tokens").add_subparsers(dest="action", required=True)
    tokens = users.add_parser("tokens", help="API tokens: list, create, revoke").add_subparsers(
        dest="tokens_action", required=True)
    p = client(tokens.add_parser("list", help="list a user's tokens (ids, created, last used; never the secret)"))
    p.add_argument("name", help="the user (the admin's own tokens: admin)")
    p.set_defaults(func=_tokens_list)
    p = client(tokens.add_parser("create", help="create a token for a user (shown once)"))
    p.add_argument("name")
    p.set_defaults(func=_tokens_create)
    p = client(tokens.add_parser("revoke", help="revoke a token: refused from the next request on"))
    p.add_argument("name")
    p.add_argument("token_id")
    p.set_defaults(func=_tokens_revoke)
