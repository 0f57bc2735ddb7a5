"""The `evalkit` command line.

Exit codes: 0 success, 1 the request failed (the message says why), 2 usage error,
3 the service could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.settings import load_settings

EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 1, 2, 3


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


# -- serve -----------------------------------------------------------------------------
def _serve(args: argparse.Namespace) -> int:
    from evalkit.serve import Service
    from evalkit.store import StoreLocked

    settings = load_settings({
        "data_dir": args.data_dir, "host": args.host, "grpc_port": args.grpc_port,
        "otlp_http_port": args.otlp_http_port, "api_port": args.api_port,
    })
    logging.basicConfig(level=os.environ.get("EVALKIT_LOG_LEVEL", "WARNING"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def run() -> None:
        service = Service(settings, say=lambda line: print(line, flush=True))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await service.start()
        await stop.wait()
        print("evalkit: draining…", flush=True)
        await service.stop()

    try:
        asyncio.run(run())
    except StoreLocked as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(str(exc)) from exc
    return 0


# -- talking to the service ---------------------------------------------------------------
def service_url(args: argparse.Namespace) -> str:
    from evalkit.sdk_config import load_login

    return (getattr(args, "url", None) or os.environ.get("EVALKIT_URL") or load_login().get("url")
            or "http://127.0.0.1:8000").rstrip("/")


def service_token(args: argparse.Namespace) -> str | None:
    from evalkit.sdk_config import load_login

    return getattr(args, "token", None) or os.environ.get("EVALKIT_TOKEN") or load_login().get("token")


def call(args: argparse.Namespace, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    url = service_url(args) + path
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    token = service_token(args)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]["message"]
        except Exception:
            message = exc.reason
        raise CliError(f"{method} {path}: {exc.code} {message}") from exc
    except urllib.error.URLError as exc:
        raise CliError(f"evalkit is not reachable at {service_url(args)} ({exc.reason}); start it with "
                       "`evalkit serve` or set EVALKIT_URL", EXIT_UNREACHABLE) from exc


def _print(args: argparse.Namespace, data: Any, lines: Sequence[str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        for line in lines:
            print(line)


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


def _keys_create(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/api/agents/{args.agent}/keys", {})
    _print(args, data, [data["key"], f"(key {data['key_id']}; shown once, evalkit keeps only its hash)"])
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"/api/agents/{args.agent}/keys")
    _print(args, data, [f"{k['key_id']}  {k['prefix']}…  {'revoked' if k['revoked'] else 'active'}"
                        for k in data["keys"]])
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    data = call(args, "DELETE", f"/api/agents/{args.agent}/keys/{args.key_id}")
    _print(args, data, [f"key {args.key_id} revoked"])
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalkit", description="Measure LLM agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the OTLP receivers, the API and scoring in one process")
    serve.add_argument("--data-dir", type=Path, help="where the embedded store lives (default ./.evalkit)")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--grpc-port", type=int, help="OTLP/gRPC port (default 4317)")
    serve.add_argument("--otlp-http-port", type=int, help="OTLP/HTTP port (default 4318)")
    serve.add_argument("--api-port", type=int, help="API port (default 8000)")
    serve.set_defaults(func=_serve)

    def client(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--url", help="service URL (default: EVALKIT_URL, `evalkit login`, http://127.0.0.1:8000)")
        p.add_argument("--token", help="API token (default: EVALKIT_TOKEN or `evalkit login`)")
        p.add_argument("--json", action="store_true", help="print JSON for scripts")
        return p

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
    keys = agents.add_parser("keys", help="ingest keys").add_subparsers(dest="keys_action", required=True)
    p = client(keys.add_parser("create", help="create an ingest key (shown once)"))
    p.add_argument("agent")
    p.set_defaults(func=_keys_create)
    p = client(keys.add_parser("list", help="list an agent's keys"))
    p.add_argument("agent")
    p.set_defaults(func=_keys_list)
    p = client(keys.add_parser("revoke", help="revoke a key"))
    p.add_argument("agent")
    p.add_argument("key_id")
    p.set_defaults(func=_keys_revoke)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"evalkit: {exc}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
