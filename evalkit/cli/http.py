"""How the CLI talks to the service: URL and token discovery, one JSON call, printing."""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 1, 2, 3


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def client_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--url", help="service URL (default: EVALKIT_URL, `evalkit login`, http://127.0.0.1:8000)")
    p.add_argument("--token", help="API token (default: EVALKIT_TOKEN or `evalkit login`)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    return p


def service_url(args: argparse.Namespace) -> str:
    from evalkit.sdk_config import load_login

    return (getattr(args, "url", None) or os.environ.get("EVALKIT_URL") or load_login().get("url")
            or "http://127.0.0.1:8000").rstrip("/")


def service_token(args: argparse.Namespace) -> str | None:
    from evalkit.sdk_config import load_login

    return getattr(args, "token", None) or os.environ.get("EVALKIT_TOKEN") or load_login().get("token")


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
        try:
            message = json.loads(exc.read())["error"]["message"]
        except Exception:
            message = exc.reason
        raise CliError(f"{method} {path}: {exc.code} {message}") from exc
    except urllib.error.URLError as exc:
        raise CliError(f"evalkit is not reachable at {service_url(args)} ({exc.reason}); start it with "
                       "`evalkit serve` or set EVALKIT_URL", EXIT_UNREACHABLE) from exc


def call(args: argparse.Namespace, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    with open_response(args, method, path, body) as response:
        return json.loads(response.read() or b"null")


def print_result(args: argparse.Namespace, data: Any, lines: Sequence[str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        for line in lines:
            print(line)
