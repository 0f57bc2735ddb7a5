"""Pages of the session list picked from the session index in list order (trajectory/session_page.py):
walked by cursor and offset in both time orders, past many sessions a time range leaves out, with a
re-sent export counted once, the same after migration 202 indexes a data directory written before it,
and exactly the pages a resolution of the whole index gives, for a mix of every kind of trace."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from evalkit.migrations import Backfill, migrate
from evalkit.trajectory import session_list, tables
from evalkit.trajectory.page_figures import page_span_rows
from evalkit.trajectory.session_index import RESOLVED
from evalkit.trajectory.session_list import iso
from evalkit.trajectory.session_page import page_by_time
from tests.trajectory_service.conftest import BASE_NS, Service, chat, root, span

SESSIONS = 40


def _session(i: int) -> list[Any]:
    # Later sessions start later but end earlier: last seen and first seen order them oppositely.
    start, end = i * 10.0, (SESSIONS - i) * 10.0 + 500
    return [chat(i, i * 10 + 1, i * 10, start + 1), root(i, i * 10, f"s-{i:02d}", start, end)]


def _flat(pages: list[list[str]]) -> list[str]:
    return [session for page in pages for session in page]


async def _walk(svc: Service, base: str, limit: int) -> list[list[str]]:
    pages, cursor = [], ""
    while True:
        body = (await svc.get(base + f"&limit={limit}" + (f"&cursor={cursor}" if cursor else ""))).body
        pages.append([row["session_id"] for row in body["sessions"]])
        assert body["has_more"] == bool(body.get("next_cursor")), body
        if not body["has_more"]:
            return pages
        cursor = body["next_cursor"]


async def test_pages_by_last_and_first_seen_walk_every_session_once_in_order(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [s for i in range(1, SESSIONS + 1) for s in _session(i)])
    base = f"/api/agents/{agent}/sessions?x=1"

    by_last = await _walk(svc, base, 7)
    assert [len(page) for page in by_last] == [7] * 5 + [5]
    assert _flat(by_last) == [f"s-{i:02d}" for i in range(1, SESSIONS + 1)]
    by_first = await _walk(svc, base + "&sort=first_seen", 7)
    assert _flat(by_first) == [f"s-{i:02d}" for i in range(SESSIONS, 0, -1)]

    deep = (await svc.get(base + "&limit=7&offset=35")).body
    assert [row["session_id"] for row in deep["sessions"]] == [f"s-{i:02d}" for i in range(36, 41)]
    assert not deep["has_more"]
    row = (await svc.get(base + "&limit=1&offset=3&sort=first_seen")).body["sessions"][0]
    assert (row["session_id"], row["span_count"], row["trace_count"], row["steps"], row["prompt_tokens"]) == (
        "s-37", 2, 1, 1, 100)
    past = (await svc.get(base + "&limit=5&offset=40")).body
    assert (past["sessions"], past["has_more"], past["next_cursor"]) == ([], False, None)


async def test_a_time_range_that_leaves_out_the_newest_sessions_still_fills_the_page(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # 90 sessions of one trace each; `until` keeps the first ten: the index rows of the other 80 come
    # first by last seen, more than the first read of the index takes for a page of 2.
    await svc.send(key, [s for i in range(1, 91)
                         for s in (chat(i, i * 10 + 1, i * 10, i * 10.0 + 1), root(i, i * 10, f"r-{i:02d}",
                                                                                  i * 10.0, i * 10.0 + 5))])
    until = (BASE_NS + 101 * 10**9) / 1e9
    pages = await _walk(svc, f"/api/agents/{agent}/sessions?until={until}", 2)
    assert _flat(pages) == [f"r-{i:02d}" for i in range(10, 0, -1)]
    since = (BASE_NS + 856 * 10**9) / 1e9  # r-85 ends at 855 s: r-86 .. r-90 overlap
    pages = await _walk(svc, f"/api/agents/{agent}/sessions?since={since}&sort=first_seen", 2)
    assert _flat(pages) == [f"r-{i:02d}" for i in range(90, 85, -1)]


async def test_a_re_sent_export_batched_differently_is_counted_once(svc: Service) -> None:
    agent, key = await svc.new_agent()
    batch = _session(1) + _session(2) + [span(3, 30, None, "workflow", 0.5, 2.0), chat(3, 31, 30, 1.0)]
    await svc.send(key, batch)
    first = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    # An exporter retrying with its spans split differently, then the whole batch again.
    for part in (batch[:1], batch[1:3], batch[3:], batch):
        await svc.send(key, part)
    again = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert [r["session_id"] for r in again] == ["s-01", "s-02", f"{3:032x}"]
    assert [(r["span_count"], r["trace_count"], r["steps"], r["prompt_tokens"]) for r in again] == [(2, 1, 1, 100)] * 3
    assert again == first
    paged = [(await svc.get(f"/api/agents/{agent}/sessions?limit=1&offset={i}")).body["sessions"] for i in range(4)]
    assert paged == [[first[0]], [first[1]], [first[2]], []]


# A copy of the session's chat span, stored again with other figures (as a re-sent span is), received
# `shift_s` after the stored one it copies.
_STORE_AGAIN = ("INSERT INTO spans SELECT * REPLACE ({status} AS status_code, {tokens} AS input_tokens, "
                "received_at + toIntervalMillisecond({shift_ms}) AS received_at) "
                "FROM spans FINAL WHERE agent_id = {{agent:String}} AND span_id = {{span:String}}")
_AS_FINAL_KEEPS = ("SELECT countIf(failed), sumIf(input_tokens, is_llm_call) FROM spans FINAL "
                   "WHERE agent_id = {agent:String}")


async def test_a_span_stored_again_is_shown_as_its_latest_version_as_final_keeps_it(svc: Service) -> None:
    # A page reads each span's newest row itself (not with FINAL): the highest received_at, and of equal
    # ones the last inserted, as a ReplacingMergeTree(received_at) keeps.
    agent, key = await svc.new_agent()
    await svc.send(key, _session(1))
    store = svc.running.store
    params = {"agent": agent, "span": f"{11:016x}"}  # _session(1)'s chat span

    async def shown() -> tuple[int, int]:
        row = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"][0]
        assert (row["span_count"], row["steps"]) == (2, 1), row
        return row["errors"], row["prompt_tokens"]

    assert await shown() == (0, 100)
    for status, tokens, shift_ms, expected in ((2, 7, 0, (1, 7)),      # same time, inserted later: it wins
                                               (0, 9, -1000, (1, 7)),  # received earlier: the stored one stays
                                               (0, 5, 1000, (0, 5))):  # received later: it wins
        store.command(_STORE_AGAIN.format(status=status, tokens=tokens, shift_ms=shift_ms), params)
        assert tuple(store.query(_AS_FINAL_KEEPS, params)[0]) == expected
        assert await shown() == expected
    assert int(store.query("SELECT count() FROM spans WHERE agent_id = {agent:String}", params)[0][0]) == 5


async def test_migration_202_indexes_what_was_stored_before_it_and_re_running_it_changes_nothing(
        svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, _session(1) + _session(2))
    await svc.send(key, [chat(7, 71, 70, 1.0)])  # sessionless: its own session until ...
    await svc.send(key, [chat(8, 81, 80, 1.0)])
    await svc.send(key, [root(8, 80, "s-late", 0.5, 3.0)])  # ... its root names one
    before = (await svc.get(f"/api/agents/{agent}/sessions")).body
    assert [r["session_id"] for r in before["sessions"]] == ["s-01", "s-02", "s-late", f"{7:032x}"]

    # The data directory as a service before migration 202 left it.
    store = svc.running.store
    for view in ("session_order_feed", "trace_sessions_feed"):
        store.command(f"DROP VIEW {store.database}.{view}")
    for table in ("session_order", "trace_sessions"):
        store.command(f"DROP TABLE {store.database}.{table}")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version = 202")
    assert migrate(store) == [202]
    assert (await svc.get(f"/api/agents/{agent}/sessions")).body == before
    by_first = (await svc.get(f"/api/agents/{agent}/sessions?sort=first_seen")).body["sessions"]
    assert [r["session_id"] for r in by_first] == ["s-02", "s-01", f"{7:032x}", "s-late"]

    # Copied twice (a migration cut short and re-run): the same list.
    [migration] = [m for m in tables.MIGRATIONS if m.version == 202]
    for step in migration.tables:
        if isinstance(step, Backfill):
            for statement in step.statements(store.database, store.cluster):
                store.command(statement)
    assert (await svc.get(f"/api/agents/{agent}/sessions")).body == before
    # And spans arriving after it are indexed by the re-created views.
    await svc.send(key, _session(3))
    after = (await svc.get(f"/api/agents/{agent}/sessions?limit=2")).body["sessions"]
    assert [r["session_id"] for r in after] == ["s-01", "s-02"]  # s-03 ends before them
    assert [r["session_id"] for r in (await svc.get(f"/api/agents/{agent}/sessions?sort=first_seen&limit=1")).body[
        "sessions"]] == ["s-03"]


# The whole-index resolution a page by time used before session_order: every session of the agent
# grouped, then ordered. The reference the early-stopping read must match exactly.
_WHOLE_INDEX_PAGE = """
WITH resolved AS (__RESOLVED__)
SELECT session_id FROM resolved
GROUP BY session_id
HAVING max(last_end) >= fromUnixTimestamp64Nano({since:Int64})
   AND min(first_start) < fromUnixTimestamp64Nano({until:Int64})
ORDER BY __ORDER__, session_id
LIMIT {limit:UInt64} OFFSET {offset:UInt64}
""".replace("__RESOLVED__", RESOLVED)


def _mixed_traces(rng: random.Random) -> list[list[Any]]:
    """Batches of spans of 120 traces of every kind the index resolves, shuffled over 12 exports."""
    spans: list[Any] = []
    for t in range(1, 121):
        start = rng.uniform(0, 5000)
        end = start + rng.uniform(1, 400)
        sid, kind = 10 * t, rng.choice(["named", "named", "sessionless", "nested", "side", "scrubbed"])
        spans.append(chat(t, sid + 1, sid, start + 0.5))
        if kind == "named":  # sessions of one to three traces; the root often sent apart from its children
            spans.append(root(t, sid, f"s-{rng.randrange(40):02d}", start, end))
        elif kind == "sessionless":
            spans.append(span(t, sid, None, "workflow", start, end))
        elif kind == "nested":  # a nested run's id: its own, or a session's with traces of its own
            spans.append(root(t, sid, f"outer-{t}", start, end))
            spans.append(span(t, sid + 2, sid, "invoke_agent helper", start + 0.2, end - 0.2,
                              session__id=rng.choice([f"inner-{rng.randrange(3)}", f"s-{rng.randrange(40):02d}"]),
                              gen_ai__operation__name="invoke_agent"))
        elif kind == "side":
            spans.append(span(t, sid, None, "batch", start, end))
            spans.append(chat(t, sid + 3, sid, start + 0.7, **{"session.id": f"side-{t}"}))
            spans.append(chat(t, sid + 4, sid, start + 0.9, **{"session.id": f"s-{rng.randrange(40):02d}"}))
        else:
            spans.append(root(t, sid, "[Scrubbed due to 'session']", start, end))
    rng.shuffle(spans)
    return [spans[i::12] for i in range(12)]


async def test_pages_match_the_whole_index_resolution_for_a_mix_of_every_kind_of_trace(svc: Service) -> None:
    agent, key = await svc.new_agent()
    rng = random.Random(14)
    for batch in _mixed_traces(rng):
        await svc.send(key, batch)
    store = svc.running.store
    agent_id = agent  # the path's agent is its id
    everyone = store.query(_WHOLE_INDEX_PAGE.replace("__ORDER__", "max(last_end) DESC"),
                           {"agent": agent_id, "since": 0, "until": 2**62, "limit": 10**6, "offset": 0})
    assert len(everyone) > 60  # sessions of every kind, some of several traces
    cases = [(sort, since, until, limit, offset)
             for sort in ("last_seen", "first_seen")
             for since, until in ((0, 2**62), (BASE_NS + 2000 * 10**9, 2**62), (0, BASE_NS + 3000 * 10**9),
                                  (BASE_NS + 1000 * 10**9, BASE_NS + 1500 * 10**9))
             for limit, offset in ((1, 0), (7, 0), (7, 14), (50, 30), (1000, 0))]
    for sort, since, until, limit, offset in cases:
        order = "max(last_end) DESC" if sort == "last_seen" else "min(first_start) DESC"
        expected = [str(r[0]) for r in store.query(_WHOLE_INDEX_PAGE.replace("__ORDER__", order), {
            "agent": agent_id, "since": since, "until": until, "limit": limit, "offset": offset})]
        got = [s.session_id for s in page_by_time(store, agent_id, sort, since, until, limit, offset)]
        assert got == expected, (sort, since, until, limit, offset)


async def test_a_session_whose_newest_index_row_is_a_nested_runs_waits_for_its_own_place(svc: Service) -> None:
    agent, key = await svc.new_agent()
    until = 1000.0
    spans: list[Any] = []
    for i in range(1, 31):
        # Trace 100+i: run o-i, after `until`, with a nested run carrying x-i; trace 200+i: x-i's own, long
        # before. So x-i's newest index row is near the top, but it is listed by its own trace, at the end.
        start = until + 100 + 10 * i
        spans += [root(100 + i, 1000 + i, f"o-{i:02d}", start, start + 5),
                  span(100 + i, 2000 + i, 1000 + i, "invoke_agent helper", start + 1, start + 2,
                       session__id=f"x-{i:02d}", gen_ai__operation__name="invoke_agent"),
                  chat(100 + i, 3000 + i, 2000 + i, start + 1.2),
                  root(200 + i, 4000 + i, f"x-{i:02d}", 10.0 + i, 20.0 + i),
                  chat(200 + i, 5000 + i, 4000 + i, 11.0 + i)]
    for j in range(1, 11):  # sessions in range ending between the two
        spans += [root(300 + j, 6000 + j, f"f-{j:02d}", until - 50, until + 50 + j),
                  chat(300 + j, 7000 + j, 6000 + j, until - 40)]
    await svc.send(key, spans)
    listed = (await svc.get(f"/api/agents/{agent}/sessions?until={(BASE_NS + until * 1e9) / 1e9}&limit=3")).body
    assert [r["session_id"] for r in listed["sessions"]] == ["f-10", "f-09", "f-08"] and listed["has_more"]
    everyone = await _walk(svc, f"/api/agents/{agent}/sessions?until={(BASE_NS + until * 1e9) / 1e9}", 25)
    assert _flat(everyone) == [f"f-{j:02d}" for j in range(10, 0, -1)] + [f"x-{i:02d}" for i in range(30, 0, -1)]


_DAY = 86_400.0


async def test_a_page_reads_only_the_days_its_traces_can_be_in_and_misses_none_of_their_spans(
        svc: Service) -> None:
    # `spans` is partitioned by day of start; a page reads its traces from an hour before the index's first start
    # of them, or from the summary's (every span's) where that is earlier.
    agent, key = await svc.new_agent()
    newest = [s for i in range(4) for s in (root(10 + i, 100 + i * 10, f"s-new-{i}", 4 * _DAY + i, 4 * _DAY + i + 30),
                                            chat(10 + i, 101 + i * 10, 100 + i * 10, 4 * _DAY + i + 1))]
    await svc.send(key, [
        *newest,
        # Its root on day 3, a call that started on day 1 (a long call, or another host's clock).
        root(1, 10, "s-early", 3 * _DAY, 3 * _DAY + 60), chat(1, 11, 10, 1 * _DAY),
        # No session id: an application's request span on day 1, not indexed (no agent work in it), whose
        # call on day 2 is; the index's first start of the trace is day 2, the summary's day 1.
        span(2, 20, None, "GET /ask", 1 * _DAY, 2 * _DAY + 100), chat(2, 21, 20, 2 * _DAY),
        root(3, 30, "s-old", 0.0, 60.0), chat(3, 31, 30, 1.0)])
    store = svc.running.store
    parts = int(store.query("SELECT count() FROM system.parts WHERE active AND database = currentDatabase() "
                            "AND table = 'spans'")[0][0])
    assert parts >= 5  # a part per day

    base = f"/api/agents/{agent}/sessions?x=1"
    sessionless = f"{2:032x}"
    expected = [f"s-new-{i}" for i in range(3, -1, -1)] + ["s-early", sessionless, "s-old"]
    for limit in (1, 3, 7):
        rows = [row for offset in range(0, 7, limit)
                for row in (await svc.get(f"{base}&limit={limit}&offset={offset}")).body["sessions"]]
        assert [row["session_id"] for row in rows] == expected, limit
        assert [(row["span_count"], row["steps"], row["prompt_tokens"]) for row in rows] == [(2, 1, 100)] * 7, limit
        by_id = {row["session_id"]: row for row in rows}
        assert by_id["s-early"]["first_seen"] == by_id[sessionless]["first_seen"] != by_id["s-old"]["first_seen"]

    # A page's read of a trace reaches from an hour before its session starts as the index has it to an hour after
    # it ends: the first page's reaches day 4's part only; s-early's, days 1 to 4; from 1970 on, every day.
    def days_read(*windows: tuple[int, int]) -> set[int]:
        # The parts each range of the read reaches (the Min-Max index's "Parts: kept/all").
        params: dict[str, Any] = {"agent": agent}
        for i, (since, until) in enumerate(windows):
            params.update({f"traces_{i}": [f"{1:032x}"], f"since_{i}": since, f"until_{i}": until})
        plan = [str(line) for (line,) in store.query(
            "EXPLAIN indexes = 1 " + page_span_rows(len(windows)), params)]
        reads = [i for i, line in enumerate(plan) if "ReadFromMergeTree" in line and ".spans)" in line]
        assert len(reads) == len(windows), plan
        minmax = [next(j for j in range(i, len(plan)) if "Min-Max" in plan[j]) for i in reads]
        return {int(next(line for line in plan[j:] if "Parts:" in line).split("Parts:")[1].split("/")[0])
                for j in minmax}

    def day_ns(day: int) -> int:
        return BASE_NS + day * int(_DAY) * 10**9

    hour = 3_600 * 10**9
    assert days_read((day_ns(4) - hour, day_ns(4) + hour)) == {1}
    assert days_read((day_ns(1) - hour, day_ns(4) + hour)) == {4}  # days 1 to 4
    assert days_read((0, 2**63 - 1)) == {parts}
    # Ranges apart read their own days only: day 1's part, and day 4's.
    assert days_read((day_ns(1), day_ns(1) + hour), (day_ns(4), day_ns(4) + hour)) == {1}

    # The sessionless trace's index starts on day 2 (its call), the summary on day 1 (its request span): the
    # page read from an hour before day 2 is read again from day 1, the summary's bounds being read beside it
    # (above, every row shows both spans). Counted here: the statements that read the page's spans.
    statements: list[str] = []
    query, query_columns = store.query, store.query_columns

    def counting(read: Any) -> Any:
        def counted(sql: str, *args: Any, **kwargs: Any) -> Any:
            statements.append(sql)
            return read(sql, *args, **kwargs)
        return counted

    def span_reads() -> int:
        return sum(sql.startswith(page_span_rows(1)) for sql in statements)

    store.query = counting(query)  # type: ignore[method-assign]
    store.query_columns = counting(query_columns)  # type: ignore[method-assign]
    try:
        # (Each trace's window as a page has it: its session's times in the index, an hour wider.)
        for trace, first, last, reads in ((sessionless, 2, 2, 2), (f"{1:032x}", 1, 3, 1)):
            statements.clear()
            rows = session_list._page_spans(store, agent, {trace: (day_ns(first) - hour, day_ns(last) + hour)},
                                            checked=True)
            assert span_reads() == reads, trace
            assert len(rows[0]) == 2, trace  # both of the trace's spans (one column)
        # A page picked from the summary (a sort by span count with a search) has the summary's bounds: its
        # read starts at the request span, once, with no check beside it.
        statements.clear()
        [row] = (await svc.get(f"{base}&sort=spans&search={sessionless}")).body["sessions"]
        assert row["session_id"] == sessionless and row["span_count"] == 2
        assert span_reads() == 1
        assert session_list._TRACE_TIMES not in statements
    finally:
        del store.query, store.query_columns


async def test_a_page_reads_the_work_after_a_sessions_indexed_spans(svc: Service) -> None:
    # A span the index leaves out (no session id, no agent work) starting a day after the session's last indexed
    # one: the page's read over the index's times misses it, the summary's bounds (read beside) say so, and the
    # page is read again over those.
    agent, key = await svc.new_agent()
    await svc.send(key, [
        root(4, 40, "s-late", 5 * _DAY, 5 * _DAY + 10), chat(4, 41, 40, 5 * _DAY + 1),
        span(4, 42, 40, "upload report", 6 * _DAY, 6 * _DAY + 5),
        root(5, 50, "s-other", 5 * _DAY + 20, 5 * _DAY + 30), chat(5, 51, 50, 5 * _DAY + 21)])
    for sort in ("last_seen", "first_seen", "spans", "cost"):
        rows = (await svc.get(f"/api/agents/{agent}/sessions?sort={sort}")).body["sessions"]
        late = next(row for row in rows if row["session_id"] == "s-late")
        assert late["span_count"] == 3, sort
        assert late["last_seen"] == iso(BASE_NS + int((6 * _DAY + 5) * 1e9)), sort


def test_a_pages_traces_are_read_in_ranges_of_the_days_they_reach() -> None:
    day, hour = 86_400 * 10**9, 3_600 * 10**9
    windows = {"a": (day + hour, day + 2 * hour), "b": (day + 5 * hour, day + 6 * hour),  # day 1
               "c": (3 * day, 3 * day + hour),  # day 3
               "d": (5 * day + 20 * hour, 6 * day + hour), "e": (6 * day + 2 * hour, 6 * day + 3 * hour)}  # 5-6
    assert session_list._time_ranges(windows) == [
        (["a", "b"], day + hour, day + 6 * hour), (["c"], 3 * day, 3 * day + hour),
        (["d", "e"], 5 * day + 20 * hour, 6 * day + 3 * hour)]
    # Past the most ranges one read takes, the closest in time are joined: every trace in one range that
    # holds its window.
    scattered = {f"t{i:02d}": (i * i * day, i * i * day + hour) for i in range(1, 25)}
    ranges = session_list._time_ranges(scattered)
    assert len(ranges) == session_list._READ_RANGES
    assert sorted(t for traces, _, _ in ranges for t in traces) == sorted(scattered)
    for traces, since, until in ranges:
        assert all(since <= scattered[t][0] and scattered[t][1] <= until for t in traces)
    # The widest gaps stay: the earliest days (closest together) share ranges, the last ones stand alone.
    assert ranges[-1] == (["t24"], 576 * day, 576 * day + hour)
    assert ranges[0][0] == [f"t{i:02d}" for i in range(1, len(ranges[0][0]) + 1)]


# A process of its own: the engine takes its server settings (the size of its cache of decompressed blocks)
# when it is first opened in a process, and this test process opened it long before, maybe without them.
_PAGE_TWICE = """
import asyncio, json, shutil, sys
from pathlib import Path
import tests.conftest
from tests.conftest import serve
from evalkit.trajectory.session_list import _page_spans
from evalkit.trajectory.session_page import page_by_time
from tests.trajectory_service.conftest import Service, chat, root

def cached(store):
    return dict(store.query("SELECT event, value FROM system.events WHERE event LIKE 'UncompressedCache%'"))

async def main():
    async with serve(Path(sys.argv[1])) as running:
        svc = Service(running)
        agent, key = await svc.new_agent()
        await svc.send(key, [s for i in range(1, 21) for s in (
            chat(i, i * 10 + 1, i * 10, i * 10.0 + 1), root(i, i * 10, f"s-{i:02d}", i * 10.0, 300.0 + i))])
        store = running.store
        seen, pages = [cached(store)], []
        for _ in range(2):
            body = (await svc.get(f"/api/agents/{agent}/sessions?limit=5")).body
            pages.append([row["session_id"] for row in body["sessions"]])
            seen.append(cached(store))
        # Each lookup alone: the walk of the index (its extent and its candidates' rows), and the summary's
        # first starts read beside a page's spans (the spans' read itself does not ask for the cache).
        walked = [cached(store)]
        for _ in range(2):
            sessions = page_by_time(store, agent, "last_seen", 0, 2**63 - 1, 5, 0)
            walked.append(cached(store))
        checked = [cached(store)]
        for _ in range(2):
            _page_spans(store, agent, {t: (s.first_start_ns - 3600 * 10**9, s.last_end_ns + 3600 * 10**9)
                                       for s in sessions for t in s.trace_ids}, checked=True)
            checked.append(cached(store))
        size = store.query("SELECT value FROM system.server_settings WHERE name = 'uncompressed_cache_size'")[0][0]
        print(json.dumps({"seen": seen, "pages": pages, "size": int(size), "walked": walked, "checked": checked}))

asyncio.run(main())
shutil.rmtree(tests.conftest._CHDB_DIR, ignore_errors=True)
"""


def test_a_page_read_again_finds_the_index_blocks_it_read_decompressed(tmp_path: Path) -> None:
    """The list's lookups in the index tables ask for the engine's cache of decompressed blocks (`SHORT_READ`),
    which the service sizes for the machine: the first page fills it, the same page read again hits it; so does
    each lookup alone (the walk of the index, the summary's first starts beside a page's spans)."""
    result = subprocess.run([sys.executable, "-c", _PAGE_TWICE, str(tmp_path)], cwd=Path(__file__).parents[2],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["size"] >= 32 << 20
    assert out["pages"] == [[f"s-{i:02d}" for i in range(20, 15, -1)]] * 2
    for reads in (out["seen"], out["walked"], out["checked"]):
        before, first, second = ({"hits": s.get("UncompressedCacheHits", 0),
                                  "misses": s.get("UncompressedCacheMisses", 0)} for s in reads)
        assert first["misses"] + first["hits"] > before["misses"] + before["hits"], out  # it asked for the cache
        assert second["hits"] > first["hits"], out  # and found there what it read before
    assert out["seen"][1]["UncompressedCacheMisses"] > out["seen"][0].get("UncompressedCacheMisses", 0), out


async def test_a_first_page_far_down_the_index_is_read_from_the_summary(svc: Service, monkeypatch: Any) -> None:
    # By last seen, `until` cannot narrow the index's read: sessions that start after it come first and are
    # passed. A first page past more of them than a walk reads (`_WALK_SESSIONS`) is the summary's query's,
    # as a filtered walk's is: the same sessions in the same order, at the cost of the agent's traces, not
    # of every session after the page (4.3 s at 10M spans for a range before them all).
    agent, key = await svc.new_agent()
    spans: list[Any] = []
    for i in range(1, 121):  # after `until`
        spans += [root(i, 10 * i, f"n-{i:03d}", 1000.0 + i, 1000.5 + i), chat(i, 10 * i + 1, 10 * i, 1000.2 + i)]
    for j in range(1, 6):  # before it
        spans += [root(500 + j, 5000 + 10 * j, f"o-{j}", 10.0 + j, 10.5 + j),
                  chat(500 + j, 5001 + 10 * j, 5000 + 10 * j, 10.2 + j)]
    await svc.send(key, spans)
    url = f"/api/agents/{agent}/sessions?until={(BASE_NS + 500 * 1e9) / 1e9}"
    walked = (await svc.get(url + "&limit=3")).body["sessions"]
    store = svc.running.store
    statements: list[str] = []
    query = store.query

    def counted(sql: str, *args: Any, **kwargs: Any) -> Any:
        statements.append(sql)
        return query(sql, *args, **kwargs)

    monkeypatch.setattr(session_list, "_WALK_SESSIONS", 8)
    monkeypatch.setattr(store, "query", counted)
    summarised = (await svc.get(url + "&limit=3")).body["sessions"]
    assert any("per_trace AS" in sql for sql in statements)  # the summary's query picked the page
    assert [r["session_id"] for r in summarised] == [r["session_id"] for r in walked] == ["o-5", "o-4", "o-3"]
    assert [(r["span_count"], r["steps"]) for r in summarised] == [(2, 1)] * 3
    assert _flat(await _walk(svc, url, 2)) == [f"o-{j}" for j in range(5, 0, -1)]
