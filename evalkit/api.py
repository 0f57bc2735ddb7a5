"""The API port: health, metrics, and the admin routes for workspaces, agents and keys.

Other parts of the service (trajectory, scoring) add their routes through
`RouteModule`s; this module owns authentication and the error shape:
`{"error": {"status": 404, "message": "...what went wrong and what to do next"}}`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol, TypeVar

import orjson
from aiohttp import web
from pydantic import BaseModel, ValidationError

from evalkit.access import (
    ROLES,
    SCOPES,
    Access,
    AccessError,
    Agent,
    ApiToken,
    IngestKey,
    role_rank,
    split_agent_id,
)
from evalkit.api_bodies import AgentSettings, CreateAgentBody, CreateKeyBody, NamedBody
from evalkit.attributes import json_safe
from evalkit.metrics import Metrics
from evalkit.settings import Settings
from evalkit.store import Store, StoreError, StoreUnavailable

_log = logging.getLogger("evalkit.api")


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Caller:
    """Who is calling: the admin, a user, or an ingest key with the `read` scope (which reads its
    own workspace; a key without it never becomes a Caller: `caller_of` answers 403).

    `roles`: workspace → role (reader < reviewer < writer < admin < owner). The
    server admin has every role everywhere; a reading ingest key is a reader of its
    agent's workspace.
    """

    name: str
    role: str  # "admin", "user" or "key"
    workspaces: frozenset[str] = field(default_factory=frozenset)
    agent_id: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    # An ingest key's scopes ("ingest", "read"); users and the admin have no scopes, only roles.
    scopes: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not self.roles and self.workspaces:
            self.roles = {w: "reader" if self.role == "key" else "writer" for w in self.workspaces}
        self.workspaces = frozenset(self.workspaces | set(self.roles))

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def role_in(self, workspace: str) -> str | None:
        return "owner" if self.is_admin else self.roles.get(workspace)

    def can(self, workspace: str, role: str) -> bool:
        return role_rank(self.role_in(workspace)) >= role_rank(role)

    def require_role(self, workspace: str, role: str, doing: str = "do this") -> None:
        """404 when the workspace is not visible at all, 403 when the role is too weak."""
        self.require_workspace(workspace)
        if not self.can(workspace, role):
            have = self.role_in(workspace)
            raise ApiError(403, f"to {doing} in workspace {workspace!r} you need the role {role!r} or higher "
                                f"(you are {have!r}); ask an owner or admin of {workspace!r} to run "
                                f"`PUT /api/workspaces/{workspace}/members/{self.name}` with "
                                f"{{\"role\": \"{role}\"}}")

    def require_admin(self) -> None:
        if not self.is_admin:
            raise ApiError(403, "this route needs the admin token (printed at first start, or in "
                                "<data-dir>/admin-token)")

    def require_workspace(self, workspace: str) -> None:
        if self.is_admin or workspace in self.workspaces:
            return
        raise ApiError(404, f"workspace {workspace!r} does not exist or is not visible to this token; list yours "
                            "with `evalkit workspaces list` (GET /api/workspaces)")


async def require_existing_workspace(request: web.Request, caller: Caller, workspace: str) -> None:
    """`Caller.require_workspace`, and for the server admin, who sees every workspace, that it exists: without
    this a misspelt name listed nothing with a 200, as if the workspace were empty (a user's or key's
    workspaces are ones that exist)."""
    caller.require_workspace(workspace)
    if caller.is_admin:
        context: Context = request.app["context"]
        if not await asyncio.to_thread(context.access.workspace_exists, workspace):
            raise ApiError(404, f"workspace {workspace!r} does not exist; list the workspaces with "
                                "`evalkit workspaces list` (GET /api/workspaces)")


@dataclass
class Context:
    """What every route needs, passed in (no globals)."""

    settings: Settings
    store: Store
    access: Access
    metrics: Metrics
    extras: dict[str, Any] = field(default_factory=dict)


class RouteModule(Protocol):
    def __call__(self, app: web.Application, context: Context) -> None: ...


def _default(value: Any) -> Any:
    """What JSON makes of the types it does not know (as `default=str` did, minus the non-finite)."""
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else None
    if isinstance(value, bytes):
        return json_safe(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def _finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None: a NaN or infinite number is unknown."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k if isinstance(k, str | int | float | bool) or k is None else str(k): _finite(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    return value


def dumps_json(data: Any) -> bytes:
    """Strict JSON (RFC 8259) of `data`: the one encoder of every API response.

    NaN and ±Infinity are not JSON; strict parsers (browsers' `JSON.parse` accepts them, Go's and
    Rust's do not) refuse a whole response for one of them. They are written as null (unknown).
    orjson already does; the standard library, for what orjson refuses (integers past 64 bits,
    non-string keys), gets the values cleaned first.
    """
    try:
        return orjson.dumps(data, default=_default)
    except TypeError:
        return json.dumps(_finite(data), default=_default, allow_nan=False).encode()


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps_json(data), status=status, content_type="application/json", headers=headers)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number; send null for an unknown number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as infinity: no store column can keep it
        raise ValueError(f"the number {text[:40]} is too large; numbers must be finite doubles")
    return value


_INT_LIMIT = 2**64


def _bounded_int(text: str) -> int:
    if len(text) > 21 or not -_INT_LIMIT // 2 <= (value := int(text)) < _INT_LIMIT:
        raise ValueError(f"the integer {text[:40]} does not fit in 64 bits")
    return value


async def read_json(request: web.Request) -> dict[str, Any]:
    """The request body as a JSON object, or a 400 that says what is wrong with it."""
    data = await request.read()
    if not data.strip():
        raise ApiError(400, "the body is empty; send a JSON object (Content-Type: application/json)")
    try:
        # The standard library keeps integers exact (orjson makes those past 64 bits floats);
        # NaN and Infinity are not JSON, and nesting deep enough to exhaust the stack is refused.
        body = json.loads(data, parse_constant=_not_json, parse_float=_finite_float, parse_int=_bounded_int)
    except (ValueError, RecursionError) as exc:
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ApiError(400, f"the body is not valid JSON ({why}); send a JSON object") from exc
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object ({{...}}), not {type(body).__name__}")
    return body


B = TypeVar("B", bound=BaseModel)


async def parse_body(request: web.Request, model: type[B]) -> B:
    """The JSON body as `model`, or a 400 naming each wrong field."""
    body = await read_json(request)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}"
                             for e in exc.errors(include_url=False))
        raise ApiError(400, f"bad request body: {problems} (see docs/api.md or GET /api/openapi.json)") from exc


async def caller_of(request: web.Request) -> Caller:
    """Authenticate the request; cached on the request."""
    if "caller" in request:
        return request["caller"]  # type: ignore[no-any-return]
    context: Context = request.app["context"]
    header = request.headers.get("Authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise ApiError(401, "send `Authorization: Bearer <token>`; run `evalkit login URL` or set EVALKIT_TOKEN")
    secret = secret.strip()
    principal = await asyncio.to_thread(context.access.principal_for_token, secret)
    caller: Caller | None = None
    if principal is not None:
        roles = {} if principal.role == "admin" else await asyncio.to_thread(context.access.roles_of, principal.name)
        caller = Caller(principal.name, principal.role, frozenset(roles), roles=roles)
    else:
        holder = await asyncio.to_thread(context.access.key_holder, secret)
        if holder is not None:
            agent = holder.agent
            if "read" not in holder.scopes:
                raise ApiError(403, f"this ingest key of {agent.agent_id} has the scope(s) "
                                    f"{', '.join(sorted(holder.scopes))}: it sends spans to the OTLP ports but "
                                    "reads nothing here. To read, use a user token (`evalkit login URL`) or a key "
                                    f"made with `evalkit agents keys create {agent.agent_id} --scope read`")
            caller = Caller(f"key:{agent.agent_id}", "key", frozenset({agent.workspace}), agent.agent_id,
                            roles={agent.workspace: "reader"}, scopes=holder.scopes)
    if caller is None:
        raise ApiError(401, "the token is unknown or revoked; run `evalkit login URL` with a valid token")
    request["caller"] = caller
    return caller


def agent_view(agent: Agent) -> dict[str, Any]:
    return {
        "agent": agent.agent_id, "name": agent.name, "workspace": agent.workspace, "kind": agent.kind,
        "description": agent.description, "harness_url": agent.harness_url,
        "max_concurrent_runs": agent.max_concurrent_runs,
        "trajectory_wait_seconds": agent.trajectory_wait_seconds,
        "session_attribute": agent.session_attribute, "archived": agent.archived,
        "created_at": agent.created_at,
    }


def key_view(key: IngestKey) -> dict[str, Any]:
    return {"key_id": key.key_id, "prefix": key.prefix, "agent": key.agent_id, "created_at": key.created_at,
            "revoked": key.revoked, "scopes": list(key.scopes)}


def token_view(token: ApiToken) -> dict[str, Any]:
    return {"token_id": token.token_id, "name": token.principal, "role": token.role,
            "created_at": token.created_at, "last_used_at": token.last_used_at, "revoked": token.revoked}


async def _info(request: web.Request) -> web.Response:
    """Where clients send spans, without a token: the SDK discovers its OTLP endpoint here."""
    from importlib.metadata import PackageNotFoundError, version

    context: Context = request.app["context"]
    try:
        evalkit_version = version("evalkit")
    except PackageNotFoundError:
        evalkit_version = "unknown"
    ports = context.extras.get("ports", {})
    host = context.settings.public_host or context.settings.host
    if host in ("0.0.0.0", "::"):
        host = request.url.host or "127.0.0.1"
    http_port = ports.get("otlp_http", context.settings.otlp_http_port)
    grpc_port = ports.get("grpc", context.settings.grpc_port)
    return json_response({"version": evalkit_version, "otlp_http_url": f"http://{host}:{http_port}",
                          "otlp_grpc_endpoint": f"{host}:{grpc_port}", "api_url": str(request.url.origin())})


async def _openapi(_request: web.Request) -> web.Response:
    """The OpenAPI document of every route (evalkit/openapi.json, built by evalkit/openapi.py); no token."""
    from evalkit.openapi import kept_document

    return web.Response(body=kept_document(), content_type="application/json")


async def _healthz(request: web.Request) -> web.Response:
    context: Context = request.app["context"]
    ready = context.extras.get("ready", lambda: True)()
    # Ready but failing to write (disk full, store gone): not healthy, and why.
    problem = context.extras.get("problem", lambda: None)() if ready else None
    if problem is not None:
        return json_response({"status": "failing", "reason": problem, "store": context.store.redacted_url,
                              "store_ready": True}, status=503)
    return json_response({"status": "ok" if ready else "starting", "store": context.store.redacted_url,
                          "store_ready": ready}, status=200 if ready else 503)


async def _metrics(request: web.Request) -> web.Response:
    context: Context = request.app["context"]
    # In a thread: the engine's memory gauge asks the store, which may be busy with a long read.
    body = await asyncio.to_thread(context.metrics.exposition)
    return web.Response(body=body, content_type="text/plain",
                        charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})


async def _create_workspace(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    if caller.role not in ("admin", "user"):
        raise ApiError(403, "an ingest key cannot create workspaces; use a user or admin token")
    name = (await parse_body(request, NamedBody)).name
    context: Context = request.app["context"]

    def create() -> None:
        context.access.create_workspace(name, "shared")
        if caller.role == "user":
            context.access.set_member(name, caller.name, "owner", added_by=caller.name)

    await asyncio.to_thread(create)
    return json_response({"name": name}, status=201)


async def _list_workspaces(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    context: Context = request.app["context"]
    names = await asyncio.to_thread(context.access.list_workspaces)
    visible = [n for n in names if caller.is_admin or n in caller.workspaces]
    return json_response({"workspaces": visible, "roles": {n: caller.role_in(n) for n in visible}})


async def _create_user(request: web.Request) -> web.Response:
    (await caller_of(request)).require_admin()
    name = (await parse_body(request, NamedBody)).name
    context: Context = request.app["context"]
    token = await asyncio.to_thread(context.access.create_user, name)
    return json_response({"name": name, "workspace": name, "token": token,
                          "note": "shown once: store it now; evalkit keeps only its hash"}, status=201)


async def _create_user_token(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    name = request.match_info["name"]
    if not caller.is_admin and not (caller.role == "user" and caller.name == name):
        raise ApiError(403, "only the server admin or the user itself may create a user's tokens")
    context: Context = request.app["context"]
    await asyncio.to_thread(context.access.user_tokens_allowed, name)
    token = await asyncio.to_thread(context.access.create_token, name, "user")
    return json_response({"name": name, "token": token,
                          "note": "shown once: store it now; evalkit keeps only its hash"}, status=201)


def _token_owner(caller: Caller, name: str) -> None:
    """The admin manages everyone's tokens (its own under the name "admin"); a user only their own."""
    if not caller.is_admin and not (caller.role == "user" and caller.name == name):
        raise ApiError(403, f"only the server admin or {name!r} itself may see or revoke {name!r}'s tokens")


async def _list_user_tokens(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    name = request.match_info["name"]
    _token_owner(caller, name)
    context: Context = request.app["context"]
    if name != "admin":
        await asyncio.to_thread(context.access.user_tokens_allowed, name)
    tokens = await asyncio.to_thread(context.access.list_tokens, name)
    return json_response({"name": name, "tokens": [token_view(t) for t in tokens]})


async def _revoke_user_token(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    name, token_id = request.match_info["name"], request.match_info["token_id"]
    _token_owner(caller, name)
    context: Context = request.app["context"]
    token = await asyncio.to_thread(context.access.revoke_token, name, token_id)
    return json_response(token_view(token))


async def _me(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    context: Context = request.app["context"]

    def describe() -> list[dict[str, Any]]:
        names = context.access.list_workspaces() if caller.is_admin else sorted(caller.workspaces)
        return [{"name": n, "kind": context.access.workspace_kind(n), "role": caller.role_in(n)} for n in names]

    personal = None if caller.role == "key" else caller.name
    return json_response({"name": caller.name, "role": caller.role, "personal_workspace": personal,
                          "workspaces": await asyncio.to_thread(describe)})


async def _members(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    workspace = request.match_info["workspace"]
    await require_existing_workspace(request, caller, workspace)
    caller.require_role(workspace, "reader", "list members")
    context: Context = request.app["context"]
    members = await asyncio.to_thread(context.access.members, workspace)
    return json_response({"workspace": workspace, "members": [
        {"user": m.user, "role": m.role, "added_at": m.added_at} for m in members]})


def _check_member_change(caller: Caller, workspace: str, old: str | None, new: str | None) -> None:
    needed = "owner" if "owner" in (old, new) or "admin" in (old, new) else "admin"
    caller.require_role(workspace, needed, "change members" if needed == "admin" else "change owners or admins")


async def _set_member(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    workspace, user = request.match_info["workspace"], request.match_info["user"]
    body = await read_json(request)
    role = body.get("role")
    if role not in ROLES:
        raise ApiError(400, f"role {role!r} is not known; use one of {', '.join(ROLES)}")
    context: Context = request.app["context"]

    def change() -> None:
        if context.access.workspace_kind(workspace) == "personal":
            raise ApiError(400, f"{workspace!r} is a personal workspace; share work through a shared workspace "
                                "(`POST /api/workspaces`)")
        if not context.access.user_exists(user):
            raise ApiError(404, f"user {user!r} does not exist; the server admin creates users with "
                                "`POST /api/users`")
        current = {m.user: m.role for m in context.access.members(workspace)}
        _check_member_change(caller, workspace, current.get(user), role)
        if current.get(user) == "owner" and role != "owner" and list(current.values()).count("owner") == 1:
            raise ApiError(409, f"{user!r} is the last owner of {workspace!r}; make someone else owner first")
        context.access.set_member(workspace, user, role, added_by=caller.name)

    await require_existing_workspace(request, caller, workspace)
    await asyncio.to_thread(change)
    return json_response({"workspace": workspace, "user": user, "role": role})


async def _remove_member(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    workspace, user = request.match_info["workspace"], request.match_info["user"]
    await require_existing_workspace(request, caller, workspace)
    context: Context = request.app["context"]

    def remove() -> bool:
        current = {m.user: m.role for m in context.access.members(workspace)}
        if user not in current:
            return False
        _check_member_change(caller, workspace, current[user], None)
        if current[user] == "owner" and list(current.values()).count("owner") == 1:
            raise ApiError(409, f"{user!r} is the last owner of {workspace!r}; make someone else owner first")
        context.access.set_member(workspace, user, current[user], added_by=caller.name, removed=True)
        return True

    removed = await asyncio.to_thread(remove)
    return json_response({"workspace": workspace, "user": user, "removed": removed})


async def _create_agent(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    body = await parse_body(request, CreateAgentBody)
    name, workspace = body.name, body.workspace
    if "@" in name and not workspace:
        name, workspace = split_agent_id(name)
    if not workspace:
        raise ApiError(400, "say which workspace the agent belongs to: {\"name\": ..., \"workspace\": ...}")
    caller.require_workspace(workspace)
    if not caller.is_admin and caller.role == "key":
        raise ApiError(403, "an ingest key cannot create agents; use a user or admin token")
    caller.require_role(workspace, "admin", "create agents")
    context: Context = request.app["context"]
    options = body.model_dump(include={"kind", "description", "harness_url", "max_concurrent_runs",
                                       "trajectory_wait_seconds", "session_attribute"})
    agent = await asyncio.to_thread(lambda: context.access.create_agent(name, workspace, **options))
    return json_response(agent_view(agent), status=201)


async def _list_agents(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    context: Context = request.app["context"]
    workspace = request.query.get("workspace")
    if workspace:
        await require_existing_workspace(request, caller, workspace)
    agents = await asyncio.to_thread(context.access.list_agents, workspace)
    return json_response({"agents": [agent_view(a) for a in agents
                                     if caller.is_admin or a.workspace in caller.workspaces]})


async def agent_of(request: web.Request, *, write: bool = False) -> Agent:
    """The agent named in the path, checked against the caller's workspaces."""
    caller = await caller_of(request)
    agent_id = request.match_info["agent"]
    _, workspace = split_agent_id(agent_id)
    caller.require_workspace(workspace)
    if write and caller.role == "key":
        raise ApiError(403, "an ingest key can send spans and read its workspace, not change it; "
                            "use a user or admin token")
    if write:
        caller.require_role(workspace, "admin", "manage agents and their keys")
    context: Context = request.app["context"]
    return await asyncio.to_thread(context.access.get_agent, agent_id)


async def _get_agent(request: web.Request) -> web.Response:
    return json_response(agent_view(await agent_of(request)))


async def _update_agent(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    body = await read_json(request)
    unknown = sorted(set(body) - set(AgentSettings.model_fields))
    if unknown:
        raise ApiError(400, f"unknown agent settings {unknown}; the settings are "
                            f"{', '.join(AgentSettings.model_fields)}")
    try:
        settings = AgentSettings.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False))
        raise ApiError(400, f"bad agent setting: {problems}") from exc
    changes = {k: v for k, v in settings.model_dump().items() if k in body and v is not None}
    if agent.kind == "harness" and changes.get("harness_url", agent.harness_url) == "":
        raise ApiError(400, "a harness agent needs harness_url, the address the service calls to start runs")
    return await _save_agent(request, dataclasses.replace(agent, **changes))


async def _archive_agent(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    return await _save_agent(request, dataclasses.replace(agent, archived=True))


async def _save_agent(request: web.Request, agent: Agent) -> web.Response:
    context: Context = request.app["context"]
    await asyncio.to_thread(context.access.update_agent, agent)
    return json_response(agent_view(agent))


async def _create_key(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    body = await read_json(request) if request.can_read_body else {}
    try:
        scopes = CreateKeyBody.model_validate(body).scopes
    except ValidationError as exc:
        raise ApiError(400, f"scopes={body.get('scopes')!r} is not valid: give a non-empty list of "
                            f"{', '.join(SCOPES)}, e.g. {{\"scopes\": [\"ingest\", \"read\"]}} "
                            "(default [\"ingest\"])") from exc
    context: Context = request.app["context"]
    secret, key = await asyncio.to_thread(context.access.create_key, agent.agent_id, tuple(scopes))
    return json_response({"key": secret, **key_view(key),
                          "note": "shown once: store it now; evalkit keeps only its hash"}, status=201)


async def _list_keys(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    context: Context = request.app["context"]
    keys = await asyncio.to_thread(context.access.list_keys, agent.agent_id)
    return json_response({"keys": [key_view(k) for k in keys]})


async def _revoke_key(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    context: Context = request.app["context"]
    await asyncio.to_thread(context.access.revoke_key, agent.agent_id, request.match_info["key_id"])
    return json_response({"revoked": request.match_info["key_id"]})


# The UI's HTML error page (ui/page.py `error_page`), set when the UI mounts: a browser opening an address
# with no page gets a page with a way back, not the API's JSON pointing at the OpenAPI document.
BROWSER_ERROR_PAGE = web.AppKey[Callable[[web.Request, int, str], web.StreamResponse]]("browser_error_page")


def _wants_a_page(request: web.Request) -> bool:
    """A browser asking for an address outside /api: its Accept header ranks text/html above JSON."""
    if request.path == "/api" or request.path.startswith("/api/") or BROWSER_ERROR_PAGE not in request.app:
        return False
    ranks: dict[str, float] = {}
    for part in request.headers.get("Accept", "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        ranks[media.lower()] = q

    def rank(media: str) -> float:
        kind = media.split("/")[0] + "/*"
        return ranks.get(media, ranks.get(kind, ranks.get("*/*", 0.0)))

    return rank("text/html") > 0 and rank("text/html") > rank("application/json")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """Every API error's body: `{"error": {"status", "message"}}` (the UI's JSON twins answer with it too)."""
    return json_response({"error": {"status": status, "message": message}}, status=status, headers=headers)


def _too_large(request: web.Request, exc: web.HTTPException) -> web.Response:
    limit = request.app["context"].settings.max_api_body_bytes
    return error_response(413, f"the request body is larger than this service takes ({limit:,} bytes, "
                       "EVALKIT_MAX_API_BODY_BYTES); send less at once (split a dataset into several pushes) "
                       "or ask the operator to raise EVALKIT_MAX_API_BODY_BYTES")


@web.middleware
async def _errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                  ) -> web.StreamResponse:
    """Every failure as the JSON error shape, with a status the caller can act on.

    Bad input is refused where it is read (400 naming the parameter); what reaches the last
    branches is a fault of ours: a 500 carrying a request id to quote, the details only in the
    log (the store's text can quote the query and the data, which are not the caller's to see).
    """
    context: Context = request.app["context"]
    route = request.match_info.route.resource.canonical if request.match_info.route.resource else "unmatched"
    try:
        response = await handler(request)
    except (ApiError, AccessError) as exc:
        response = error_response(exc.status, str(exc))
    except StoreUnavailable as exc:
        response = error_response(503, f"{exc}; retry shortly",
                                  {"Retry-After": str(context.settings.retry_after_seconds)})
    except web.HTTPRequestEntityTooLarge as exc:
        response = _too_large(request, exc)
    except web.HTTPException as exc:
        if exc.status == 404 and _wants_a_page(request):
            response = request.app[BROWSER_ERROR_PAGE](
                request, 404, f"there is no page at {request.path[:200]}; check the address, or start from the "
                              "home page")
        elif exc.status >= 400:
            response = error_response(exc.status, _http_error_message(request, exc))
        else:
            raise  # redirects are answers, not errors
    except asyncio.CancelledError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS):
            response = _fault(request, exc)
        else:
            _log.warning("storage refused a write on %s %s: %s", request.method, request.path, exc)
            response = error_response(503, "the service cannot write to its storage right now (disk full or "
                                           "read-only); retry shortly",
                                      {"Retry-After": str(context.settings.retry_after_seconds)})
    except Exception as exc:
        response = _fault(request, exc)
    context.metrics.http_requests.labels(route, str(response.status)).inc()
    return response


def _http_error_message(request: web.Request, exc: web.HTTPException) -> str:
    """aiohttp's own refusals (no such route, wrong method) said as this API says things."""
    if exc.text and not exc.text.startswith(f"{exc.status}:"):
        return exc.text
    if exc.status == 404:
        return (f"no route {request.method} {request.path[:200]}; the routes are listed in GET /api/openapi.json "
                "(docs/api.md)")
    if isinstance(exc, web.HTTPMethodNotAllowed):
        return (f"{request.method} is not a method of {request.path[:200]}; use "
                f"{', '.join(sorted(exc.allowed_methods))} (GET /api/openapi.json lists them)")
    return exc.reason


def _fault(request: web.Request, exc: BaseException) -> web.StreamResponse:
    request_id = uuid.uuid4().hex[:16]
    _log.error("request %s: %s %s failed", request_id, request.method, request.path_qs[:500], exc_info=exc)
    if isinstance(exc, StoreError):
        what = "the store refused a query"
    else:
        what = "the service failed"
    message = (f"{what} (request id {request_id}; the details are in the server log under this id). "
               "This is a bug: report it with the request id and what you sent")
    if _wants_a_page(request):
        # A browser on a UI page gets the UI's error page, not a line of JSON; if that page cannot be made
        # either (the fault may be in rendering), the JSON still carries the request id.
        try:
            return request.app[BROWSER_ERROR_PAGE](request, 500, message)
        except Exception:
            _log.exception("request %s: the error page failed too", request_id)
    return error_response(500, message)


# The longest request line (method, path and query) the API port reads: aiohttp's default, 8,190 bytes, answered a
# longer one with its own plain-text 400 before any route saw it, and a filter or search URL can be longer.
MAX_URL_BYTES = 64 * 1024


def api_app(context: Context, modules: Iterable[RouteModule] = ()) -> web.Application:
    app = web.Application(middlewares=[_errors], client_max_size=context.settings.max_api_body_bytes)
    app["context"] = context
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/api/info", _info)
    app.router.add_get("/api/openapi.json", _openapi)
    app.router.add_get("/metrics", _metrics)
    app.router.add_post("/api/workspaces", _create_workspace)
    app.router.add_get("/api/workspaces", _list_workspaces)
    app.router.add_post("/api/agents", _create_agent)
    app.router.add_get("/api/agents", _list_agents)
    app.router.add_get("/api/agents/{agent}", _get_agent)
    app.router.add_patch("/api/agents/{agent}", _update_agent)
    app.router.add_post("/api/agents/{agent}/archive", _archive_agent)
    app.router.add_post("/api/users", _create_user)
    app.router.add_post("/api/users/{name}/tokens", _create_user_token)
    app.router.add_get("/api/users/{name}/tokens", _list_user_tokens)
    app.router.add_delete("/api/users/{name}/tokens/{token_id}", _revoke_user_token)
    app.router.add_get("/api/me", _me)
    app.router.add_get("/api/workspaces/{workspace}/members", _members)
    app.router.add_put("/api/workspaces/{workspace}/members/{user}", _set_member)
    app.router.add_delete("/api/workspaces/{workspace}/members/{user}", _remove_member)
    app.router.add_post("/api/agents/{agent}/keys", _create_key)
    app.router.add_get("/api/agents/{agent}/keys", _list_keys)
    app.router.add_delete("/api/agents/{agent}/keys/{key_id}", _revoke_key)
    for module in modules:
        module(app, context)
    # The web UI (ui/): pages on this port over the routes above, so mounted after them.
    from evalkit.ui.routes import add_routes as ui_routes

    ui_routes(app, context)
    return app
