"""Where `evalkit login` keeps its logins: ~/.config/evalkit/login.json (0600).

One login per server URL (its token, and the ingest keys the SDK made for that server's agents),
and which one is current:

```json
{"current": "http://127.0.0.1:8000",
 "servers": {"http://127.0.0.1:8000": {"token": "evk_…", "agent_keys": {"bot@acme": "evk_…"}}}}
```

A file in the older shape (`{"url": …, "token": …}`, one login) is read as that one login.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def login_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "evalkit" / "login.json"


def _normal(url: str) -> str:
    return url.rstrip("/")


def read_logins() -> dict[str, Any]:
    """The whole file as {"current": url | None, "servers": {url: {...}}}."""
    try:
        data = json.loads(login_path().read_text())
    except (OSError, json.JSONDecodeError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    if "servers" not in data and data.get("url"):  # the one-login shape of earlier versions
        data = {"current": _normal(data["url"]),
                "servers": {_normal(data["url"]): {"token": data.get("token"), "agent_keys": {}}}}
    servers = data.get("servers") if isinstance(data.get("servers"), dict) else {}
    return {"current": data.get("current"), "servers": servers}


def write_logins(data: dict[str, Any]) -> Path:
    path = login_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written to a temporary file and renamed: a crash mid-write never leaves half a file of secrets.
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=1)
    os.replace(temporary, path)
    return path


def load_login(url: str | None = None) -> dict[str, Any]:
    """{"url", "token"} of the login for `url`, else of the current login; {} when there is none."""
    data = read_logins()
    wanted = _normal(url) if url else data.get("current")
    if not wanted:
        return {}
    entry = data["servers"].get(wanted)
    if not isinstance(entry, dict):
        return {"url": wanted} if url is None else {}
    return {"url": wanted, "token": entry.get("token")}


def save_login(url: str, token: str | None) -> Path:
    """Keep `token` for `url` and make it the current login (a None token forgets it, the URL stays current)."""
    data = read_logins()
    url = _normal(url)
    entry = data["servers"].setdefault(url, {"agent_keys": {}})
    if token is None:
        entry.pop("token", None)
        # The ingest keys were made with that login's token; who logs in next may be someone else.
        entry["agent_keys"] = {}
    else:
        if entry.get("token") not in (None, token):
            entry["agent_keys"] = {}
        entry["token"] = token
    data["current"] = url
    return write_logins(data)


def use_login(url: str) -> bool:
    """Make the stored login for `url` current; False when there is none."""
    data = read_logins()
    url = _normal(url)
    if url not in data["servers"]:
        return False
    data["current"] = url
    write_logins(data)
    return True


def stored_agent_key(url: str, agent: str) -> str | None:
    entry = read_logins()["servers"].get(_normal(url)) or {}
    key = (entry.get("agent_keys") or {}).get(agent)
    return str(key) if key else None


def keep_agent_key(url: str, agent: str, key: str) -> Path:
    data = read_logins()
    entry = data["servers"].setdefault(_normal(url), {})
    entry.setdefault("agent_keys", {})[agent] = key
    return write_logins(data)


def forget_agent_key(url: str, agent: str) -> None:
    data = read_logins()
    entry = data["servers"].get(_normal(url))
    if entry and agent in (entry.get("agent_keys") or {}):
        del entry["agent_keys"][agent]
        write_logins(data)
