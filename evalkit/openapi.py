"""The OpenAPI 3.1 description of every HTTP route, API port and OTLP/HTTP port.

Built here from the route table below and the request models (pydantic) the routes validate with;
the built document is kept in the repository as `evalkit/openapi.json` and served from it at
`GET /api/openapi.json`. `tests/api/test_openapi.py` fails when a route of the running apps is not
described, or when the kept copy is not what this module builds: after changing a route or a
request model, run `python -m evalkit.openapi` to rewrite it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

JSON = "application/json"
ANY_OBJECT: dict[str, Any] = {"type": "object"}
ERROR_REF = {"$ref": "#/components/schemas/Error"}


@dataclass(frozen=True)
class P:
    """A parameter: `where` is path or query."""

    name: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    description: str = ""
    where: str = "query"
    required: bool = False


@dataclass(frozen=True)
class Op:
    method: str
    path: str
    summary: str
    tag: str
    params: tuple[P, ...] = ()
    # A request body: a pydantic model, a JSON schema, or a media type name for a raw body.
    body: type[BaseModel] | dict[str, Any] | str | None = None
    body_required: bool = True
    ok: int = 200
    ok_media: tuple[str, ...] = (JSON,)
    ok_schema: dict[str, Any] = field(default_factory=lambda: dict(ANY_OBJECT))
    also_ok: tuple[int, ...] = ()  # more success codes with the same body (200 for an idempotent create)
    auth: str = "token"  # token (bearer: admin, user, or an ingest key with read), none, session (UI cookie)
    port: str = "api"
    redirects: bool = False  # may answer 303 to /login
    not_found: dict[str, Any] | None = None  # a 404 unlike the error shape (aiohttp's static files)


def _int(minimum: int = 0, maximum: int | None = None, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return schema


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


BOOL = _enum("true", "false", "1", "0", "yes", "no")
TIME = {"type": "string", "description": "ISO 8601 (2025-01-31T12:00:00Z) or unix seconds, 1970..2116"}
AGENT = P("agent", {"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]*@[a-z0-9][a-z0-9._-]*$"},
          "the agent, name@workspace", "path", True)
WORKSPACE = P("workspace", {"type": "string"}, "a workspace name", "path", True)
SESSION = P("session_id", {"type": "string", "minLength": 1}, "the session id the spans carry", "path", True)
EXPERIMENT = P("id", {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}, "the experiment id", "path", True)
DATASET = P("dataset", {"type": "string"}, "the dataset, name@workspace (or name in your personal workspace)",
            "path", True)
USER = P("name", {"type": "string"}, "the user (the admin's own tokens: admin)", "path", True)
PAGE = P("page", _int(1), "page number")
FORMAT_JSON = P("format", _enum("html", "json"), "html (the default) or json: the page's data as JSON (every page "
                "has this twin); another value is a 400 saying what to use")


def _obj(required: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": {**required, **optional}}


def _list_of(name: str, item: dict[str, Any]) -> dict[str, Any]:
    return _obj({name: {"type": "array", "items": item}})


STRING = {"type": "string"}
NUMBER = {"type": "number"}
TOKEN = _obj({"token_id": STRING, "name": STRING, "role": STRING, "created_at": NUMBER,
              "last_used_at": {"type": ["number", "null"]}, "revoked": {"type": "boolean"}})
KEY = _obj({"key_id": STRING, "prefix": STRING, "agent": STRING, "created_at": NUMBER, "revoked": {"type": "boolean"},
            "scopes": {"type": "array", "items": _enum("ingest", "read")}})
AGENT_VIEW = _obj({"agent": STRING, "name": STRING, "workspace": STRING, "kind": _enum("code", "harness"),
                   "archived": {"type": "boolean"}, "max_concurrent_runs": {"type": "integer"},
                   "trajectory_wait_seconds": NUMBER})
SESSION_ROW = _obj({"session_id": STRING, "status": STRING, "span_count": {"type": "integer"},
                    "cost_usd": {"type": ["number", "null"]}, "cost_priced": {"type": "boolean"},
                    "first_seen": STRING, "last_seen": STRING})


def _routes() -> list[Op]:
    from evalkit.api_bodies import AgentSettings, CreateAgentBody, CreateKeyBody, MemberBody, NamedBody
    from evalkit.scoring.experiments import STATUSES as EXPERIMENT_STATUSES
    from evalkit.scoring.models import (
        ChangeExperiment,
        CreateExperiment,
        EvaluateRequest,
        GateRequest,
        LeaseRequest,
        PublishEvaluations,
        PushDataset,
        RecordRun,
        RefetchRequest,
        ResumeRequest,
        ReviewRequest,
    )

    time_range = (P("since", TIME), P("until", TIME))
    html = ("text/html",)
    return [
        # -- the service ------------------------------------------------------------------
        Op("get", "/healthz", "Is the service up and its store ready (503 while starting)", "service", auth="none"),
        Op("get", "/api/info", "Where clients send spans (the SDK discovers its OTLP endpoint here)", "service",
           auth="none"),
        Op("get", "/metrics", "Prometheus metrics", "service", auth="none", ok_media=("text/plain",),
           ok_schema={"type": "string"}),
        Op("get", "/api/openapi.json", "This document", "service", auth="none"),
        # -- access -------------------------------------------------------------------------
        Op("post", "/api/workspaces", "Create a shared workspace (its creator becomes owner)", "access",
           body=NamedBody, ok=201),
        Op("get", "/api/workspaces", "The workspaces visible to the caller, with the caller's role", "access",
           ok_schema=_obj({"workspaces": {"type": "array", "items": STRING}, "roles": {"type": "object"}})),
        Op("get", "/api/me", "Who the token is, and its workspaces", "access",
           ok_schema=_obj({"name": STRING, "role": _enum("admin", "user", "key"), "workspaces": {"type": "array"}})),
        Op("get", "/api/workspaces/{workspace}/members", "A workspace's members (reader)", "access",
           (WORKSPACE,)),
        Op("put", "/api/workspaces/{workspace}/members/{user}", "Add a member or change their role (admin; "
           "owner for owners and admins)", "access", (WORKSPACE, P("user", where="path", required=True)),
           body=MemberBody),
        Op("delete", "/api/workspaces/{workspace}/members/{user}", "Remove a member", "access",
           (WORKSPACE, P("user", where="path", required=True))),
        Op("post", "/api/users", "Create a user, their personal workspace and a first token (admin)", "access",
           body=NamedBody, ok=201),
        Op("post", "/api/users/{name}/tokens", "Another API token for a user (admin or the user)", "access",
           (USER,), body=ANY_OBJECT, body_required=False, ok=201),
        Op("get", "/api/users/{name}/tokens", "A user's tokens: id, created, last used, revoked; never the secret "
           "(admin or the user)", "access", (USER,), ok_schema=_list_of("tokens", TOKEN)),
        Op("delete", "/api/users/{name}/tokens/{token_id}", "Revoke a token: refused from the next request on",
           "access", (USER, P("token_id", where="path", required=True)), ok_schema=TOKEN),
        # -- agents and keys ------------------------------------------------------------------
        Op("post", "/api/agents", "Create an agent (workspace admin)", "agents", body=CreateAgentBody, ok=201),
        Op("get", "/api/agents", "The agents visible to the caller", "agents", (P("workspace"),),
           ok_schema=_list_of("agents", AGENT_VIEW)),
        Op("get", "/api/agents/{agent}", "One agent", "agents", (AGENT,), ok_schema=AGENT_VIEW),
        Op("patch", "/api/agents/{agent}", "Change an agent's settings (workspace admin)", "agents", (AGENT,),
           body=AgentSettings),
        Op("post", "/api/agents/{agent}/archive", "Archive an agent: no new experiments or keys; its data stays",
           "agents", (AGENT,)),
        Op("post", "/api/agents/{agent}/keys", "Create an ingest key, shown once (scopes: ingest by default, "
           "read)", "agents", (AGENT,), body=CreateKeyBody, body_required=False, ok=201),
        Op("get", "/api/agents/{agent}/keys", "An agent's keys (prefix, scopes, revoked; never the secret)",
           "agents", (AGENT,), ok_schema=_list_of("keys", KEY)),
        Op("delete", "/api/agents/{agent}/keys/{key_id}", "Revoke an ingest key", "agents",
           (AGENT, P("key_id", where="path", required=True))),
        # -- sessions and trajectories ----------------------------------------------------------
        Op("get", "/api/agents/{agent}/sessions", "An agent's sessions, a page at a time", "trajectories",
           (AGENT, *time_range, P("sort", _enum("last_seen", "first_seen", "spans", "cost")),
            P("limit", _int(1, 1000, 50)), P("offset", _int(0, 1_000_000_000, 0)),
            P("cursor", description="the `next_cursor` of the page before"), P("errors", BOOL),
            P("model"), P("min_cost", {"type": "number"}, "sessions costing at least this many USD"),
            P("search", description="sessions whose id holds this text, in any case")),
           ok_schema=_list_of("sessions", SESSION_ROW)),
        Op("get", "/api/agents/{agent}/sessions/{session_id}", "A session's spans and summary", "trajectories",
           (AGENT, SESSION, P("limit", _int(1)), P("offset", _int(0, 1_000_000_000, 0)))),
        Op("get", "/api/agents/{agent}/sessions/{session_id}/trajectory", "The session as an ATIF trajectory",
           "trajectories", (AGENT, SESSION, P("wait", {"type": "number", "minimum": 0},
                                                  "long-poll up to this many seconds for the session to settle"),
                            P("validate", _enum("schema")))),
        Op("get", "/api/agents/{agent}/sessions/{session_id}/media", "An image a trajectory of the session references",
           "trajectories", (AGENT, SESSION, P("ref", description="the image part's `source.path`, "
                                                 "`evalkit-span://<trace id>/<span id>/<input or result>/<n>`",
                                             required=True)),
           ok_media=("image/png", "image/jpeg", "image/gif", "image/webp"),
           ok_schema={"type": "string", "format": "binary"}),
        Op("get", "/api/agents/{agent}/trajectories.jsonl", "Trajectories in bulk, one JSON document a line",
           "trajectories", (AGENT, *time_range, P("session_id", description="repeatable"),
                            P("status", description="comma-separated: valid, partial, invalid")),
           ok_media=("application/x-ndjson",), ok_schema={"type": "string"}),
        Op("get", "/api/agents/{agent}/mapping", "The agent's mapping overrides and their versions",
           "trajectories", (AGENT, P("version", _int(0)))),
        Op("put", "/api/agents/{agent}/mapping", "Replace the agent's mapping overrides (workspace admin)",
           "trajectories", (AGENT,), body=ANY_OBJECT),
        # -- workspace evaluators and blobs -----------------------------------------------------
        Op("put", "/api/workspaces/{workspace}/evaluators/{name}", "Register a remote evaluator (admin)",
           "scoring", (WORKSPACE, P("name", where="path", required=True)), body=ANY_OBJECT),
        Op("get", "/api/workspaces/{workspace}/evaluators", "A workspace's evaluators", "scoring", (WORKSPACE,)),
        Op("put", "/api/workspaces/{workspace}/blobs/{sha256}", "Store a fixture file by its SHA-256 (writer)",
           "scoring", (WORKSPACE, P("sha256", {"type": "string", "pattern": "^[0-9a-f]{64}$"}, where="path",
                                    required=True)), body="application/octet-stream", ok=201, also_ok=(200,)),
        Op("get", "/api/workspaces/{workspace}/blobs/{sha256}", "A fixture file's bytes", "scoring",
           (WORKSPACE, P("sha256", {"type": "string"}, where="path", required=True)),
           ok_media=("application/octet-stream",), ok_schema={"type": "string", "format": "binary"}),
        Op("get", "/api/workspaces/{workspace}/blobs", "A workspace's fixture files", "scoring",
           (WORKSPACE, P("prefix"))),
        # -- datasets ---------------------------------------------------------------------------
        Op("post", "/api/datasets/{dataset}", "Push a dataset version (writer)", "datasets", (DATASET,),
           body=PushDataset, ok=201, also_ok=(200,)),
        Op("get", "/api/datasets", "The datasets visible to the caller", "datasets", (P("workspace"),)),
        Op("get", "/api/datasets/{dataset}", "A dataset version and its cases", "datasets",
           (DATASET, P("version"))),
        Op("get", "/api/datasets/{dataset}/versions", "A dataset's versions, newest first, a page at a time",
           "datasets", (DATASET, P("limit", _int(1, 1000, 50)), P("offset", _int(0, 1_000_000_000, 0)),
                        P("cursor", description="the `next_cursor` of the page before (not with offset)"))),
        Op("delete", "/api/datasets/{dataset}", "Delete a dataset (admin)", "datasets", (DATASET,)),
        Op("post", "/api/datasets/{dataset}/rename", "Rename a dataset (admin)", "datasets", (DATASET,),
           body={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        Op("put", "/api/datasets/{dataset}/cases/{case_id}/review", "Review a case (reviewer)", "datasets",
           (DATASET, P("case_id", where="path", required=True)), body=ReviewRequest),
        # -- experiments --------------------------------------------------------------------------
        Op("post", "/api/experiments", "Create an experiment (writer)", "experiments", body=CreateExperiment,
           ok=201, also_ok=(200,)),
        Op("get", "/api/experiments", "Experiments visible to the caller", "experiments",
           (P("workspace"), P("agent"), P("status", {"type": "string", "enum": list(EXPERIMENT_STATUSES)}),
            P("limit", _int(1, 1000, 50)))),
        Op("get", "/api/experiments/{id}", "One experiment with its progress and scores", "experiments",
           (EXPERIMENT,)),
        Op("patch", "/api/experiments/{id}", "Change an experiment's status, model, name or description",
           "experiments", (EXPERIMENT,), body=ChangeExperiment),
        Op("delete", "/api/experiments/{id}", "Delete an experiment (admin)", "experiments", (EXPERIMENT,)),
        Op("post", "/api/experiments/{id}/lease", "Take the experiment's run lease (writer)", "experiments",
           (EXPERIMENT,), body=LeaseRequest),
        Op("delete", "/api/experiments/{id}/lease", "Release the lease", "experiments",
           (EXPERIMENT, P("holder", required=True),
            P("reason", {"type": "string", "maxLength": 300},
              "why the runner stops (e.g. `interrupted`); starts the status reason of an experiment left running"))),
        Op("post", "/api/experiments/{id}/resume", "Resume an interrupted experiment (admin)", "experiments",
           (EXPERIMENT,), body=ResumeRequest),
        Op("get", "/api/experiments/{id}/cases", "The cases the experiment pinned", "experiments", (EXPERIMENT,)),
        Op("get", "/api/experiments/{id}/runs", "The experiment's runs, a page at a time", "experiments",
           (EXPERIMENT, P("case_id"), P("status"), P("attempts", _enum("final", "all")), P("evaluator"),
            P("failed", BOOL), P("evaluations", BOOL), P("limit", _int(1, 1000, 50)),
            P("offset", _int(0, 1_000_000_000, 0)),
            P("cursor", description="the `next_cursor` of the page before (not with offset)"))),
        Op("get", "/api/experiments/{id}/runs/pending", "The runs still to run", "experiments", (EXPERIMENT,)),
        Op("get", "/api/experiments/{id}/export", "The runs with their evaluations, for analysis", "experiments",
           (EXPERIMENT, P("format", _enum("jsonl", "csv")), P("case_id"), P("status"),
            P("attempts", _enum("final", "all")), P("evaluator"), P("failed", BOOL)),
           ok_media=("application/x-ndjson", "text/csv"), ok_schema={"type": "string"}),
        Op("get", "/api/experiments/{id}/runs/to-score", "The runs the SDK's Python evaluators score",
           "experiments", (EXPERIMENT, P("evaluator", description="repeatable"), P("rescore", BOOL),
                           P("include_trajectory", BOOL))),
        Op("post", "/api/experiments/{id}/runs", "Record a run (writer, with the lease)", "experiments",
           (EXPERIMENT,), body=RecordRun, ok=201, also_ok=(200,)),
        Op("get", "/api/experiments/{id}/runs/{run_id}/trajectory", "A run's trajectory", "experiments",
           (EXPERIMENT, P("run_id", where="path", required=True))),
        Op("get", "/api/experiments/{id}/sessions/{session_id}", "Whether a session is one of the experiment's "
           "runs", "experiments", (EXPERIMENT, SESSION)),
        Op("post", "/api/experiments/{id}/trajectories/refetch", "Read runs' trajectories again", "experiments",
           (EXPERIMENT,), body=RefetchRequest),
        Op("post", "/api/experiments/{id}/evaluations", "Publish evaluations of the SDK's Python evaluators",
           "experiments", (EXPERIMENT,), body=PublishEvaluations, ok=201),
        Op("post", "/api/experiments/{id}/evaluate", "Run the service evaluators", "experiments", (EXPERIMENT,),
           body=EvaluateRequest),
        Op("get", "/api/experiments/{id}/scorecard", "The scorecard (json, markdown or text)", "experiments",
           (EXPERIMENT, P("format", _enum("json", "markdown", "text")), P("baseline_id", _int(0)),
            P("alpha", {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})),
           ok_media=(JSON, "text/markdown", "text/plain"), ok_schema={}),
        Op("get", "/api/experiments/{id}/compare", "Compare with a baseline experiment", "experiments",
           (EXPERIMENT, P("baseline_id", _int(0), required=True),
            P("alpha", {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.05}),
            P("allow_incomplete", BOOL), P("format", _enum("json", "markdown"))),
           ok_media=(JSON, "text/markdown"), ok_schema={}),
        Op("post", "/api/experiments/{id}/gate", "Pass or fail a candidate against a baseline", "experiments",
           (EXPERIMENT,), body=GateRequest),
        # -- the web UI (HTML pages, a browser session cookie; each has its ?format=json twin) -----------
        Op("get", "/login", "The login page", "ui", (P("next"),), ok_media=html, ok_schema={"type": "string"},
           auth="none"),
        Op("post", "/login", "Log in with a token (form)", "ui", body="application/x-www-form-urlencoded",
           ok=303, ok_media=(), auth="none"),
        Op("get", "/logout", "The logout page (not logged in: 303 to /login)", "ui", ok_media=html,
           ok_schema={"type": "string"}, auth="none", redirects=True),
        Op("post", "/logout", "Log out (form)", "ui", body="application/x-www-form-urlencoded", ok=303,
           ok_media=(), auth="none"),
        Op("get", "/", "Home: workspaces, agents, recent experiments", "ui", (FORMAT_JSON,), ok_media=(*html, JSON),
           ok_schema={}, auth="session"),
        Op("get", "/static/{filename}", "The UI's static files", "ui",
           (P("filename", where="path", required=True),), ok_media=("text/css", "application/javascript"),
           ok_schema={"type": "string"}, auth="none",
           not_found={"description": "no such file (an empty body)",
                      "content": {"application/octet-stream": {"schema": {"type": "string", "maxLength": 0}}}}),
        Op("get", "/agents/{agent}/sessions", "An agent's sessions", "ui",
           (AGENT, FORMAT_JSON, P("offset", _int(0)), PAGE), ok_media=(*html, JSON), ok_schema={}, auth="session"),
        Op("get", "/agents/{agent}/sessions/{session_id}", "A session: its trajectory, spans, raw data", "ui",
           (AGENT, SESSION, FORMAT_JSON, P("tab"), P("download", BOOL, "yes: the trajectory as an .atif.json file"),
            P("offset", _int(0)),
            P("media", description="an image the trajectory references (`evalkit-span://…`): its bytes")),
           ok_media=(*html, JSON), ok_schema={}, auth="session"),
        Op("get", "/experiments", "Experiments", "ui", (FORMAT_JSON, P("limit", _int(1, 500)), PAGE),
           ok_media=(*html, JSON), ok_schema={}, auth="session"),
        Op("get", "/experiments/{id}", "An experiment", "ui", (EXPERIMENT, FORMAT_JSON, P("evaluator"), PAGE),
           ok_media=(*html, JSON), ok_schema={}, auth="session"),
        Op("get", "/experiments/{id}/runs/{run_id}", "A run", "ui",
           (EXPERIMENT, P("run_id", where="path", required=True), FORMAT_JSON), ok_media=(*html, JSON),
           ok_schema={}, auth="session"),
        Op("get", "/experiments/{id}/compare", "Compare with a baseline", "ui",
           (EXPERIMENT, FORMAT_JSON, P("baseline"), P("alpha", {"type": "number"}), PAGE), ok_media=(*html, JSON),
           ok_schema={}, auth="session"),
        Op("get", "/datasets", "The datasets the caller can read", "ui", (FORMAT_JSON, P("workspace")),
           ok_media=(*html, JSON), ok_schema={}, auth="session"),
        Op("get", "/datasets/{dataset}", "A dataset", "ui", (DATASET, FORMAT_JSON, P("version"), PAGE),
           ok_media=(*html, JSON), ok_schema={}, auth="session"),
        # -- OTLP/HTTP (its own port) -----------------------------------------------------------
        Op("post", "/v1/traces", "OTLP/HTTP span export (protobuf or JSON, gzip allowed); bearer: an ingest key "
           "with the ingest scope", "otlp", body="application/x-protobuf", ok_media=("application/x-protobuf",
                                                                                    JSON), ok_schema={},
           auth="key", port="otlp"),
        Op("post", "/v1/logs", "OTLP/HTTP log export (protobuf or JSON, gzip allowed)", "otlp",
           body="application/x-protobuf", ok_media=("application/x-protobuf", JSON), ok_schema={}, auth="key",
           port="otlp"),
    ]


def _schema_of(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in schema.pop("$defs", {}).items():
        components[name] = definition
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _operation(op: Op, components: dict[str, Any]) -> dict[str, Any]:
    operation: dict[str, Any] = {"summary": op.summary, "tags": [op.tag],
                                 "operationId": f"{op.method}_{op.path}".replace("/", "_").replace("{", "")
                                 .replace("}", "").replace(".", "_").replace("-", "_").strip("_") or "root"}
    if op.params:
        operation["parameters"] = [
            {"name": p.name, "in": p.where, "required": p.required or p.where == "path", "schema": p.schema,
             **({"description": p.description} if p.description else {})} for p in op.params]
    if op.body is not None:
        if isinstance(op.body, str):
            content = {op.body: {"schema": {"type": "string", "format": "binary"} if "octet" in op.body
                                 or "protobuf" in op.body else {"type": "object"}}}
            if op.port == "otlp":
                content[JSON] = {"schema": ANY_OBJECT}
        elif isinstance(op.body, dict):
            content = {JSON: {"schema": op.body}}
        else:
            content = {JSON: {"schema": _schema_of(op.body, components)}}
        operation["requestBody"] = {"required": op.body_required, "content": content}
    success: dict[str, Any] = {"description": "done"}
    if op.ok_media:
        success["content"] = {media: {"schema": op.ok_schema} for media in op.ok_media}
    responses: dict[str, Any] = {str(op.ok): success}
    for code in op.also_ok:
        responses[str(code)] = success
    if op.not_found is not None:
        responses["404"] = op.not_found
    if op.auth == "session" or op.redirects:
        responses["303"] = {"description": "not logged in: to /login"}
    if op.port == "otlp":
        responses["default"] = {"description": "an OTLP error (a google.rpc.Status, protobuf or JSON)",
                                "content": {"application/x-protobuf": {"schema": {}}, JSON: {"schema": {}}}}
    elif op.tag == "ui":
        responses["default"] = {"description": "an error page saying what went wrong",
                                "content": {"text/html": {"schema": {"type": "string"}}, JSON: {"schema": ERROR_REF}}}
    else:
        responses["default"] = {"description": "an error: what went wrong and what to do next",
                                "content": {JSON: {"schema": ERROR_REF}}}
    operation["responses"] = responses
    if op.auth == "none":
        operation["security"] = []
    elif op.auth == "session":
        operation["security"] = [{"session": []}]
    elif op.auth == "key":
        operation["security"] = [{"bearer": []}]
    if op.port == "otlp":
        operation["servers"] = [{"url": "http://127.0.0.1:4318", "description": "the OTLP/HTTP port"}]
    return operation


def build() -> dict[str, Any]:
    """The OpenAPI document of every route."""
    components: dict[str, Any] = {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["status", "message"],
            "properties": {"status": {"type": "integer"}, "message": {"type": "string"}}}}},
    }
    paths: dict[str, dict[str, Any]] = {}
    for op in _routes():
        paths.setdefault(op.path, {})[op.method] = _operation(op, components)
    return {
        "openapi": "3.1.0",
        "info": {"title": "evalkit", "version": "1",
                 "description": "The evalkit service: the API port (default 8000) and the OTLP/HTTP port (default "
                                "4318). Errors are `{\"error\": {\"status\": ..., \"message\": ...}}`; every "
                                "response is strict JSON (a non-finite number is null). docs/api.md has the "
                                "prose."},
        "servers": [{"url": "http://127.0.0.1:8000", "description": "the API port"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {"schemas": dict(sorted(components.items())), "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "an admin or user token (evk_…), or an ingest key (ek_…) with the read "
                                      "scope; on the OTLP port an ingest key with the ingest scope"},
            "session": {"type": "apiKey", "in": "cookie", "name": "evalkit_session",
                        "description": "the web UI's login session (POST /login)"}}},
    }


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=False) + "\n"


KEPT = Path(__file__).with_name("openapi.json")


def kept_document() -> bytes:
    """The kept copy, as served."""
    return resources.files("evalkit").joinpath("openapi.json").read_bytes()


if __name__ == "__main__":
    KEPT.write_text(dumps(build()))
    print(f"wrote {KEPT} ({len(build()['paths'])} paths)", file=sys.stderr)
