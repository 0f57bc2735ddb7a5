"""Request bodies of the API's own routes (workspaces, users, members, agents, keys): pydantic at the
HTTP boundary, so a wrong type or a number out of range is a 400 naming the field, and the OpenAPI
document (evalkit/openapi.py) describes exactly what is checked."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalkit.access import DEFAULT_SCOPES, ROLES

# Bounds of the store's columns (UInt32 run counts; seconds kept as doubles but waited on).
_MAX_RUNS = 100_000
_MAX_WAIT_SECONDS = 24 * 3600.0
_TEXT = 10_000

Role = Literal["reader", "reviewer", "writer", "admin", "owner"]
assert tuple(Role.__args__) == ROLES  # type: ignore[attr-defined]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NamedBody(_Body):
    """`POST /api/workspaces`, `POST /api/users`."""

    name: str = Field(min_length=1, max_length=63, description="1-63 lower-case letters, digits, '.', '_', '-'")


class MemberBody(_Body):
    role: Role


class AgentSettings(BaseModel):
    """What `PATCH /api/agents/{agent}` may change; unknown settings are refused."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(default=None, max_length=_TEXT)
    harness_url: str | None = Field(default=None, max_length=2048)
    max_concurrent_runs: int | None = Field(default=None, ge=1, le=_MAX_RUNS)
    trajectory_wait_seconds: float | None = Field(default=None, ge=0, le=_MAX_WAIT_SECONDS)
    session_attribute: str | None = Field(default=None, max_length=256)
    archived: bool | None = None


class CreateAgentBody(_Body):
    name: str = Field(min_length=1, max_length=128, description="the agent's name, or name@workspace")
    workspace: str = Field(default="", max_length=63)
    kind: Literal["code", "harness"] = "code"
    description: str = Field(default="", max_length=_TEXT)
    harness_url: str = Field(default="", max_length=2048)
    max_concurrent_runs: int = Field(default=4, ge=1, le=_MAX_RUNS)
    trajectory_wait_seconds: float = Field(default=30.0, ge=0, le=_MAX_WAIT_SECONDS)
    session_attribute: str = Field(default="", max_length=256)


Scope = Literal["ingest", "read"]


def _default_scopes() -> list[Scope]:
    return [scope for scope in ("ingest", "read") if scope in DEFAULT_SCOPES]


class CreateKeyBody(_Body):
    scopes: list[Scope] = Field(default_factory=_default_scopes, min_length=1,
                                description="ingest: send spans; read: read the workspace")
