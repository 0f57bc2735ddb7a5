"""`evalkit login URL`, `evalkit logins`, `evalkit logout`: one stored login per server URL, one of them current.

The CLI and the SDK use the current login unless EVALKIT_URL / --url name another server, in which case
they use that server's login (never one server's token for another).
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from evalkit.cli.http import EXIT_USAGE, CliError, call, emit
from evalkit.sdk_config import load_login, login_path, read_logins, save_login, use_login


def _login(args: argparse.Namespace) -> int:
    url = args.url_arg.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise CliError(f"{url!r} is not a URL; write it like http://127.0.0.1:8000", EXIT_USAGE)
    token = args.token or os.environ.get("EVALKIT_TOKEN")
    stored = load_login(url).get("token")
    if not token and stored:
        # Switching back to a server logged in to before: its token is kept; check it still works.
        args.url, args.token = url, stored
        me = call(args, "GET", "/api/me")
        use_login(url)
        who = me.get("name") if isinstance(me, dict) else None
        emit(args, {"url": url, "user": who, "current": True, "stored_in": str(login_path())},
             [f"now using {url}" + (f" as {who}" if who else "") + " (logged in before; `evalkit logins` lists "
              "every login)"])
        return 0
    if not token and sys.stdin.isatty():
        token = getpass.getpass("evalkit token (admin token or `POST /api/users` token): ").strip() or None
    if not token:
        raise CliError("no token: pass --token, set EVALKIT_TOKEN, or type it when asked", EXIT_USAGE)
    args.url, args.token = url, token
    me = call(args, "GET", "/api/me")
    path = save_login(url, token)
    who = me.get("name") if isinstance(me, dict) else None
    emit(args, {"url": url, "user": who, "current": True, "stored_in": str(path)},
         [f"logged in to {url}" + (f" as {who}" if who else "") + f" (stored in {path}; "
          "EVALKIT_URL and EVALKIT_TOKEN override it)"])
    return 0


def _logins(args: argparse.Namespace) -> int:
    data = read_logins()
    rows = [{"url": url, "current": url == data["current"], "logged_in": bool(entry.get("token")),
             "agent_keys": sorted(entry.get("agent_keys") or {})}
            for url, entry in sorted(data["servers"].items())]
    lines = [f"{'*' if r['current'] else ' '} {r['url']}  {'logged in' if r['logged_in'] else 'logged out'}"
             + (f"  ingest keys kept for {', '.join(r['agent_keys'])}" if r["agent_keys"] else "") for r in rows]
    emit(args, {"logins": rows}, lines or ["no logins; log in with `evalkit login URL --token TOKEN`"])
    return 0


def _logout(args: argparse.Namespace) -> int:
    url = (args.url_arg or load_login().get("url") or "").rstrip("/")
    if not url or not load_login(url).get("token"):
        emit(args, {"url": url or None, "logged_out": False}, [f"not logged in{' to ' + url if url else ''}"])
        return 0
    save_login(url, None)
    emit(args, {"url": url, "logged_out": True}, [f"forgot the token for {url} (and the ingest keys kept with it)"])
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("login", help="log in to a server (the token is checked) and make it the current one",
                       description="Store a token for the server at URL in ~/.config/evalkit/login.json (0600) "
                                   "and make it current. One login is kept per server URL: `evalkit login URL` "
                                   "without a token switches back to a server logged in to before. "
                                   "EVALKIT_URL / EVALKIT_TOKEN override what is stored.")
    p.add_argument("url_arg", metavar="URL", help="the API address, e.g. http://127.0.0.1:8000")
    p.add_argument("--token", help="the token (default: EVALKIT_TOKEN, the stored one for URL, else asked for)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_login)
    p = sub.add_parser("logins", help="the stored logins, the current one marked *")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_logins)
    p = sub.add_parser("logout", help="forget the token of the current login (or of URL)")
    p.add_argument("url_arg", metavar="URL", nargs="?", help="the server to log out of (default: the current one)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_logout)
