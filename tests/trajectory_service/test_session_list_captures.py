"""The session list of every capture in one agent, their sessions ranked among each other: by cost, exactly the
order of pricing every session (`_priced_first`) and read by a bound of each session's cost (`_page_by_cost`,
test_session_list_cost.py), and by span count, exactly the counts and order the spans give (`_page_by_span_count`,
test_session_list_summary.py), page by page.

The tests only read: they share one service with every capture (tests/captures, discovered as they land) replayed
once into it, through the OTLP/HTTP receiver, for the module (`every_capture`). Its price file bounds every model the
captures name (`BOUNDING_RULES`): a model whose price changes by date or time of day gives no bound, and then every
page by cost is priced whole, so the list by cost would be compared with itself; the test checks which path served each
page. A replay is ~6 s of the corpus's ~200 captures. A page by either sort costs ~0.1-0.2 s at any depth, so a walk
one session a page costs ~0.15 s a session: by either sort every page is walked four sessions a page, and one session
a page at each kind of boundary between two sessions (by offset, then by cursor), not at every one."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable
from datetime import datetime
from typing import Any

import pytest
import pytest_asyncio

from evalkit.trajectory import session_list
from evalkit.trajectory.prices import PriceBook
from tests.captures import corpus
from tests.conftest import databases_dropped_after
from tests.trajectory_service.conftest import PRICES_YAML, Service, running_service
from tests.trajectory_service.test_session_list_cost import _ids, _priced_everyone
from tests.trajectory_service.test_session_list_pages import _walk
from tests.trajectory_service.test_session_list_summary import _FROM_SPANS

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The test services' price rules (PRICES_YAML) and, without a date, those of the models the captures name whose price
# gives no bound (`PriceBook.rate_bound` is None), at their dearest rates. A capture naming another such model fails
# the sort by cost until it is added here.
BOUNDING_RULES = """
  - model: "claude-sonnet-4-6"  # genai-prices: tiered by prompt length, then from 2026-03-13 another price
    input: 3
    output: 15
    cache_read: 0.3
    cache_write: 3.75
  - model: "deepseek-r1"  # genai-prices (deepseek-reasoner): dearer from 00:30 to 16:30 UTC
    input: 0.55
    output: 2.19
    cache_read: 0.14
  - model: "gemini-3.8-flash"  # genai-prices: doubled from 2027-01-01 (gemini-cli_native)
    input: 1.5
    output: 7.5
    cache_read: 0.15
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def every_capture(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Service, str]]:
    """A service for the module (these tests' settings, `running_service`, and a price file of PRICES_YAML and
    BOUNDING_RULES) and the agent every capture was replayed into (none of the module's tests writes)."""
    folder = tmp_path_factory.mktemp("captures")
    (folder / "prices.yaml").write_text(PRICES_YAML + BOUNDING_RULES)
    with databases_dropped_after():
        async with running_service(folder / "service", prices_file=folder / "prices.yaml") as service:
            agent, key = await service.new_agent("captures")
            # Every capture into one agent: their sessions ranked among each other.
            await asyncio.to_thread(corpus.replay_every, service.running.otlp_http, key)
            assert await asyncio.to_thread(service.running.service.staging.caught_up, 60.0)
            yield service, agent


BOUND, EVERY_SESSION = "by bound", "every session priced"  # what served a page by cost (`_page_by_cost` or not)


def _boundaries(expected: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Each kind of boundary between two sessions of the list by cost: where (the second's index) it first and last
    is, and the first and last pair of the list."""
    def kind(before: Any, after: Any) -> str:
        if after is None:
            return "unpriced after unpriced" if before is None else "unpriced after priced"
        if after == 0:
            return "free after free" if before == 0 else "free after dearer"
        return "tied in cost" if after == before else "cheaper"

    found: dict[str, list[int]] = {"first": [1], "last": [len(expected) - 1]}
    for i in range(1, len(expected)):
        found.setdefault(kind(expected[i - 1]["cost_usd"], expected[i]["cost_usd"]), []).append(i)
    return {name: sorted({at[0], at[-1]}) for name, at in found.items()}


async def test_the_sort_by_cost_of_every_capture_matches_pricing_every_session(
        every_capture: tuple[Service, str], monkeypatch: pytest.MonkeyPatch) -> None:
    svc, agent = every_capture
    store = svc.running.store
    # Every model the sessions name has a bound: else no page is read by it.
    path = svc.running.settings.price_file_path
    assert path is not None
    book = PriceBook.from_file(path)
    named = sorted({(str(m), str(p)) for (m, p), in store.query(session_list._PRICED_MODELS, {"agent": agent})})
    assert [pair for pair in named if session_list._rate_bound(book, *pair) is None] == [], \
        "a capture names a model (provider) whose price gives no bound: add an undated rule for it to BOUNDING_RULES"

    # The reference, every session priced (`_priced_first`), is the list by last seen (read as a page is: it prices
    # sessions as their trajectories do, test_capture_corpus.py) ordered by cost, unpriced last, ties by recency.
    expected = await _priced_everyone(svc, monkeypatch, agent)
    assert len(expected) > len(corpus.names()) // 2
    assert len({row["cost_usd"] for row in expected if row["cost_usd"]}) > 5
    by_last_seen = (await svc.get(f"/api/agents/{agent}/sessions?limit=1000")).body["sessions"]
    assert sorted(by_last_seen, key=lambda row: row["session_id"]) == sorted(
        expected, key=lambda row: row["session_id"])

    def rank(row: dict[str, Any]) -> tuple[Any, ...]:  # (last seen to the microsecond: ids not compared)
        return row["cost_usd"] is None, -(row["cost_usd"] or 0), -datetime.fromisoformat(row["last_seen"]).timestamp()

    assert all(rank(a) <= rank(b) for a, b in itertools.pairwise(expected)), [rank(row) for row in expected]

    # Which path served each page by cost: by a bound of each session's cost, or pricing every session.
    served: list[str] = []
    by_bound, priced_first = session_list._page_by_cost, session_list._priced_first

    def page_by_cost(*args: Any) -> Any:
        rows = by_bound(*args)
        served.append(BOUND if rows is not None else "no bound")
        return rows

    def every_session_priced(*args: Any) -> Any:
        served.append(EVERY_SESSION)
        return priced_first(*args)

    monkeypatch.setattr(session_list, "_page_by_cost", page_by_cost)
    monkeypatch.setattr(session_list, "_priced_first", every_session_priced)
    read: list[int] = []
    reader = session_list.read_sessions

    def reading(store: Any, agent_id: str, sessions: Any, prices: Any, summarised: bool = False) -> Any:
        read.append(len(sessions))
        return reader(store, agent_id, sessions, prices, summarised)

    monkeypatch.setattr(session_list, "read_sessions", reading)
    base = f"/api/agents/{agent}/sessions?sort=cost"

    async def served_by(path: str, pages: Awaitable[Any]) -> Any:
        served.clear()
        result = await pages
        assert served and set(served) == {path}, served
        return result

    boundaries = _boundaries(expected)
    assert {"first", "last", "cheaper", "tied in cost", "unpriced after priced"} <= set(boundaries), boundaries

    async def at_each_boundary(path: str) -> None:
        """One session a page at each kind of boundary between two sessions: the page of the one before by offset,
        then the next page by its cursor."""
        for name, at in boundaries.items():
            for i in at:
                before = (await served_by(path, svc.get(f"{base}&limit=1&offset={i - 1}"))).body
                assert (before["sessions"], before["has_more"]) == (expected[i - 1:i], True), (path, name, i)
                after = (await served_by(path, svc.get(f"{base}&limit=1&cursor={before['next_cursor']}"))).body
                assert (after["sessions"], after["has_more"]) == (expected[i:i + 1], i + 1 < len(expected)), (
                    path, name, i)

    assert (await served_by(BOUND, svc.get(f"{base}&limit=1000"))).body["sessions"] == expected
    # Page by page, reading as few keys by bound as each page allows: every session's place, by cursor, eight a page,
    # and each kind of boundary one a page by offset and by cursor (a page deep in the list costs about what a first
    # one does, ~0.15 s: one by one through every session, ~200 pages, was most of this test's time).
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    read.clear()
    first = (await served_by(BOUND, svc.get(f"{base}&limit=1"))).body
    assert first["sessions"] == expected[:1] and first["has_more"]
    assert 0 < sum(read) < len(expected) // 2, read  # the first page read a few sessions, not all of them
    walked = await served_by(BOUND, _walk(svc, base, 8))
    assert [s for page in walked for s in page] == _ids(expected)
    await at_each_boundary(BOUND)
    # Where the price book gives no bound (a price by date) every session is priced: the same pages (each prices
    # every session: ~0.5 s a page).
    monkeypatch.setattr(session_list, "_page_by_cost", lambda *args: None)
    walked = await served_by(EVERY_SESSION, _walk(svc, base, 40))
    assert [s for page in walked for s in page] == _ids(expected)
    await at_each_boundary(EVERY_SESSION)


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
    # Page by page, reading as few keys by bound as each page allows: every session's place by cursor, four a page,
    # and one session a page at each kind of boundary between two sessions (tied in span count or fewer spans; the
    # first and last of each kind, and of the list), by offset and then by cursor (a walk one session a page through
    # every session was ~30 s of the suite).
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    walked = [s for page in await _walk(svc, base, 4) for s in page]
    assert walked == [sid for sid, _ in expected]
    kinds: dict[str, list[int]] = {"first": [1], "last": [len(expected) - 1]}
    for i in range(1, len(expected)):
        kinds.setdefault("tied" if expected[i][1] == expected[i - 1][1] else "fewer", []).append(i)
    assert {"tied", "fewer"} <= set(kinds), kinds
    for name, at in kinds.items():
        for i in sorted({at[0], at[-1]}):
            before = (await svc.get(f"{base}&limit=1&offset={i - 1}")).body
            assert ([r["session_id"] for r in before["sessions"]], before["has_more"]) == (
                [expected[i - 1][0]], True), (name, i)
            after = (await svc.get(f"{base}&limit=1&cursor={before['next_cursor']}")).body
            assert ([r["session_id"] for r in after["sessions"]], after["has_more"]) == (
                [expected[i][0]], i + 1 < len(expected)), (name, i)
