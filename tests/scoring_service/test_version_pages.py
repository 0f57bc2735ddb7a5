"""`GET /api/datasets/{dataset}/versions` pages as the API's other lists do (`limit` 1..1000, 50 unless asked; an
`offset` or the `next_cursor` of the page before; `has_more`), and `evalkit datasets versions` reads every page.
Before, every version came back at once whatever `limit` said."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from evalkit.cli import datasets as cli_datasets
from tests.scoring_service.conftest import Scoring, call
from tests.scoring_service.test_experiment_truths import _cli

BASE = "/api/datasets/d@acme/versions"
PUSHED = 53  # more than a default page (50)


async def _push_versions(s: Scoring) -> list[str]:
    """PUSHED versions of d@acme, each a new content; their versions in push order."""
    await asyncio.to_thread(s.new_agent, "bot", "acme")  # makes the workspace
    pushed = []
    for i in range(PUSHED):
        status, reply = await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": "c", "input": f"x{i}"}]})
        assert status == 201, reply
        pushed.append(reply["version"])
    return pushed


async def _walk(s: Scoring, limit: int) -> list[dict[str, Any]]:
    versions: list[dict[str, Any]] = []
    cursor = None
    for _ in range(200):
        status, page = await call(s, "GET", f"{BASE}?limit={limit}" + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200 and len(page["versions"]) <= limit and page["limit"] == limit, page
        assert page["has_more"] == (page["next_cursor"] is not None), page
        versions += page["versions"]
        cursor = page["next_cursor"]
        if cursor is None:
            return versions
    raise AssertionError("the cursor never ended")


async def test_versions_are_paged_and_the_cli_reads_every_page(scoring: Scoring,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    s = scoring
    pushed = await _push_versions(s)
    status, first = await call(s, "GET", BASE)
    assert status == 200 and first["limit"] == 50 and len(first["versions"]) == 50 and first["has_more"], first
    whole = await _walk(s, 1000)
    assert len(whole) == PUSHED and {v["version"] for v in whole} == set(pushed)
    # Newest first (a tie in push time broken by version, so that the order is total and a cursor resumes it).
    order = [(v["pushed_at"], v["version"]) for v in whole]
    assert order == sorted(order, reverse=True), order
    assert whole[0]["version"] == pushed[-1] and first["versions"] == whole[:50]
    for limit in (1, 7, 50):
        assert await _walk(s, limit) == whole, limit
    status, page = await call(s, "GET", f"{BASE}?offset=50&limit=2")
    assert status == 200 and page["versions"] == whole[50:52] and page["has_more"], page
    status, page = await call(s, "GET", f"{BASE}?offset={PUSHED}")
    assert status == 200 and page["versions"] == [] and not page["has_more"], page  # past the end of one that exists
    for query in ("", "?offset=5"):
        status, reply = await call(s, "GET", f"/api/datasets/nope@acme/versions{query}")
        assert status == 404 and "evalkit datasets list" in reply["error"]["message"], (query, reply)
    # The CLI lists them all, page after page.
    code, out = await asyncio.to_thread(_cli, s, "datasets", "versions", "d@acme", "--json")
    assert code == 0 and [v["version"] for v in json.loads(out)["versions"]] == [v["version"] for v in whole], out
    monkeypatch.setattr(cli_datasets, "VERSIONS_PAGE", 4)
    code, out = await asyncio.to_thread(_cli, s, "datasets", "versions", "d@acme")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [v["version"] for v in whole], out


async def test_bad_paging_parameters_are_400s_naming_them(scoring: Scoring) -> None:
    s = scoring
    await asyncio.to_thread(s.new_agent, "bot", "acme")
    status, reply = await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": "c", "input": "x"}]})
    assert status == 201, reply
    for query, name in (("limit=0", "limit"), ("limit=1001", "limit"), ("limit=abc", "limit"),
                        ("offset=-1", "offset"), ("offset=1e20", "offset"), ("cursor=zzz", "cursor"),
                        ("cursor=eyJwIjotMSwidiI6IngifQ", "cursor"),  # {"p":-1,"v":"x"}
                        ("cursor=eyJwIjoxLCJ2IjoieCJ9&offset=2", "cursor")):  # {"p":1,"v":"x"} with an offset
        status, reply = await call(s, "GET", f"{BASE}?{query}")
        assert status == 400 and name in reply["error"]["message"], (query, status, reply)
