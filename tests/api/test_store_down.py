"""With the store unreachable, API reads and writes answer 503 with Retry-After (never 500)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import serve
from tests.trajectory_service.conftest import http


async def test_store_unreachable_is_503_with_retry_after(tmp_path: Path) -> None:
    # Nothing listens on port 1: every query fails to connect.
    async with serve(tmp_path, clickhouse_url="http://default:@127.0.0.1:1/evalkit") as running:
        for method, path, body in (("POST", "/api/workspaces", {"name": "acme"}), ("GET", "/api/me", None),
                                   ("POST", "/api/datasets/d@acme", {"cases": []})):
            reply = await asyncio.to_thread(http, method, running.api + path, body)
            assert reply.status == 503, (path, reply.status, reply.text)
            assert int(reply.headers["Retry-After"]) > 0 and "retry" in reply.body["error"]["message"]
        reply = await asyncio.to_thread(http, "GET", running.api + "/healthz", None, None)
        assert reply.status == 503
