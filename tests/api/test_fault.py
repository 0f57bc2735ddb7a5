"""The last resort: an unexpected exception is a 500 whose message carries a request id, logged with the
traceback under that id; never the exception's text (it may quote a query or data)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp import web

from evalkit.api import Context
from evalkit.serve import Service
from tests.conftest import make_settings
from tests.trajectory_service.conftest import http


def broken_routes(app: web.Application, _context: Context) -> None:
    async def broken(_request: web.Request) -> web.Response:
        raise RuntimeError("SELECT secret FROM somewhere")

    app.router.add_get("/api/broken", broken)
    app.router.add_get("/broken-page", broken)  # a page of the UI's, as a browser asks for it


async def test_an_unexpected_fault_is_a_500_with_a_logged_request_id(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    service = Service(make_settings(tmp_path), say=lambda _line: None, route_modules=[broken_routes])
    await service.start()
    try:
        await service.wait_ready(60)
        with caplog.at_level(logging.ERROR, logger="evalkit.api"):
            reply = await asyncio.to_thread(http, "GET", f"http://127.0.0.1:{service.api_port}/api/broken", None)
        assert reply.status == 500, reply.text
        message = reply.body["error"]["message"]
        assert "request id" in message and "SELECT" not in reply.text
        request_id = message.split("request id ")[1].split(";")[0]
        logged = [r for r in caplog.records if request_id in r.getMessage()]
        assert logged and logged[0].exc_info is not None and "SELECT secret" in str(logged[0].exc_info[1])
    finally:
        await service.stop()


async def test_a_browser_on_a_faulty_page_gets_the_ui_error_page_with_the_request_id(tmp_path: Path) -> None:
    """A fault on a page outside /api, asked for by a browser (text/html first), is the UI's error page with the
    same message and status; a script asking for JSON still gets the JSON error."""
    service = Service(make_settings(tmp_path), say=lambda _line: None, route_modules=[broken_routes])
    await service.start()
    try:
        await service.wait_ready(60)
        url = f"http://127.0.0.1:{service.api_port}/broken-page"
        status, content_type, text = await asyncio.to_thread(_get, url, "text/html,application/xhtml+xml,*/*;q=0.8")
        assert status == 500 and content_type.startswith("text/html"), text[:300]
        assert re.search(r'id="error-message">the service failed \(request id \w+;', text), text[:2000]
        assert "SELECT" not in text
        status, content_type, text = await asyncio.to_thread(_get, url, "application/json")
        assert status == 500 and "request id" in json.loads(text)["error"]["message"]
    finally:
        await service.stop()


def _get(url: str, accept: str) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()
