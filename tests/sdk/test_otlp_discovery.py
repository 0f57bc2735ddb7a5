"""Where spans go: the OTLP/HTTP URL the service advertises (`GET /api/info`), overrides, and older services."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from aiohttp import web

import evalkit
from evalkit.sdk.client import ServiceClient
from evalkit.sdk.config import Connection, load_project
from evalkit.sdk.service import Service
from evalkit.sdk.transport import otlp_base
from tests.sdk.conftest import Served, Tenant, write_cases


async def _base(url: str, token: str) -> str:
    async with ServiceClient(Connection(url=url, token=token)) as client:
        return await otlp_base(Service(client), load_project())


async def test_the_otlp_url_comes_from_the_service(served: Served, tenant: Tenant,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_OTLP_URL")
    # The test server's OTLP port is not 4318: only asking the service finds it.
    assert not served.otlp.endswith(":4318")
    assert await _base(served.api, tenant.token) == served.otlp
    monkeypatch.setenv("EVALKIT_OTLP_URL", "http://collector.example:4318")
    assert await _base(served.api, tenant.token) == "http://collector.example:4318"


async def test_otlp_url_in_evalkit_yaml_overrides_the_service(served: Served, tenant: Tenant, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_OTLP_URL")
    (tmp_path / "evalkit.yaml").write_text("otlp_url: http://yaml.example:4318\n")
    assert await _base(served.api, tenant.token) == "http://yaml.example:4318"


async def test_a_service_without_api_info_falls_back_to_its_host_on_4318(tenant: Tenant,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_OTLP_URL")
    runner = web.AppRunner(web.Application())  # every route is 404, as on a service that predates /api/info
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        assert await _base(f"http://127.0.0.1:{port}", tenant.token) == "http://127.0.0.1:4318"
    finally:
        await runner.cleanup()


def test_a_run_without_an_otlp_override_reaches_the_service(served: Served, tenant: Tenant, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_OTLP_URL")
    write_cases(tmp_path, "one", {"a": "input: a\n"})
    result = evalkit.run_experiment(dataset="one", agent=tenant.agent, task=lambda input: "x", output=io.StringIO())
    (run,) = result.runs
    assert (run.status, run.trajectory_status) == ("completed", "valid")  # the root span arrived
