"""`evalkit login URL`: check a token against the service and store URL and token for the CLI and the SDK."""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from evalkit.cli.http import EXIT_USAGE, CliError, call
from evalkit.sdk_config import load_login, save_login


def _login(args: argparse.Namespace) -> int:
    url = args.url_arg.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise CliError(f"{url!r} is not a URL; write it like http://127.0.0.1:8000", EXIT_USAGE)
    token = args.token or os.environ.get("EVALKIT_TOKEN")
    if not token and sys.stdin.isatty():
        token = getpass.getpass("evalkit token (admin token or `POST /api/users` token): ").strip() or None
    if not token:
        raise CliError("no token: pass --token, set EVALKIT_TOKEN, or type it when asked", EXIT_USAGE)
    args.url, args.token = url, token
    me = call(args, "GET", "/api/me")
    path = save_login(url, token)
    who = me.get("name") if isinstance(me, dict) else None
    print(f"logged in to {url}" + (f" as {who}" if who else "") + f" (stored in {path}; "
          "EVALKIT_URL and EVALKIT_TOKEN override it)")
    return 0


def _logout(args: argparse.Namespace) -> int:
    stored = load_login()
    if not stored:
        print("not logged in")
        return 0
    save_login(stored.get("url") or "", None)
    print(f"forgot the token for {stored.get('url')}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("login", help="store the service URL and a token (checked against the service)",
                       description="Store the service URL and token in ~/.config/evalkit/login.json (0600). "
                                   "EVALKIT_URL / EVALKIT_TOKEN override what is stored.")
    p.add_argument("url_arg", metavar="URL", help="the API address, e.g. http://127.0.0.1:8000")
    p.add_argument("--token", help="the token (default: EVALKIT_TOKEN, else asked for)")
    p.set_defaults(func=_login)
    p = sub.add_parser("logout", help="forget the stored token")
    p.set_defaults(func=_logout)
