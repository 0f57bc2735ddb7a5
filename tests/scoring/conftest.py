"""Local HTTP servers for the network evaluators: real aiohttp.web apps on
127.0.0.1 with an ephemeral port, torn down after each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

Serve = Callable[[web.Application], Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(app: web.Application) -> str:
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()
