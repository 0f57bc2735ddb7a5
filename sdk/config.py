"""Configuration: `evalkit.yaml` (found from the current directory upward, or beside the script),
the login `evalkit login` stored, and the EVALKIT_* environment variables that override it.

```yaml
cases: cases            # one folder per dataset, one file per case
fixtures: fixtures      # files the cases refer to
credentials:
  judges:               # keyed by the judge's base_url
    https://api.openai.com/v1: env:OPENAI_API_KEY
  agents:               # ingest keys, keyed by agent (name@workspace)
    support-bot@acme: env:SUPPORT_BOT_KEY
```

Secrets are references (`env:NAME`), never plain text: a file that is
committed must not carry a key.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.sdk_config import load_login

CONFIG_NAME = "evalkit.yaml"
DEFAULT_URL = "http://127.0.0.1:8000"


class ConfigError(ValueError):
    """evalkit.yaml or the environment says something unusable; the message says how to fix it."""


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judges: dict[str, str] = Field(default_factory=dict)
    agents: dict[str, str] = Field(default_factory=dict)
    # HTTP evaluators' bearer tokens, keyed by URL (passed to the service like the judges' keys).
    evaluators: dict[str, str] = Field(default_factory=dict)


class ProjectFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: str = "cases"
    fixtures: str = "fixtures"
    otlp_url: str | None = None
    credentials: Credentials = Field(default_factory=Credentials)


class Project(BaseModel):
    """evalkit.yaml resolved: directories are absolute, secrets are still references."""

    root: Path | None  # the folder of evalkit.yaml; None when there is none
    cases_dir: Path | None
    fixtures_dir: Path | None
    otlp_url: str | None = None
    credentials: Credentials = Field(default_factory=Credentials)

    def dataset_folder(self, name: str) -> Path | None:
        if self.cases_dir is None or "@" in name or "/" in name:
            return None
        folder = self.cases_dir / name
        return folder if folder.is_dir() else None

    def judge_key(self, base_url: str) -> str | None:
        return _lookup_secret(self.credentials.judges, base_url.rstrip("/"), "credentials.judges")

    def agent_key(self, agent: str) -> str | None:
        return _lookup_secret(self.credentials.agents, agent, "credentials.agents")

    def judge_keys(self) -> dict[str, str]:
        """Every judge and HTTP-evaluator key that resolves, by URL (what the service needs to score)."""
        keys: dict[str, str] = {}
        for table, where in ((self.credentials.judges, "credentials.judges"),
                             (self.credentials.evaluators, "credentials.evaluators")):
            for url in table:
                value = _lookup_secret(table, url, where, missing_ok=True)
                if value:
                    keys[url.rstrip("/")] = value
        return keys


def _lookup_secret(table: Mapping[str, str], key: str, where: str, missing_ok: bool = False) -> str | None:
    normalised = {k.rstrip("/"): v for k, v in table.items()}
    reference = normalised.get(key.rstrip("/"))
    if reference is None:
        return None
    return resolve_secret(reference, f"{where}[{key!r}]", missing_ok=missing_ok)


def resolve_secret(reference: str, where: str, *, missing_ok: bool = False) -> str | None:
    if not reference.startswith("env:"):
        raise ConfigError(f"{where} in {CONFIG_NAME} is a secret in plain text; write `env:NAME` and export NAME "
                          "instead, so the file can be committed")
    name = reference[4:].strip()
    value = os.environ.get(name)
    if not value:
        if missing_ok:
            return None
        raise ConfigError(f"{where} in {CONFIG_NAME} refers to ${name}, which is not set; export {name}=…")
    return value


def script_dir() -> Path | None:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return Path(path).resolve().parent if path else None


def find_config(start: Path | None = None) -> Path | None:
    """evalkit.yaml in `start` (default: the current directory) or a parent, else beside the running script."""
    roots = [start or Path.cwd()]
    if start is None and (beside := script_dir()) is not None:
        roots.append(beside)
    for root in roots:
        for folder in (root.resolve(), *root.resolve().parents):
            candidate = folder / CONFIG_NAME
            if candidate.is_file():
                return candidate
    return None


def load_project(path: Path | None = None, *, start: Path | None = None) -> Project:
    path = path or find_config(start)
    if path is None:
        return Project(root=None, cases_dir=None, fixtures_dir=None)
    try:
        raw: Any = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} must be a mapping (cases:, fixtures:, credentials:)")
    try:
        data = ProjectFile.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{path} is not valid: {problems}") from exc
    for table, where in ((data.credentials.judges, "credentials.judges"),
                         (data.credentials.agents, "credentials.agents"),
                         (data.credentials.evaluators, "credentials.evaluators")):
        for key, value in table.items():
            if not str(value).startswith("env:"):
                raise ConfigError(f"{where}[{key!r}] in {path} is a secret in plain text; write `env:NAME` and "
                                  "export NAME instead, so the file can be committed")
    root = path.parent.resolve()
    return Project(root=root, cases_dir=(root / data.cases).resolve(), fixtures_dir=(root / data.fixtures).resolve(),
                   otlp_url=data.otlp_url, credentials=data.credentials)


class Connection(BaseModel):
    """Where the service is and who we are to it."""

    url: str
    token: str | None


def connection(url: str | None = None, token: str | None = None) -> Connection:
    """Explicit values, then EVALKIT_URL / EVALKIT_TOKEN, then `evalkit login`, then the local default."""
    login = load_login()
    resolved_url = url or os.environ.get("EVALKIT_URL") or login.get("url") or DEFAULT_URL
    # The stored login of the server being talked to: never one server's token sent to another.
    resolved_token = token or os.environ.get("EVALKIT_TOKEN") or load_login(resolved_url).get("token")
    if resolved_url.startswith("http://") and not _is_local(resolved_url) and resolved_token:
        warnings.warn(f"sending the evalkit token over plain http to {resolved_url}; use https", stacklevel=3)
    return Connection(url=str(resolved_url).rstrip("/"), token=resolved_token)


def _is_local(url: str) -> bool:
    host = url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost", "[::1]", "::1")
