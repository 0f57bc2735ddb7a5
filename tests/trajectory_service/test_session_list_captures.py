"""The session list of every capture in one agent, their sessions ranked among each other: by cost, exactly the
order of pricing every session (`_page_by_cost`, test_session_list_cost.py), and by span count, exactly the counts
and order the spans give (`_page_by_span_count`, test_session_list_summary.py), walked page by page.

The tests only read: they share one service with every capture (tests/captures, discovered as they land) replayed
once into it, through the OTLP/HTTP receiver, for the module (`every_capture`). A replay is ~5 s of the corpus's
~190 captures; each test's walks are most of its time (a page by either sort reads as many sessions as it is deep)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio

from evalkit.trajectory import session_list
from tests.captures import corpus
from tests.trajectory_service.conftest import Service
from tests.trajectory_service.test_session_list_cost import _ids, _priced_everyone
from tests.trajectory_service.test_session_list_pages import _walk
from tests.trajectory_service.test_session_list_summary import _FROM_SPANS

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def every_capture(module_service: Service) -> tuple[Service, str]:
    """The module's service and the agent every capture was replayed into (none of the module's tests writes)."""
    agent, key = await module_service.new_agent("captures")
    for name in corpus.names():  # every capture into one agent: their sessions ranked among each other
        await asyncio.to_thread(corpus.replay, corpus.load(name), module_service.running.otlp_http, key)
    return module_service, agent


async def test_the_sort_by_cost_of_every_capture_matches_pricing_every_session(
        every_capture: tuple[Service, str], monkeypatch: pytest.MonkeyPatch) -> None:
    svc, agent = every_capture
    expected = await _priced_everyone(svc, monkeypatch, agent)
    assert len(expected) > len(corpus.names()) // 2
    assert len({row["cost_usd"] for row in expected if row["cost_usd"]}) > 5
    base = f"/api/agents/{agent}/sessions?sort=cost"
    assert (await svc.get(f"{base}&limit=1000")).body["sessions"] == expected
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    for limit in (1, 4):
        walked = [s for page in await _walk(svc, base, limit) for s in page]
        assert walked == _ids(expected), limit


async def test_the_sort_by_span_count_of_every_capture_matches_the_spans(
        every_capture: tuple[Service, str], monkeypatch: pytest.MonkeyPatch) -> None:
    svc, agent = every_capture
    expected_rows = svc.running.store.query(
        _FROM_SPANS.replace("__HAVING__", "1").replace("__ORDER__", "span_count DESC, sid"), {"agent": agent})
    expected = [(str(r[0]), int(r[1])) for r in expected_rows]
    assert len(expected) > len(corpus.names()) // 2 and len({n for _, n in expected}) > 5
    base = f"/api/agents/{agent}/sessions?sort=spans"
    got: list[dict[str, Any]] = (await svc.get(f"{base}&limit=1000")).body["sessions"]
    assert [(r["session_id"], r["span_count"]) for r in got] == expected
    # Page by page, reading as few keys by bound as each page allows.
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    for limit in (1, 3):
        walked = [s for page in await _walk(svc, base, limit) for s in page]
        assert walked == [sid for sid, _ in expected], limit
