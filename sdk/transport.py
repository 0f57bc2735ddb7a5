"""Where the SDK sends spans: the service's OTLP/HTTP endpoint and the agent's ingest key."""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

from evalkit.sdk.config import Project
from evalkit.sdk.service import Service

DEFAULT_OTLP_PORT = 4318
_created_keys: dict[tuple[str, str], str] = {}


def traces_url(base: str) -> str:
    base = base.rstrip("/")
    return base if base.endswith("/v1/traces") else base + "/v1/traces"


async def otlp_base(service: Service, project: Project) -> str:
    """EVALKIT_OTLP_URL, else `otlp_url` in evalkit.yaml, else what the service says (`GET /api/info`),
    else (a service without that route) the API's host on port 4318."""
    explicit = os.environ.get("EVALKIT_OTLP_URL") or project.otlp_url
    if explicit:
        return explicit
    info = await service.info()
    advertised = (info or {}).get("otlp_http_url")
    if isinstance(advertised, str) and advertised:
        return advertised
    parts = urlsplit(service.url)
    return f"{parts.scheme}://{parts.hostname}:{DEFAULT_OTLP_PORT}"


async def ingest_key(service: Service, project: Project, agent: str) -> str:
    """The agent's key from credentials, else EVALKIT_AGENT_KEY, else a new key made with our token."""
    key = project.agent_key(agent) or os.environ.get("EVALKIT_AGENT_KEY")
    if key:
        return key
    cached = _created_keys.get((service.url, agent))
    if cached:
        return cached
    key = await service.create_key(agent)
    _created_keys[(service.url, agent)] = key
    print(f"evalkit: no ingest key for {agent} in evalkit.yaml (credentials.agents) or EVALKIT_AGENT_KEY; "
          f"created one for this process. Keep one with `evalkit agents keys create {agent}` and "
          "`credentials: {agents: {" + agent + ": env:NAME}}`", file=sys.stderr)
    return key


async def otlp_endpoint(service: Service, project: Project, agent: str) -> tuple[str, str]:
    return traces_url(await otlp_base(service, project)), await ingest_key(service, project, agent)
