"""The session list's kept rows (trajectory/session_rows.py): a page of any sort, filter or search served from them is
the page the list reads from the spans, for a mix of every kind of trace, at every sort, filter and page
boundary; right after more spans arrive (a late root claiming a trace, a call added to a kept session, a new
session), before the keeper has run again; not used with another price book until priced again; kept by the
running service on its own."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from decimal import Decimal
from typing import Any

import pytest

from evalkit.migrations import migrate
from evalkit.store import Store
from evalkit.trajectory import session_rows
from evalkit.trajectory.prices import PriceBook, PriceRule
from evalkit.trajectory.session_list import SessionPage, SessionQuery, index_walk_serves, list_sessions
from evalkit.trajectory.session_rows import (
    MAX_UNKEPT_FOR_INDEX_PAGES,
    keep_rows,
    page_of_kept_rows,
    read_mark,
    rows_fingerprint,
    traces_not_kept,
)
from tests.trajectory_service.conftest import BASE_NS, Service, ServiceFactory, chat, root, span
from tests.trajectory_service.test_session_list_summary import _send_mixed

_QUERIES = [
    SessionQuery(errors_only=True), SessionQuery(errors_only=True, sort="first_seen"),
    SessionQuery(model="other-model"), SessionQuery(model="test-model", errors_only=True, sort="spans"),
    SessionQuery(sort="spans"), SessionQuery(sort="cost"), SessionQuery(min_cost=0.000001),
    SessionQuery(min_cost=0.000001, sort="cost", errors_only=True), SessionQuery(sort="spans", search="S-1"),
    SessionQuery(errors_only=True, since_ns=BASE_NS + 2000 * 10**9, until_ns=BASE_NS + 4000 * 10**9),
    SessionQuery(), SessionQuery(sort="first_seen"), SessionQuery(search="s-1"),
    SessionQuery(sort="first_seen", since_ns=BASE_NS + 2000 * 10**9, until_ns=BASE_NS + 4000 * 10**9),
]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _keep_all(store: Store, prices: PriceBook) -> int:
    """Keep every session's row as the keeper would with no slack: up to now (never later: an insert stamped
    after the keeper's now is read by its next run)."""
    store.query("SELECT 1 FROM spans LIMIT 0")  # a read waits for what was acknowledged to be flattened
    time.sleep(0.005)  # the last insert's stamp (ms) is before now
    return keep_rows(store, prices, _now_ms(), slack_ms=0)


def _prices(svc: Service) -> PriceBook:
    """The price book the service loaded (the test's data directory's price file)."""
    return PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")


async def _agent_with_sessions(svc: Service, count: int) -> tuple[str, str, Store, PriceBook]:
    """A new agent (its id and key) with `count` sessions of one LLM call each (s-1, s-2, ...); the store and the
    service's prices."""
    agent, key = await svc.new_agent()
    await svc.send(key, [s for i in range(1, count + 1) for s in (
        root(i, 10 * i, f"s-{i}", 10.0 * i, 10.0 * i + 5), chat(i, 10 * i + 1, 10 * i, 10.0 * i + 1))])
    return agent, key, svc.running.store, _prices(svc)


def _view(page: SessionPage) -> tuple[list[dict[str, Any]], bool, Any]:
    return [row.view(0.0, 0.0) for row in page.rows], page.more, page.after


def _assert_same_pages(svc: Service, agent: str, prices: PriceBook) -> int:
    """Every query at several page sizes and offsets from the kept rows equals the list's own read; the count
    of rows compared."""
    store, compared = svc.running.store, 0
    for query in _QUERIES:
        for limit, offset in ((1, 0), (7, 14), (1000, 0)):  # the first page, one deeper, all
            q = SessionQuery(**{**query.__dict__, "limit": limit, "offset": offset})
            kept = page_of_kept_rows(store, agent, q, prices)
            if kept is None:  # left to the index, which costs the page, when many traces are unkept
                unkept = traces_not_kept(store, agent, prices, 10_000)
                assert index_walk_serves(q) and unkept is not None and len(unkept) > MAX_UNKEPT_FOR_INDEX_PAGES, q
                continue
            live = list_sessions(store, agent, q, prices)
            assert _view(kept) == _view(live), q
            compared += len(kept.rows)
            # A keyset cursor of a filtered page by time resumes after the same session.
            if live.after is not None and q.sort in ("last_seen", "first_seen") and live.more:
                resumed = SessionQuery(**{**q.__dict__, "offset": 0, "after": live.after})
                assert _view(page_of_kept_rows(store, agent, resumed, prices)) == _view(  # type: ignore[arg-type]
                    list_sessions(store, agent, resumed, prices)), resumed
            # In another order, the kept page's rank resumes where the list's own read goes on by offset.
            assert (kept.rank_after is not None) == (live.after is None and bool(kept.rows)), q
            if kept.rank_after is not None and kept.more:
                resumed = SessionQuery(**{**q.__dict__, "offset": 0, "rank_after": kept.rank_after})
                on = SessionQuery(**{**q.__dict__, "offset": offset + limit})
                resumed_page = page_of_kept_rows(store, agent, resumed, prices)
                assert resumed_page is not None and _view(resumed_page)[:2] == _view(
                    list_sessions(store, agent, on, prices))[:2], resumed
    return compared


async def test_pages_from_kept_rows_are_the_pages_the_spans_give_before_and_after_more_spans_arrive(
        start_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = await start_service(session_rows_interval_seconds=0)  # kept here, by the test
    agent, key = await svc.new_agent()
    await _send_mixed(svc, key, 208)
    store, prices = svc.running.store, _prices(svc)
    # Rows written again stay beside their cancelling copies until the end, where they are merged away.
    store.command("SYSTEM STOP MERGES session_rows")
    assert page_of_kept_rows(store, agent, SessionQuery(errors_only=True), prices) is None  # nothing kept yet

    # Nothing is kept of what is newer than the slack: every session is unkept, read from its spans.
    assert keep_rows(store, prices, _now_ms(), slack_ms=3_600_000) == 0
    assert store.query("SELECT count() FROM session_rows")[0][0] == 0
    assert _assert_same_pages(svc, agent, prices) > 300

    written = _keep_all(store, prices)
    assert written > 60
    assert _assert_same_pages(svc, agent, prices) > 300
    kept_keys = {str(k) for k, in store.query("SELECT session_key FROM session_rows FINAL")}
    everyone = list_sessions(store, agent, SessionQuery(limit=1000), prices).rows
    assert kept_keys == {row.session_id for row in everyone}
    assert _keep_all(store, prices) == 0  # nothing new

    # More spans, not kept yet: a late root claims sessionless trace 1000 for a kept session with no errors; a
    # failing span in that session's first trace; a new session.
    await svc.send(key, [span(1000, 10_000, None, "workflow", 10.0, 20.0), chat(1000, 10_001, 10_000, 11.0)])
    _keep_all(store, prices)
    sessionless = f"{1000:032x}"
    assert sessionless in {str(k) for k, in store.query("SELECT session_key FROM session_rows FINAL")}
    target = next(row for row in everyone if row.session_id.startswith("s-") and not row.errors)
    await svc.send(key, [
        root(1000, 10_002, target.session_id, 9.0, 30.0),
        span(int(target.trace_ids[0], 16), 20_000, None, "tool", 4000.0, 4001.0, error=True),
        chat(2000, 20_001, 20_000, 4100.0, model="other-model"), root(2000, 20_000, "s-new", 4100.0, 4200.0)])
    assert _assert_same_pages(svc, agent, prices) > 300
    errors_page = page_of_kept_rows(store, agent, SessionQuery(errors_only=True, limit=1000), prices)
    assert errors_page is not None and target.session_id in [row.session_id for row in errors_page.rows]
    # Past a few unkept traces, a page the index serves is left to it; a filtered page still reads kept rows.
    monkeypatch.setattr(session_rows, "MAX_UNKEPT_FOR_INDEX_PAGES", 1)
    assert page_of_kept_rows(store, agent, SessionQuery(), prices) is None
    assert page_of_kept_rows(store, agent, SessionQuery(search="s-"), prices) is None
    assert page_of_kept_rows(store, agent, SessionQuery(errors_only=True), prices) is not None
    monkeypatch.undo()

    assert _keep_all(store, prices) >= 3
    cancelled = {str(k) for k, in store.query("SELECT session_key FROM session_rows WHERE sign = -1")}
    assert {sessionless, target.session_id} <= cancelled  # each read beside its copy by every page below
    assert _assert_same_pages(svc, agent, prices) > 300
    standing = dict(store.query("SELECT session_key, sum(sign) FROM session_rows GROUP BY session_key"))
    assert standing[sessionless] == 0 and standing["s-new"] == 1  # the claimed trace lists nothing now
    assert set(standing.values()) == {0, 1}

    # Merged, each pair is gone: one row a listed session, the same pages.
    store.command("SYSTEM START MERGES session_rows")
    store.command("OPTIMIZE TABLE session_rows FINAL")
    assert store.query("SELECT countIf(sign = -1), count(), uniqExact(session_key) FROM session_rows")[0] == (
        0, len(kept_keys) + 1, len(kept_keys) + 1)  # s-new joined, trace 1000 claimed: as many as first kept
    assert _assert_same_pages(svc, agent, prices) > 300


async def test_a_page_read_up_to_a_row_but_not_its_cancelling_copy_says_rightly_whether_there_is_more(
        start_service: ServiceFactory) -> None:
    # A read stopping between a cancelled row and its copy can only touch the row past the page (the one that
    # says there is more), and only when the rows dropped before it are exactly the read's slack: then the copy
    # must sort first, or a page ending with the last standing session says there is another.
    svc = await start_service(session_rows_interval_seconds=0)
    agent, key = await svc.new_agent()
    store, prices = svc.running.store, _prices(svc)
    store.command("SYSTEM STOP MERGES session_rows")
    rewritten, kept_as_they_are = session_rows.SCAN_SLACK // 2, 4  # each session written again: a pair dropped
    count = rewritten + kept_as_they_are
    ghost = 2**128 - 1  # a sessionless trace of two spans: the last session by span count (the others have three)
    await svc.send(key, [s for i in range(1, count + 1) for s in (
        root(i, 10 * i, f"s-{i}", 10.0 * i, 10.0 * i + 5), chat(i, 10 * i + 1, 10 * i, 10.0 * i + 1),
        chat(i, 10 * i + 2, 10 * i, 10.0 * i + 2))]
        + [span(ghost, 1, None, "workflow", 500.0, 501.0), chat(ghost, 3, 1, 500.5)])
    _keep_all(store, prices)
    # The first session claims the ghost's trace (a late root), the next ones get a call more: each such row is
    # written again, and the ghost's row cancelled with no row after it.
    await svc.send(key, [root(ghost, 2, "s-1", 499.0, 502.0)] + [
        chat(i, 10 * i + 3, 10 * i, 10.0 * i + 3) for i in range(2, rewritten + 1)])
    _keep_all(store, prices)
    ghost_key = f"{ghost:032x}"
    assert store.query("SELECT sum(sign), count() FROM session_rows WHERE session_key = {k:String}",
                       {"k": ghost_key})[0] == (0, 2)
    pages = 0
    for limit in range(1, count + 3):
        q = SessionQuery(sort="spans", limit=limit)
        kept, live = page_of_kept_rows(store, agent, q, prices), list_sessions(store, agent, q, prices)
        assert kept is not None and _view(kept) == _view(live), limit
        assert ghost_key not in {row.session_id for row in kept.rows} and kept.more == (limit < count), limit
        pages += 1
    assert pages == count + 2


async def test_rows_a_new_price_book_leaves_as_they_were_are_not_written_again(svc: Service) -> None:
    agent, key, store, prices = await _agent_with_sessions(svc, 3)
    assert _keep_all(store, prices) == 3
    # Another book (every row is kept again with it), pricing only a model these sessions do not call.
    other = PriceBook([*prices.rules, PriceRule(model="unused-model", input=Decimal(9), output=Decimal(9))])
    assert other.fingerprint() != prices.fingerprint()
    assert _keep_all(store, other) == 0
    assert store.query("SELECT count() FROM session_rows")[0][0] == 3
    page = page_of_kept_rows(store, agent, SessionQuery(sort="cost"), other)
    assert page is not None and _view(page) == _view(list_sessions(store, agent, SessionQuery(sort="cost"), other))
    await svc.send(key, [chat(2, 22, 20, 22.0)])  # a second call: s-2 written again, beside its old row's copy
    assert _keep_all(store, other) == 1
    assert store.query("SELECT session_key, sign, span_count FROM session_rows WHERE session_key = 's-2' "
                       "ORDER BY version, sign") in ([("s-2", -1, 2), ("s-2", 1, 2), ("s-2", 1, 3)],
                                                     [("s-2", 1, 3)])  # (or merged already)


async def test_kept_rows_priced_by_another_book_are_not_used_until_priced_again(svc: Service) -> None:
    agent, _, store, prices = await _agent_with_sessions(svc, 5)
    _keep_all(store, prices)
    dearer = PriceBook([PriceRule(model="test-model", input=Decimal(1000), output=Decimal(1000))])
    assert dearer.fingerprint() != prices.fingerprint()
    by_cost = SessionQuery(sort="cost")
    assert page_of_kept_rows(store, agent, by_cost, dearer) is None
    _keep_all(store, dearer)
    page = page_of_kept_rows(store, agent, by_cost, dearer)
    assert page is not None and _view(page) == _view(list_sessions(store, agent, by_cost, dearer))
    assert [row.cost_usd for row in page.rows] == [Decimal("0.11")] * 5  # 110 tokens at $1,000 a million
    assert page_of_kept_rows(store, agent, by_cost, prices) is None
    # A sort the list does not know is left to it (it answers 400 naming the sorts).
    assert page_of_kept_rows(store, agent, SessionQuery(sort="AAA", errors_only=True), dearer) is None


async def test_a_cursor_by_cost_or_span_count_resumes_after_its_session_whatever_arrives_before_it(
        start_service: ServiceFactory) -> None:
    # Pages from kept rows, kept here by the test: the service's keeper would first run an hour on.
    svc = await start_service(session_rows_interval_seconds=3600)
    store, prices = svc.running.store, _prices(svc)

    def session(i: int, calls: int) -> list[Any]:  # each call 100 input tokens: the more calls, the dearer
        return [root(i, 100 * i, f"s-{i:02d}", 10.0 * i, 10.0 * i + 5),
                *(chat(i, 100 * i + c, 100 * i, 10.0 * i + 1) for c in range(1, calls + 1))]

    for sort in ("cost", "spans"):
        agent, key = await svc.new_agent(f"by-{sort}")
        await svc.send(key, [s for i in range(1, 11) for s in session(i, i)])
        _keep_all(store, prices)
        base = f"/api/agents/{agent}/sessions?limit=4&sort={sort}"
        first = (await svc.get(base)).body
        assert [row["session_id"] for row in first["sessions"]] == ["s-10", "s-09", "s-08", "s-07"]
        # Dearer sessions arrive between two pages, one kept, one not yet: an offset would show s-08 and s-07
        # again; the cursor goes on after s-07.
        await svc.send(key, session(11, 12))
        _keep_all(store, prices)
        await svc.send(key, session(12, 13))
        second = (await svc.get(base + f"&cursor={first['next_cursor']}")).body
        assert [row["session_id"] for row in second["sessions"]] == ["s-06", "s-05", "s-04", "s-03"], sort
        assert second["offset"] == 4
        third = (await svc.get(base + f"&cursor={second['next_cursor']}")).body
        assert ([row["session_id"] for row in third["sessions"]], third["has_more"], third["next_cursor"]) == (
            ["s-02", "s-01"], False, None)
    # A rank that was tampered with is refused with what to do next, not a 500.
    tampered = base64.urlsafe_b64encode(json.dumps({"o": 4, "s": "cost", "r": [False, "x", 0.0, 1, "s"]}).encode())
    bad = await svc.get(f"/api/agents/{agent}/sessions?sort=cost&cursor={tampered.decode()}")
    assert bad.status == 400 and "start again without it" in bad.body["error"]["message"]


async def test_the_running_service_keeps_the_rows_and_serves_pages_from_them(start_service: ServiceFactory) -> None:
    # No slack: what the flattener is inserting is waited for all the same (`Flattener.inserting_since`).
    svc = await start_service(session_rows_interval_seconds=0.05, session_rows_slack_seconds=0)
    agent, key = await svc.new_agent()
    await svc.send(key, [s for i in range(1, 9) for s in (
        root(i, 10 * i, f"s-{i}", 10.0 * i, 10.0 * i + 5), chat(i, 10 * i + 1, 10 * i, 10.0 * i + 1),
        *([span(i, 10 * i + 2, 10 * i, "tool", 10.0 * i + 2, 10.0 * i + 3, error=True)] if i % 2 else []))])
    store = svc.running.store
    for _ in range(100):
        kept = store.query("SELECT count() FROM session_rows FINAL")[0][0]
        if kept == 8:
            break
        await asyncio.sleep(0.1)
    assert kept == 8
    mark = read_mark(store)
    assert mark is not None and mark.prices == rows_fingerprint(_prices(svc))
    body = (await svc.get(f"/api/agents/{agent}/sessions?errors=true&sort=spans&limit=3")).body
    assert [row["session_id"] for row in body["sessions"]] == ["s-1", "s-3", "s-5"] and body["has_more"]
    assert all(row["errors"] == 1 and row["span_count"] == 3 for row in body["sessions"])


async def test_one_keeper_at_a_time_keeps_the_rows_until_its_lease_runs_out(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each service of a cluster runs a keeper; the lease in the mark lets one work, the others wait their turn.
    agent, key, store, prices = await _agent_with_sessions(svc, 3)
    clock = [time.time()]
    a, b = (session_rows.KeeperLease(name, 30.0, lambda: clock[0]) for name in ("keeper-a", "keeper-b"))

    def keep(lease: session_rows.KeeperLease) -> int:
        store.query("SELECT 1 FROM spans LIMIT 0")
        time.sleep(0.005)
        return keep_rows(store, prices, _now_ms(), slack_ms=0, lease=lease)

    def rows() -> list[tuple[str, int]]:
        return sorted((str(k), int(n)) for k, n in store.query(
            "SELECT session_key, count() FROM session_rows GROUP BY session_key"))

    assert keep(a) == 3
    mark = read_mark(store)
    assert mark is not None and mark.holder == "keeper-a" and mark.prices == rows_fingerprint(prices)
    await svc.send(key, [chat(1, 20, 10, 10.5), root(9, 90, "s-9", 90.0, 95.0)])
    before = rows()
    assert keep(b) == 0 and rows() == before  # a's lease is live: b does nothing
    assert read_mark(store).holder == "keeper-a"  # type: ignore[union-attr]
    assert keep(a) == 2  # s-1 again, s-9 new

    await svc.send(key, [chat(2, 30, 20, 20.5)])
    clock[0] += 31  # a is gone: its lease runs out, b takes it over and keeps from a's mark
    assert keep(b) == 1
    assert read_mark(store).holder == "keeper-b"  # type: ignore[union-attr]
    await svc.send(key, [chat(3, 40, 30, 30.5)])
    assert keep(a) == 0 and keep(b) == 1

    # A keeper whose lease ran out during a chunk (a stall), and was taken over, stops after that chunk.
    monkeypatch.setattr(session_rows, "_CHUNK_TRACES", 1)
    await svc.send(key, [chat(i, 50 + i, 10 * i, 10.0 * i + 0.7) for i in (1, 2, 3)])
    chunks_by_b: list[int] = []

    def stalled(written: int) -> None:
        chunks_by_b.append(written)
        if len(chunks_by_b) == 1:
            clock[0] += 31
            assert keep(a) == 2  # the two sessions b had not come to
    store.query("SELECT 1 FROM spans LIMIT 0")
    time.sleep(0.005)
    assert keep_rows(store, prices, _now_ms(), slack_ms=0, progress=stalled, lease=b) == 1
    assert chunks_by_b == [1] and read_mark(store).holder == "keeper-a"  # type: ignore[union-attr]
    page = page_of_kept_rows(store, agent, SessionQuery(sort="spans", limit=10), prices)
    assert page is not None and _view(page) == _view(
        list_sessions(store, agent, SessionQuery(sort="spans", limit=10), prices))


async def test_migration_208_marks_every_trace_stored_before_it_active_so_the_keeper_keeps_them_all(
        svc: Service) -> None:
    agent, key, store, prices = await _agent_with_sessions(svc, 5)
    # The data directory as a service before migration 208 left it.
    for view in ("trace_activity_feed",):
        store.command(f"DROP VIEW {store.database}.{view}")
    for table in ("trace_activity", "session_rows", "session_rows_mark"):
        store.command(f"DROP TABLE {store.database}.{table}")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version = 208")
    assert migrate(store) == [208]  # (the table as it is now: 209's column with it)
    assert _keep_all(store, prices) == 5
    page = page_of_kept_rows(store, agent, SessionQuery(sort="spans"), prices)
    assert page is not None and [row.session_id for row in page.rows] == ["s-1", "s-2", "s-3", "s-4", "s-5"]
    # Spans arriving after it are stamped by the re-created view.
    await svc.send(key, [chat(3, 99, 30, 31.0)])
    assert traces_not_kept(store, agent, prices, 10) == [f"{3:032x}"]


async def test_costs_that_round_to_the_same_float_are_ranked_and_floored_exactly(svc: Service) -> None:
    # A kept row's `cost` is a float: these three sessions' costs differ only past its precision. The newest
    # sessions are the cheapest, so the float's tie-break (latest first) would rank them the wrong way round.
    agent, key = await svc.new_agent()
    models = {1: "dear", 2: "dear", 3: "even", 4: "cheap", 5: "cheap"}
    await svc.send(key, [s for i, model in models.items() for s in (
        root(i, 10 * i, f"s-{i}", 10.0 * i, 10.0 * i + 5), chat(i, 10 * i + 1, 10 * i, 10.0 * i + 1, model=model))])
    store = svc.running.store
    prices = PriceBook([PriceRule(model="dear", input=Decimal("1000.0000000000000000001"), output=Decimal(1000)),
                        PriceRule(model="even", input=Decimal(1000), output=Decimal(1000)),
                        PriceRule(model="cheap", input=Decimal("999.9999999999999999999"), output=Decimal(1000))])
    _keep_all(store, prices)
    costs = dict(store.query("SELECT session_key, cost FROM session_rows FINAL"))
    assert len(set(costs.values())) == 1 and costs["s-1"] == 0.11  # one float for all five
    exact = ["s-2", "s-1", "s-3", "s-5", "s-4"]  # dearest first, ties by the latest end
    for q in (SessionQuery(sort="cost", limit=5), *(SessionQuery(sort="cost", limit=2, offset=o) for o in range(4)),
              SessionQuery(sort="cost", limit=1, offset=2), SessionQuery(min_cost=0.11, limit=5),
              SessionQuery(min_cost=0.11, sort="cost", limit=2, offset=1)):
        page = page_of_kept_rows(store, agent, q, prices)
        assert page is not None and _view(page) == _view(list_sessions(store, agent, q, prices)), q
        if q.sort == "cost" and q.min_cost is None:
            assert [row.session_id for row in page.rows] == exact[q.offset:q.offset + q.limit], q
        if q.min_cost is not None:  # the cheap ones cost less than $0.11, by 1e-22
            assert {row.session_id for row in page.rows} <= {"s-1", "s-2", "s-3"} and len(page.rows) == min(
                q.limit, 3 - q.offset), q


async def test_migration_209_adds_the_exact_cost_and_rows_kept_before_it_are_not_used_until_kept_again(
        svc: Service) -> None:
    agent, _, store, prices = await _agent_with_sessions(svc, 3)
    # The data directory as a service before migration 209 left it: rows kept, their mark the price book's alone.
    store.command(f"ALTER TABLE {store.database}.session_rows DROP COLUMN cost_rest")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version = 209")
    store.command("INSERT INTO session_rows (agent_id, session_key, version, sign, shown) VALUES "
                  "({agent:String}, 's-1', 1, 1, '')", {"agent": agent})
    store.command("INSERT INTO session_rows_mark (slot, at, agent_id, trace_id, prices, written_at) VALUES "
                  "(0, now64(3), '', '', {prices:String}, now64(3))", {"prices": prices.fingerprint()})
    assert migrate(store) == [209]
    assert page_of_kept_rows(store, agent, SessionQuery(sort="cost"), prices) is None  # not kept in this format
    assert _keep_all(store, prices) == 3
    page = page_of_kept_rows(store, agent, SessionQuery(sort="cost"), prices)
    assert page is not None and _view(page) == _view(list_sessions(store, agent, SessionQuery(sort="cost"), prices))


async def test_migration_210_makes_the_rows_collapsing_and_the_keeper_keeps_them_again(svc: Service) -> None:
    agent, _, store, prices = await _agent_with_sessions(svc, 3)
    # The data directory as a service before migration 210 left it: rows replaced by version, a key listing
    # nothing kept as a row (`listed` false), the mark of format rows-2.
    store.command(f"DROP TABLE {store.database}.session_rows SYNC")
    store.command(f"CREATE TABLE {store.database}.session_rows (agent_id LowCardinality(String), session_key String, "
                  "version Int64, listed Bool, index_first_ns Int64, index_last_ns Int64, span_count UInt64, "
                  "first_ns Int64, last_ns Int64, cost Nullable(Float64), cost_rest Float64, failing Bool, "
                  "filter_models Array(String), shown String) ENGINE = ReplacingMergeTree(version) "
                  "ORDER BY (agent_id, session_key)")
    store.command("INSERT INTO session_rows (agent_id, session_key, version, listed, shown) VALUES "
                  "({agent:String}, 's-1', 1, true, ''), ({agent:String}, 'gone', 1, false, '')", {"agent": agent})
    store.command("INSERT INTO session_rows_mark (slot, at, agent_id, trace_id, prices, written_at) VALUES "
                  "(0, now64(3), '', '', {prices:String}, now64(3))", {"prices": f"{prices.fingerprint()} rows-2"})
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version = 210")
    assert migrate(store) == [210]
    assert store.query("SELECT engine FROM system.tables WHERE database = {db:String} AND name = 'session_rows'",
                       {"db": store.database}) == [("VersionedCollapsingMergeTree",)]
    assert store.query("SELECT count() FROM session_rows")[0][0] == 0
    assert page_of_kept_rows(store, agent, SessionQuery(sort="spans"), prices) is None  # not kept in this format
    assert _keep_all(store, prices) == 3
    page = page_of_kept_rows(store, agent, SessionQuery(sort="spans"), prices)
    assert page is not None and _view(page) == _view(list_sessions(store, agent, SessionQuery(sort="spans"), prices))
