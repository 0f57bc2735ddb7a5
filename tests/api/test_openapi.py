"""The OpenAPI document describes every route of the running apps (API and OTLP/HTTP ports), is served
without a token, is valid OpenAPI 3.1, and the kept copy is the one evalkit/openapi.py builds."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from openapi_spec_validator import validate

from evalkit.openapi import KEPT, build, dumps
from tests.trajectory_service.conftest import Service, http


def routes_of(app: web.Application) -> set[tuple[str, str]]:
    found = set()
    for route in app.router.routes():
        if route.method == "HEAD":  # aiohttp adds HEAD beside every GET
            continue
        resource = route.resource
        if isinstance(resource, web.StaticResource):
            path = resource.canonical + "/{filename}"
        else:
            assert resource is not None
            path = resource.canonical
        found.add((route.method.lower(), path))
    return found


async def test_every_route_is_described_and_nothing_else(svc: Service) -> None:
    apps = [runner.app for runner in svc.running.service._runners]
    served = set().union(*(routes_of(app) for app in apps))
    document = build()
    described = {(method, path) for path, item in document["paths"].items() for method in item}
    missing = sorted(served - described)
    assert not missing, (f"routes missing from the OpenAPI document: {missing}; describe them in "
                         "evalkit/openapi.py, then run `python -m evalkit.openapi`")
    stale = sorted(described - served)
    assert not stale, f"described but not served: {stale}; remove them from evalkit/openapi.py"
    assert ("post", "/v1/traces") in served and ("get", "/api/openapi.json") in served


def test_the_kept_copy_is_current_and_valid() -> None:
    document = build()
    validate(document)  # OpenAPI 3.1 (its JSON Schema dialect is 2020-12, as pydantic writes)
    assert KEPT.read_text() == dumps(document), ("evalkit/openapi.json is not what evalkit/openapi.py builds; run "
                                                 "`python -m evalkit.openapi` and commit it")


async def test_it_is_served_without_a_token(svc: Service) -> None:
    reply = await asyncio.to_thread(http, "GET", svc.api + "/api/openapi.json", None, None)
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("application/json")
    assert reply.body == json.loads(KEPT.read_text())
