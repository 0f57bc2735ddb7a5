"""Where the SDK sends spans: the service's OTLP/HTTP endpoint and the agent's ingest key."""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

import aiohttp

from evalkit.sdk.config import Project
from evalkit.sdk.service import Service
from evalkit.sdk_config import keep_agent_key, stored_agent_key

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


async def ingest_key(service: Service, project: Project, agent: str, traces: str | None = None) -> str:
    """The agent's key from credentials, else EVALKIT_AGENT_KEY, else the one kept with the login for this
    server (checked against the OTLP endpoint `traces` when given), else a new one, made once and kept."""
    key = project.agent_key(agent) or os.environ.get("EVALKIT_AGENT_KEY")
    if key:
        return key
    cached = _created_keys.get((service.url, agent))
    if cached:
        return cached
    kept = stored_agent_key(service.url, agent)
    if kept and (traces is None or await _accepted(traces, kept)):
        _created_keys[(service.url, agent)] = kept
        return kept
    key = await service.create_key(agent)
    _created_keys[(service.url, agent)] = key
    try:
        where = f"kept with your login in {keep_agent_key(service.url, agent, key)}"
    except OSError as exc:  # a read-only home: the key still works for this process
        where = f"for this process only (cannot write the login file: {exc})"
    again = "the kept one was refused (revoked?); " if kept else ""
    print(f"evalkit: {again}made an ingest key for {agent}, {where}; later runs reuse it. To choose one "
          f"yourself: `evalkit agents keys create {agent}` and `credentials: {{agents: {{{agent}: env:NAME}}}}` "
          "in evalkit.yaml", file=sys.stderr)
    return key


async def _accepted(traces: str, key: str) -> bool:
    """Does the OTLP endpoint take this key? An empty export is a valid request that stores nothing."""
    try:
        async with aiohttp.ClientSession() as http, http.post(
                traces, data=b"", headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"},
                timeout=aiohttp.ClientTimeout(total=10)) as response:
            return response.status not in (401, 403)
    except (aiohttp.ClientError, TimeoutError):
        # The endpoint is unreachable now: the exporter will say so; the key itself is not to blame.
        return True


async def otlp_endpoint(service: Service, project: Project, agent: str) -> tuple[str, str]:
    traces = traces_url(await otlp_base(service, project))
    return traces, await ingest_key(service, project, agent, traces)
