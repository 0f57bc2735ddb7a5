"""The API port: health, metrics, and the admin routes for workspaces, agents and keys.

Other parts of the service (trajectory, scoring) add their routes through
`RouteModule`s; this module owns authentication and the error shape:
`{"error": {"status": 404, "message": "...what went wrong and what to do next"}}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from evalkit.access import Access, AccessError, Agent, IngestKey, split_agent_id
from evalkit.metrics import Metrics
from evalkit.settings import Settings
from evalkit.store import Store, StoreError, StoreUnavailable


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Caller:
    """Who is calling: the admin, a user, or an ingest key (which reads its own workspace)."""

    name: str
    role: str  # "admin", "user" or "key"
    workspaces: frozenset[str] = field(default_factory=frozenset)
    agent_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def require_admin(self) -> None:
        if not self.is_admin:
            raise ApiError(403, "this route needs the admin token (printed at first start, or in "
                                "<data-dir>/admin-token)")

    def require_workspace(self, workspace: str) -> None:
        if self.is_admin or workspace in self.workspaces:
            return
        raise ApiError(404, f"workspace {workspace!r} is not visible to this token")


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


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=json.dumps(data, default=str), status=status, content_type="application/json",
                        headers=headers)


async def read_json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body must be a JSON object: {exc}") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body


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
        workspaces = frozenset(context.extras.get("workspaces_of", lambda _n: ())(principal.name))
        caller = Caller(principal.name, principal.role, workspaces)
    else:
        agent = await asyncio.to_thread(context.access.agent_for_key, secret)
        if agent is not None:
            caller = Caller(f"key:{agent.agent_id}", "key", frozenset({agent.workspace}), agent.agent_id)
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
            "revoked": key.revoked}


async def _healthz(request: web.Request) -> web.Response:
    context: Context = request.app["context"]
    ready = context.extras.get("ready", lambda: True)()
    return json_response({"status": "ok" if ready else "starting", "store": context.store.redacted_url,
                          "store_ready": ready}, status=200 if ready else 503)


async def _metrics(request: web.Request) -> web.Response:
    context: Context = request.app["context"]
    return web.Response(body=context.metrics.exposition(), content_type="text/plain",
                        charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})


async def _create_workspace(request: web.Request) -> web.Response:
    (await caller_of(request)).require_admin()
    body = await read_json(request)
    name = str(body.get("name", ""))
    context: Context = request.app["context"]
    await asyncio.to_thread(context.access.create_workspace, name, str(body.get("kind", "shared")))
    return json_response({"name": name}, status=201)


async def _list_workspaces(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    context: Context = request.app["context"]
    names = await asyncio.to_thread(context.access.list_workspaces)
    return json_response({"workspaces": [n for n in names if caller.is_admin or n in caller.workspaces]})


async def _create_agent(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    body = await read_json(request)
    name, workspace = str(body.get("name", "")), str(body.get("workspace", ""))
    if "@" in name and not workspace:
        name, workspace = split_agent_id(name)
    if not workspace:
        raise ApiError(400, "say which workspace the agent belongs to: {\"name\": ..., \"workspace\": ...}")
    caller.require_workspace(workspace)
    if not caller.is_admin and caller.role == "key":
        raise ApiError(403, "an ingest key cannot create agents; use a user or admin token")
    context: Context = request.app["context"]
    options = {k: body[k] for k in ("kind", "description", "harness_url", "max_concurrent_runs",
                                    "trajectory_wait_seconds", "session_attribute") if k in body}
    agent = await asyncio.to_thread(lambda: context.access.create_agent(name, workspace, **options))
    return json_response(agent_view(agent), status=201)


async def _list_agents(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    context: Context = request.app["context"]
    agents = await asyncio.to_thread(context.access.list_agents, request.query.get("workspace"))
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
    context: Context = request.app["context"]
    return await asyncio.to_thread(context.access.get_agent, agent_id)


async def _get_agent(request: web.Request) -> web.Response:
    return json_response(agent_view(await agent_of(request)))


async def _create_key(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    context: Context = request.app["context"]
    secret, key = await asyncio.to_thread(context.access.create_key, agent.agent_id)
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


@web.middleware
async def _errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                  ) -> web.StreamResponse:
    context: Context = request.app["context"]
    route = request.match_info.route.resource.canonical if request.match_info.route.resource else "unmatched"
    try:
        response = await handler(request)
    except ApiError as exc:
        response = json_response({"error": {"status": exc.status, "message": str(exc)}}, status=exc.status)
    except AccessError as exc:
        response = json_response({"error": {"status": exc.status, "message": str(exc)}}, status=exc.status)
    except StoreUnavailable as exc:
        response = json_response({"error": {"status": 503, "message": f"{exc}; retry shortly"}}, status=503,
                                 headers={"Retry-After": "2"})
    except StoreError as exc:
        response = json_response({"error": {"status": 500, "message": f"the store refused a query: {exc}"}},
                                 status=500)
    except web.HTTPException as exc:
        response = json_response({"error": {"status": exc.status, "message": exc.reason}}, status=exc.status)
    context.metrics.http_requests.labels(route, str(response.status)).inc()
    return response


def api_app(context: Context, modules: Iterable[RouteModule] = ()) -> web.Application:
    app = web.Application(middlewares=[_errors], client_max_size=256 * 1024 * 1024)
    app["context"] = context
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_post("/api/workspaces", _create_workspace)
    app.router.add_get("/api/workspaces", _list_workspaces)
    app.router.add_post("/api/agents", _create_agent)
    app.router.add_get("/api/agents", _list_agents)
    app.router.add_get("/api/agents/{agent}", _get_agent)
    app.router.add_post("/api/agents/{agent}/keys", _create_key)
    app.router.add_get("/api/agents/{agent}/keys", _list_keys)
    app.router.add_delete("/api/agents/{agent}/keys/{key_id}", _revoke_key)
    for module in modules:
        module(app, context)
    return app
