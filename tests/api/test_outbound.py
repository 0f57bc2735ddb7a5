"""The server calls no internal address for a workspace writer (HTTP evaluators, judges, harnesses)
unless EVALKIT_OUTBOUND_ALLOW lists it: checked on every address a host resolves to, and on redirects."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from evalkit.outbound import OutboundPolicy, OutboundRefused
from tests.scoring_service.conftest import call, serve_app, start_service

INTERNAL = ["http://127.0.0.1:9/x", "http://localhost:9/x", "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:9/", "http://10.1.2.3/", "http://192.168.0.1/", "http://[::ffff:127.0.0.1]:9/",
            "http://100.100.100.200/", "http://0.0.0.0:9/", "http://[fd00:ec2::254]/"]


@pytest.mark.parametrize("url", INTERNAL)
async def test_internal_addresses_are_refused_unless_allowed(url: str) -> None:
    with pytest.raises(OutboundRefused, match="EVALKIT_OUTBOUND_ALLOW"):
        await OutboundPolicy().check_url(url)
    host = url.split("//")[1].rsplit(":", 1)[0] if "[" not in url else url.split("[")[1].split("]")[0]
    host = host.split("/")[0]
    allowed = "localhost" if "localhost" in url else (f"{host}/128" if ":" in host else f"{host}/32")
    await OutboundPolicy([allowed]).check_url(url)


async def test_public_addresses_and_allowed_names_pass() -> None:
    await OutboundPolicy().check_url("https://93.184.216.34/score")
    await OutboundPolicy(["localhost"]).check_url("http://localhost:9/")
    await OutboundPolicy([".internal.test"]).check_url("http://grader.internal.test/")  # allowed by name
    with pytest.raises(OutboundRefused):
        await OutboundPolicy().check_url("file:///etc/passwd")


async def test_a_redirect_to_an_internal_address_is_refused() -> None:
    hits: list[str] = []

    async def redirect(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise web.HTTPFound("http://127.0.0.2:9/secret")

    app = web.Application()
    app.router.add_post("/score", redirect)
    url, runner = await serve_app(app)
    try:
        async with OutboundPolicy(["127.0.0.1/32"]).session() as session:
            with pytest.raises(OutboundRefused, match=r"127\.0\.0\.2"):
                async with session.post(url + "/score", json={}):
                    pass
        assert hits == ["/score"]
        async with OutboundPolicy().session() as session:
            with pytest.raises(aiohttp.ClientError):
                async with session.post(url + "/score", json={}):
                    pass
        assert hits == ["/score"]  # refused before connecting
    finally:
        await runner.cleanup()


async def test_the_service_refuses_loopback_evaluators_and_harnesses(tmp_path: Path) -> None:
    hits: list[str] = []

    async def score(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"score": 1, "passed": True})

    app = web.Application()
    app.router.add_post("/score", score)
    app.router.add_get("/capabilities", score)
    url, runner = await serve_app(app)
    s = await start_service(tmp_path, outbound_allow="")
    try:
        agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
        cases = [{"id": "a", "input": "q", "evaluators": [{"type": "http", "name": "remote", "url": url + "/score",
                                                          "max_attempts": 1}]}]
        assert (await call(s, "POST", "/api/datasets/d@acme", {"cases": cases}))[0] == 201
        status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme",
                                                                 "lease": {"holder": "h"}})
        assert status == 201, exp
        eid = exp["experiment_id"]
        status, _ = await call(s, "POST", f"/api/experiments/{eid}/runs", {
            "lease_holder": "h", "case_id": "a", "repetition": 0, "session_id": "a", "status": "completed",
            "answer": "x"})
        assert status == 201
        status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
        assert status == 200 and result["errors"] == 1, result
        status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs?evaluator=remote")
        assert status == 200, runs
        assert "EVALKIT_OUTBOUND_ALLOW" in str(runs), runs
        assert hits == []  # the evaluator was never called

        status, body = await call(s, "POST", "/api/agents", {"name": "h", "workspace": "acme", "kind": "harness",
                                                             "harness_url": url})
        assert status == 201, body
        status, body = await call(s, "POST", "/api/experiments", {"agent": "h@acme", "dataset": "d@acme"})
        assert status == 400 and "EVALKIT_OUTBOUND_ALLOW" in body["error"]["message"], body
        assert hits == []
    finally:
        await s.service.stop()
        await runner.cleanup()
