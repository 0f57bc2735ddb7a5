"""`GET /api/experiments/{id}/runs` pages as the API's other lists do: `limit` (1..1000, 50 unless asked), an
`offset` or the `next_cursor` of the page before, `has_more`; a bad value is a 400 naming it. Before, `limit` was
ignored and every run came back at once (a 100,000-run experiment in one answer)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from scoring import run_pages
from tests.scoring_service.conftest import Scoring, call

CASES = [f"c{i:02d}" for i in range(7)]


async def _experiment_with_retries(s: Scoring) -> int:
    """Seven cases, two repetitions: c01 and c04's first repetition failed once and was retried."""
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": c, "input": "x", "expected": "y"} for c in CASES]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme", "repetitions": 2,
                                                            "lease": {"holder": "h", "ttl_seconds": 60}})
    assert status == 201, exp
    eid = int(exp["experiment_id"])
    for case in CASES:
        for repetition in (0, 1):
            retried = case in ("c01", "c04") and repetition == 0
            for attempt in (1, 2) if retried else (1,):
                status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", {
                    "lease_holder": "h", "case_id": case, "repetition": repetition, "attempt": attempt,
                    "session_id": uuid.uuid4().hex, "answer": "y",
                    "status": "failed" if retried and attempt == 1 else "completed"})
                assert status == 201, run
    return eid


async def _walk(s: Scoring, path: str, limit: int) -> list[dict[str, Any]]:
    """Every page after the first by its cursor; each page at most `limit` runs."""
    runs: list[dict[str, Any]] = []
    cursor = None
    for _ in range(100):
        status, page = await call(s, "GET", f"{path}{'&' if '?' in path else '?'}limit={limit}"
                                            + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200, page
        assert len(page["runs"]) <= limit and page["limit"] == limit
        runs += page["runs"]
        assert page["has_more"] == (page["next_cursor"] is not None)
        cursor = page["next_cursor"]
        if cursor is None:
            return runs
    raise AssertionError("the cursor never ended")


def _slots(runs: list[dict[str, Any]]) -> list[tuple[str, int, int, bool]]:
    return [(r["case_id"], r["repetition"], r["attempt"], r["final"]) for r in runs]


async def test_runs_are_paged_by_limit_and_cursor(scoring: Scoring, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scoring
    eid = await _experiment_with_retries(s)
    base = f"/api/experiments/{eid}/runs"
    everything = [(c, rep, a, a == 2 or not (c in ("c01", "c04") and rep == 0))
                  for c in CASES for rep in (0, 1)
                  for a in ((1, 2) if c in ("c01", "c04") and rep == 0 else (1,))]
    finals = [slot for slot in everything if slot[3]]
    # The first page is the limit's, no more; the default is 50.
    status, page = await call(s, "GET", f"{base}?limit=3")
    assert status == 200 and _slots(page["runs"]) == finals[:3] and page["has_more"], page
    status, page = await call(s, "GET", base)
    assert page["limit"] == 50 and not page["has_more"] and page["next_cursor"] is None and len(page["runs"]) == 14
    # Walked by cursor, every run once, in order, a retried slot's attempts marked final as a whole read marks them.
    assert _slots(await _walk(s, base, 3)) == finals
    assert _slots(await _walk(s, f"{base}?attempts=all", 2)) == everything
    assert _slots(await _walk(s, f"{base}?attempts=all", 1)) == everything
    # The filters hold across pages: by status (in the engine), by failure (read with the verdicts).
    failed = [slot for slot in everything if not slot[3]]
    assert _slots(await _walk(s, f"{base}?attempts=all&status=failed", 1)) == failed
    assert _slots(await _walk(s, f"{base}?attempts=all&failed=true", 1)) == failed
    assert _slots(await _walk(s, f"{base}?failed=true", 5)) == []
    monkeypatch.setattr(run_pages, "_CHUNK", 2)  # a failure-filtered page read over several chunks
    assert _slots(await _walk(s, f"{base}?attempts=all&failed=true", 1)) == failed
    assert _slots(await _walk(s, f"{base}?attempts=all&failed=true", 2)) == failed
    assert _slots(await _walk(s, f"{base}?evaluations=true&case_id=c04&attempts=all", 1)) == [
        slot for slot in everything if slot[0] == "c04"]
    # An offset pages too.
    status, page = await call(s, "GET", f"{base}?offset=12&limit=5")
    assert status == 200 and _slots(page["runs"]) == finals[12:] and not page["has_more"], page
    status, page = await call(s, "GET", f"{base}?attempts=all&failed=true&offset=1")
    assert status == 200 and _slots(page["runs"]) == failed[1:], page


async def test_bad_paging_parameters_are_400s_naming_them(scoring: Scoring) -> None:
    s = scoring
    eid = await _experiment_with_retries(s)
    base = f"/api/experiments/{eid}/runs"
    for query, name in (("limit=0", "limit"), ("limit=-3", "limit"), ("limit=1001", "limit"), ("limit=abc", "limit"),
                        ("offset=-1", "offset"), ("offset=1e20", "offset"), ("cursor=zzz", "cursor"),
                        ("cursor=eyJjIjoiYSIsInIiOi0xLCJhIjoxfQ", "cursor"),  # {"c":"a","r":-1,"a":1}
                        ("cursor=eyJjIjoiYSIsInIiOjAsImEiOjF9&offset=2", "cursor")):
        status, reply = await call(s, "GET", f"{base}?{query}")
        assert status == 400, (query, status, reply)
        assert name in reply["error"]["message"], (query, reply)
