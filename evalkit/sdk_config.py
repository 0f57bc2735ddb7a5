"""Where `evalkit login` keeps the service URL and token: ~/.config/evalkit/login.json (0600)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def login_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "evalkit" / "login.json"


def load_login() -> dict[str, Any]:
    path = login_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def save_login(url: str, token: str | None) -> Path:
    path = login_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": url, "token": token}, handle)
    return path
