"""The session list's rows, kept per session as sessions go quiet, so that a page (any sort, filter or search)
reads a row per session instead of walking the index and every candidate's spans.

A row is what the list shows of a session (trajectory/session_list.py, `read_sessions`: figures, tokens, cost
priced with the service's price book), plus what the list picks and filters by: the index's times (the rank
of a page by time), whether any of its traces failed and its LLM models as the per-trace summary has them.

Why a kept row is never stale when read: the keeper (`keep_rows`) reads `trace_activity` (a row per trace per
insert into `spans`, stamped with the insert's clock, trajectory/tables.py) forwards, only up to a moment
`slack` before now, so that every insert stamped before it has finished; it recomputes the rows of every key a
trace it reads can list (the trace's own id, and every session named in it), then moves `session_rows_mark` to
the last activity read. A page (`page_of_kept_rows`) treats every trace with activity after the mark as
unkept: the keys those traces can list are read from their spans, as the list reads them, and the kept rows of
those keys are left out. So a page is the same as the list would read, whatever the keeper has done, and costs
a query over the agent's kept rows plus the sessions that changed since the keeper last ran.

Why a page needs no second look at the rows it ranks: the keeper writes a session's row again as two rows, a
copy of the old one with `sign` -1 and the new one (the engine, VersionedCollapsingMergeTree, removes such pairs
as it merges). The copy ranks and filters exactly as the old row, and sorts just before it, so a page's sort
that reads the old row reads its cancelling copy too, and drops both (`_uncancelled`). Rows priced with
another price book (the book's `fingerprint`), or kept in an older format, are not used until the keeper has
written them all again.
"""

from __future__ import annotations

import bisect
import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

from evalkit.store import SHORT_READ, Store, compact_sql
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_index import NAMED, Resolved, resolve
from evalkit.trajectory.session_list import (
    KEY_ROWS,
    TRACE_FLAGS,
    SessionPage,
    SessionQuery,
    SessionRow,
    index_walk_serves,
    order_rows,
    read_sessions,
)
from evalkit.trajectory.session_page import holds_search

log = logging.getLogger(__name__)

# Traces the keeper takes from `trace_activity` at a time (each chunk's keys read and written together).
_CHUNK_TRACES = 2_000
# Rows a page's read takes past the `need` it asks for, for the cancelled pairs among them; where more were
# dropped, it reads again, four times as many.
SCAN_SLACK = 16
# Unkept traces a page reads from their spans at most: past it (a backlog, a store just migrated) the list's
# own reads serve the page.
_MAX_UNKEPT_TRACES = 2_000
# The same for a page the index serves in list order (by time, no filter but a search), which costs the page
# read from the spans: past this many unkept traces (live ingest), reading their sessions would cost more.
MAX_UNKEPT_FOR_INDEX_PAGES = 100
# What the kept rows' format adds to the price book's fingerprint in the mark: rows kept in an older format
# (before `cost_rest`, migration 209; before the cancelling copies, 210; counting only spans with an error status
# as errors, before 212; counting twice a call OpenInference and another instrumentation report, before 213; not
# counting a Haystack tool failure only the next call's input records, before 214; not flagging a LangSmith tool's
# failed ToolMessage, before 215; not counting an AutoGen tool failure only the next call's input records, before
# 216; not counting a LlamaIndex tool failure only its step's ToolCallResult records, before 217; listing OpenLIT's
# pydantic-ai graph-node traces as sessions, before 218; counting OpenLIT's ag2 spans as LLM calls, before 219; not
# counting a google-genai function's failure only the next call's input records, before 220; not counting an ADK tool
# failure only ReflectAndRetryToolPlugin's answer records, before 221; not counting the reasoning tokens only AI SDK's
# usage breakdown or pydantic-ai's usage details record, before 222; not counting a CrewAI tool's ToolFailure, before
# 223; listing an MCP server's trace of tool calls its client sent no trace context for as a session, before 224;
# counting a failed LLM call no answer follows, with no tokens and no cost, as an unpriced call: no migration, the
# list's query counts it so, trajectory/mappers/failed_attempts.py; pricing audio tokens as text and web searches not
# at all, before 225; not counting an ADK tool failure only ReflectAndRetryToolPlugin's answer records under
# OpenInference's instrumentation, before 226; pricing pydantic-ai's web searches not at all, before 227; pricing the
# web searches of an openai-agents answer not at all, before 228; counting OpenLLMetry's Bedrock calls without their
# cache tokens and Langfuse's reasoning calls without their reasoning tokens, before 229; listing no Genkit session and
# counting none of its or Gemini CLI's model calls and failed tools, before 230) are not used until the keeper has
# written them all again.
_ROW_FORMAT = "rows-23"

_COLUMN_NAMES = ["agent_id", "session_key", "version", "sign", "index_first_ns", "index_last_ns", "span_count",
                 "first_ns", "last_ns", "cost", "cost_rest", "failing", "filter_models", "shown"]
# Rows a sort by cost reads what they show with (`_kept_candidates`): past them, it is read after, for the page's.
_SHOWN_WITH_COST_SORT_UP_TO = 1_000
# What a page reads of a row to rank and filter it; and what it shows (`shown`), read with them or after the sort.
_RANK_FIELDS = "session_key, version, sign, index_first_ns, index_last_ns, failing, filter_models, span_count, " \
    "first_ns, last_ns, cost, cost_rest"

_MARK = "SELECT toUnixTimestamp64Milli(at), agent_id, trace_id, prices, holder, held_until_ms " \
        "FROM session_rows_mark ORDER BY written_at DESC LIMIT 1"
# Activity after a place (at ms, agent, trace), before a moment, in the keeper's order.
_ACTIVITY = compact_sql("""
SELECT toUnixTimestamp64Milli(at) AS ms, agent_id, trace_id FROM trace_activity
WHERE at >= fromUnixTimestamp64Milli({at:Int64}) AND at < fromUnixTimestamp64Milli({before:Int64})
  AND (toUnixTimestamp64Milli(at), agent_id, trace_id) > ({at:Int64}, {agent:String}, {trace:String})
ORDER BY at, agent_id, trace_id
LIMIT {limit:UInt64}
""")
# One agent's traces with activity after the mark (a page's unkept traces).
_UNKEPT = compact_sql("""
SELECT DISTINCT trace_id FROM trace_activity
WHERE at >= fromUnixTimestamp64Milli({at:Int64})
  AND (toUnixTimestamp64Milli(at), agent_id, trace_id) > ({at:Int64}, {mark_agent:String}, {mark_trace:String})
  AND agent_id = {agent:String}
LIMIT {limit:UInt64}
""")
# The sessions some traces can list: each trace's own id (a session of its own) and the sessions named in it.
_NAMED_IN = compact_sql(f"""
SELECT DISTINCT session_id FROM trace_sessions
WHERE agent_id = {{agent:String}} AND trace_id IN {{traces:Array(String)}} AND {NAMED}
""")
# Every row of some keys, cancelled or not (the keeper's read of what it writes again).
_STORED_ROWS = compact_sql("""
SELECT session_key, version, sign, index_first_ns, index_last_ns, span_count, first_ns, last_ns, cost, cost_rest,
       failing, filter_models, shown
FROM session_rows
WHERE agent_id = {agent:String} AND session_key IN {keys:Array(String)}
""")
# What some keys' rows show, each version (a page's rows read after the sort).
_SHOWN = compact_sql("""
SELECT session_key, version, shown FROM session_rows
WHERE agent_id = {agent:String} AND session_key IN {keys:Array(String)}
""")

# The order of each sort over kept rows, as the list orders its pages: by time, the index's rank (minus the
# time, then the id), or the spans' times where the list picks the page priced (a cost floor); by span count;
# by cost (unpriced last, ties by the spans' last end; the exact cost as two floats, `cost_pair`). Last, the
# sign: a cancelling copy sorts before the row it cancels, so a page that reads a row reads its copy too. A row
# read without its copy could only be the row that says there is more (`SCAN_SLACK`'s re-read keeps it off the page
# shown): a page that ends with the last standing session would say there is another.
_SQL_ORDER = {
    "last_seen": "index_last_ns DESC, session_key, sign",
    "first_seen": "index_first_ns DESC, session_key, sign",
    "spans": "span_count DESC, session_key, sign",
    "cost": "cost DESC NULLS LAST, cost_rest DESC, last_ns DESC, session_key, sign",
}
_SQL_ORDER_PRICED = {**_SQL_ORDER, "last_seen": "last_ns DESC, session_key, sign",
                     "first_seen": "first_ns DESC, session_key, sign"}

# Where a page of another order than the index's resumes (`SessionQuery.rank_after`): the rows ranked after the
# last one shown, as `_rank` ranks them (not by the index), and the parameters of that rank, in its order.
_RANK_AFTER = {
    "last_seen": "(-last_ns, session_key) > ({rank_position:Int64}, {rank_key:String})",
    "first_seen": "(-first_ns, session_key) > ({rank_position:Int64}, {rank_key:String})",
    "spans": "(-toInt64(span_count), session_key) > ({rank_position:Int64}, {rank_key:String})",
    "cost": "(isNull(cost), -ifNull(cost, 0.), -cost_rest, -last_ns, session_key) > ({rank_unpriced:Bool}, "
            "{rank_cost:Float64}, {rank_rest:Float64}, {rank_last:Int64}, {rank_key:String})",
}
_RANK_AFTER_PARAMS = {**dict.fromkeys(("last_seen", "first_seen", "spans"), ("rank_position", "rank_key")),
                      "cost": ("rank_unpriced", "rank_cost", "rank_rest", "rank_last", "rank_key")}


def _by_index(q: SessionQuery) -> bool:
    """Whether the page is ranked as the index ranks sessions (by time, no cost floor), so that a keyset cursor
    resumes it; a cost floor's page is ranked by the spans' times, and paged by offset."""
    return q.sort in ("last_seen", "first_seen") and q.min_cost is None


@dataclass
class KeptRow:
    """A session's row as kept: what the list picks, filters and ranks it by, and what the page shows (`shown`,
    read and parsed only for the rows a page needs)."""

    key: str
    version: int
    index_first_ns: int
    index_last_ns: int
    failing: bool
    filter_models: list[str]
    span_count: int
    first_ns: int  # the spans' first start and last end (the row's own), which a cost floor's page ranks by
    last_ns: int
    cost: float | None  # the exact cost (`row.cost_usd`) as two floats (`cost_pair`)
    cost_rest: float
    shown: str = ""
    parsed: SessionRow | None = None

    @classmethod
    def of_row(cls, row: SessionRow, index_first_ns: int, index_last_ns: int, failing: bool,
               filter_models: list[str]) -> KeptRow:
        cost, rest = cost_pair(row.cost_usd)
        return cls(row.session_id, 0, index_first_ns, index_last_ns, failing, filter_models, row.spans,
                   row.first_start_ns, row.last_end_ns, cost, rest, parsed=row)

    @property
    def row(self) -> SessionRow:
        # A page 100 deep ranks 5,000 rows and shows 50: parsing them all cost more than reading them.
        if self.parsed is None:
            if not self.shown:
                raise ValueError(f"the kept row of {self.key!r} was ranked without what it shows (`_read_shown`)")
            self.parsed = _parse_shown(self.key, self.shown)
        return self.parsed

    def rank(self, sort: str, by_index: bool = True) -> tuple[Any, ...]:
        """Where the row sorts in a page of `sort` (smallest first), exactly; by time, as the index ranks it or
        (not `by_index`) by the spans' times."""
        return _rank(sort, by_index, self.key, self.index_first_ns, self.index_last_ns, self.span_count,
                     self.first_ns, self.last_ns, self.cost, self.cost_rest)

    def passes(self, q: SessionQuery) -> bool:
        """Whether the page's filters keep it (time range by the index's times, as the list's are)."""
        if not (self.index_last_ns >= q.since_ns and self.index_first_ns < q.until_ns):
            return False
        if q.errors_only and not self.failing:
            return False
        if q.model and q.model not in self.filter_models:
            return False
        if q.search and q.search.casefold() not in self.key.casefold():
            return False
        if q.min_cost is not None and (self.cost is None or (self.cost, self.cost_rest) < _floor_pair(q.min_cost)):
            return False
        if q.after is not None and _by_index(q):
            return self.rank(q.sort) > q.after
        if q.rank_after is not None and not _by_index(q):
            return self.rank(q.sort, False) > q.rank_after
        return True


def _rank(sort: str, by_index: bool, key: str, index_first_ns: int, index_last_ns: int, span_count: int,
          first_ns: int, last_ns: int, cost: float | None, cost_rest: float) -> tuple[Any, ...]:
    # As `_SQL_ORDER` and `_SQL_ORDER_PRICED` rank rows (strings compare by code point there as by UTF-8 byte).
    if sort == "last_seen":
        return (-index_last_ns if by_index else -last_ns, key)
    if sort == "first_seen":
        return (-index_first_ns if by_index else -first_ns, key)
    if sort == "spans":
        return (-span_count, key)
    return (cost is None, -(cost or 0.0), -cost_rest, -last_ns, key)


def _stored_rank(row: Sequence[Any], sort: str, by_index: bool) -> tuple[Any, ...]:
    """`_rank` of a row as `_kept_candidates` reads it (`_as_kept`'s arguments)."""
    return _rank(sort, by_index, row[0], row[2], row[3], row[6], row[7], row[8], row[9], row[10])


def cost_pair(cost: Decimal | None) -> tuple[float | None, float]:
    """An exact cost as two floats that order as it does: the nearest float, and the nearest float to what is
    left. Rounding keeps order, so two costs differ in the first or, rounding to the same float, in the second:
    a cost is a sum of products in Python's decimal context (28 digits), so two that differ do so by more than
    the second float's own rounding (~1e-32 of the cost)."""
    if cost is None:
        return None, 0.0
    with localcontext() as exact:
        exact.prec = 80  # the float's own decimal expansion has up to ~60 digits
        first = float(cost)
        return first, float(cost - Decimal(first))


@functools.lru_cache(maxsize=64)  # a floor page tests every candidate against the one floor
def _floor_pair(floor: float) -> tuple[float, float]:
    # The list's floor is the decimal a float reads as (`Decimal(repr(min_cost))`), not its binary value.
    first, rest = cost_pair(Decimal(repr(floor)))
    assert first is not None
    return first, rest


def served_by_kept_rows(q: SessionQuery) -> bool:
    """Pages the kept rows serve: every sort the list knows (it refuses the others, saying which there are)."""
    return q.sort in _SQL_ORDER


# -- reading -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mark:
    at_ms: int
    agent_id: str
    trace_id: str
    prices: str
    holder: str = ""  # the keeper whose lease it is (`KeeperLease`), until then
    held_until_ms: int = 0

    @property
    def place(self) -> tuple[int, str, str]:
        return self.at_ms, self.agent_id, self.trace_id


def rows_fingerprint(prices: PriceBook) -> str:
    """What the mark records the rows were kept with: the price book, and the rows' format."""
    return f"{prices.fingerprint()} {_ROW_FORMAT}"


def read_mark(store: Store) -> Mark | None:
    found = store.query(_MARK, {}, SHORT_READ)
    if not found:
        return None
    at, agent, trace, prices, holder, held_until = found[0]
    return Mark(int(at), str(agent), str(trace), str(prices), str(holder), int(held_until))


def traces_not_kept(store: Store, agent_id: str, prices: PriceBook, limit: int) -> list[str] | None:
    """Up to `limit` of the agent's traces that got spans since their sessions' rows were kept; None when no rows
    are kept with this price book."""
    mark = read_mark(store)
    if mark is None or mark.prices != rows_fingerprint(prices):
        return None
    return [str(t) for t, in store.query(_UNKEPT, {
        "at": mark.at_ms, "mark_agent": mark.agent_id, "mark_trace": mark.trace_id, "agent": agent_id,
        "limit": limit}, SHORT_READ)]


def _keys_of(store: Store, agent_id: str, traces: Sequence[str]) -> list[str]:
    """Every key some traces can list: their own ids, and the sessions named in them."""
    if not traces:
        return []
    named = [str(s) for s, in store.query(_NAMED_IN, {"agent": agent_id, "traces": list(traces)}, SHORT_READ)]
    return sorted(set(traces) | set(named))


def _fresh_rows(store: Store, agent_id: str, keys: Sequence[str], prices: PriceBook) -> dict[str, KeptRow]:
    """The rows some keys list now, read from their spans as the list reads them (keys listing nothing absent)."""
    if not keys:
        return {}
    rows = [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]))
            for r in store.query(KEY_ROWS, {"agent": agent_id, "keys": list(keys)}, SHORT_READ)]
    sessions: dict[str, Resolved] = resolve(set(keys), rows)
    read = read_sessions(store, agent_id, list(sessions.values()), prices)
    traces = sorted({trace for row in read for trace in row.trace_ids})
    flags = {str(t): (bool(failing), {str(m) for m in models}) for t, failing, models in store.query(
        TRACE_FLAGS, {"agent": agent_id, "traces": traces}, SHORT_READ)} if traces else {}
    kept: dict[str, KeptRow] = {}
    for row in read:
        session = sessions[row.session_id]
        found = [flags[t] for t in session.trace_ids if t in flags]
        if not found:
            continue  # as the list's filters, a session with no summarised trace is not listed
        kept[row.session_id] = KeptRow.of_row(row, session.first_start_ns, session.last_end_ns,
                                              any(failing for failing, _ in found),
                                              sorted({m for _, models in found for m in models}))
    return kept


def _shown(row: SessionRow) -> str:
    return json.dumps([row.spans, row.traces, row.first_start_ns, row.last_end_ns, row.last_received_ms, row.errors,
                       row.rootless_traces, row.missing_parents, row.models, row.trace_ids, row.steps,
                       row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.reasoning_tokens,
                       None if row.cost_usd is None else str(row.cost_usd), sorted(row.price_sources),
                       row.unpriced], separators=(",", ":"))


def _parse_shown(key: str, shown: str) -> SessionRow:
    (spans, traces, first, last, received, errors, rootless, missing, models, trace_ids, calls, prompt, completion,
     cached, reasoning, cost, sources, unpriced) = json.loads(shown)
    return SessionRow(key, spans, traces, first, last, received, errors, rootless, missing, models,
                      trace_ids=trace_ids, steps=calls, prompt_tokens=prompt, completion_tokens=completion,
                      cached_tokens=cached, reasoning_tokens=reasoning,
                      cost_usd=None if cost is None else Decimal(cost), price_sources=set(sources),
                      unpriced=unpriced)


def _as_kept(key: str, version: int, index_first: int, index_last: int, failing: bool,
             filter_models: Sequence[str], span_count: int, first: int, last: int, cost: float | None,
             cost_rest: float, shown: str = "") -> KeptRow:
    return KeptRow(key, int(version), int(index_first), int(index_last), bool(failing),
                   [str(m) for m in filter_models], int(span_count), int(first), int(last),
                   None if cost is None else float(cost), float(cost_rest), shown)


def _uncancelled(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The rows (key, version, sign, ...) with `sign` 1 that no copy among them cancels, in their order."""
    copies: dict[tuple[str, int], int] = {}
    for row in rows:
        if row[2] < 0:
            copies[(row[0], row[1])] = copies.get((row[0], row[1]), 0) + 1
    standing = []
    for row in rows:
        if row[2] < 0:
            continue
        if copies and copies.get((row[0], row[1])):
            copies[(row[0], row[1])] -= 1
            continue
        standing.append(row)
    return standing


def _current_rows(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The uncancelled rows, one per key: its newest version, where two keepers wrote a key at once (each then
    cancels what it read and writes its own), or an insert was retried."""
    standing = _uncancelled(rows)
    newest: dict[str, int] = {}
    for row in standing:
        newest[row[0]] = max(newest.get(row[0], row[1]), row[1])
    if len(newest) == len(standing):
        return standing
    current = []
    for row in standing:
        if newest.get(row[0]) == row[1]:
            current.append(row)
            del newest[row[0]]
    return current


def _read_shown(store: Store, agent_id: str, rows: Sequence[KeptRow]) -> None:
    """Read what some kept rows show, where it was not read with them."""
    wanted = {kept.key: kept for kept in rows if kept.parsed is None and not kept.shown}
    if not wanted:
        return
    # The version ranked; else (the keeper wrote the key again and its parts merged since) the newest one.
    found: dict[str, tuple[bool, int, str]] = {}
    for key, version, shown in store.query(_SHOWN, {"agent": agent_id, "keys": sorted(wanted)}, SHORT_READ):
        candidate = (int(version) == wanted[key].version, int(version), str(shown))
        found[key] = max(found.get(key, candidate), candidate)
    for key, (_, _, shown) in found.items():
        wanted[key].shown = shown


def _kept_candidates(store: Store, agent_id: str, q: SessionQuery, unkept: Sequence[str], need: int
                     ) -> list[Sequence[Any]]:
    """The first `need` kept rows of the page's order that pass its filters, leaving out the unkept keys, as
    read (`_as_kept`'s arguments): a page 100 deep ranks 5,000 and shows 50."""
    where = ["agent_id = {agent:String}", "index_last_ns >= {since:Int64}", "index_first_ns < {until:Int64}"]
    params: dict[str, Any] = {"agent": agent_id, "since": q.since_ns, "until": q.until_ns}
    if unkept:
        where.append("session_key NOT IN {unkept:Array(String)}")
        params["unkept"] = list(unkept)
    if q.errors_only:
        where.append("failing")
    if q.model:
        where.append("has(filter_models, {model:String})")
        params["model"] = q.model
    if q.search:
        where.append(holds_search("session_key"))
        params["search"] = q.search
    if q.min_cost is not None:  # as `KeptRow.passes`, exactly
        where.append("(cost > {floor:Float64} OR (cost = {floor:Float64} AND cost_rest >= {floor_rest:Float64}))")
        params["floor"], params["floor_rest"] = _floor_pair(q.min_cost)
    by_index = _by_index(q)
    if q.after is not None and by_index:
        column = "index_last_ns" if q.sort == "last_seen" else "index_first_ns"
        where.append(f"(-{column}, session_key) > ({{after_position:Int64}}, {{after_key:String}})")
        params.update(after_position=q.after[0], after_key=q.after[1])
    if q.rank_after is not None and not by_index:
        where.append(_RANK_AFTER[q.sort])
        params.update(zip(_RANK_AFTER_PARAMS[q.sort], q.rank_after, strict=True))
    # Not FINAL, which merges every row's key over the table's parts (40 against 10 ms at 200,000 sessions): a row
    # written again since its parts merged is read with its cancelling copy, and both dropped (`_current_rows`);
    # where too few are left, more are read.
    # `shown`, one column, is read with them: 1-2 ms more than the sort alone, where two dozen columns cost 25
    # more. But a sort by cost carries it through a costlier sort: 14 ms more for 5,000 rows at 200,000 sessions,
    # where reading the page's 50 rows' by key after costs 4-9 ms (`_read_shown`).
    shown_after = q.sort == "cost" and need > _SHOWN_WITH_COST_SORT_UP_TO
    fields = _RANK_FIELDS if shown_after else f"{_RANK_FIELDS}, shown"
    sql = (f"SELECT {fields} FROM session_rows WHERE {' AND '.join(where)} "
           f"ORDER BY {(_SQL_ORDER if by_index else _SQL_ORDER_PRICED)[q.sort]} LIMIT {{scan:UInt64}}")
    scan = need + SCAN_SLACK
    while True:
        read = store.query(sql, {**params, "scan": scan})
        current: list[Sequence[Any]] = [(r[0], r[1], *r[3:]) for r in _current_rows(read)]
        if len(current) >= need or len(read) < scan:
            return current
        scan *= 4


def page_of_kept_rows(store: Store, agent_id: str, q: SessionQuery, prices: PriceBook) -> SessionPage | None:
    """The page `q` asks for from the kept rows and the sessions changed since they were kept, or None where
    the kept rows cannot serve it (no rows kept yet, another price book, too many traces changed since: fewer
    for a page the index serves)."""
    if not served_by_kept_rows(q):
        return None
    most = MAX_UNKEPT_FOR_INDEX_PAGES if index_walk_serves(q) else _MAX_UNKEPT_TRACES
    unkept_traces = traces_not_kept(store, agent_id, prices, most + 1)
    if unkept_traces is None or len(unkept_traces) > most:
        return None
    unkept = _keys_of(store, agent_id, unkept_traces)
    by_index = _by_index(q)
    resumed = q.after is not None if by_index else q.rank_after is not None
    skip = 0 if resumed else q.offset
    need = skip + q.limit + 1
    ranked: list[Sequence[Any] | KeptRow] = list(_kept_candidates(store, agent_id, q, unkept, need))
    fresh = [kept for kept in _fresh_rows(store, agent_id, unkept, prices).values() if kept.passes(q)]
    place = 0
    for kept in sorted(fresh, key=lambda kept: kept.rank(q.sort, by_index)):  # each among the kept rows
        place = bisect.bisect_left(ranked, kept.rank(q.sort, by_index), lo=place, key=lambda item: (
            item.rank(q.sort, by_index) if isinstance(item, KeptRow) else _stored_rank(item, q.sort, by_index)))
        ranked.insert(place, kept)
    picked = [item if isinstance(item, KeptRow) else _as_kept(*item) for item in ranked[skip:need]]
    _read_shown(store, agent_id, picked[:q.limit])
    rows = [kept.row for kept in picked[:q.limit]]
    order_rows(rows, q.sort)  # by the spans' own times, as the list shows a page
    after, rank_after = None, None
    if picked[:q.limit]:
        last = picked[:q.limit][-1]
        if by_index:
            after = (-last.index_last_ns if q.sort == "last_seen" else -last.index_first_ns, last.key)
        else:
            rank_after = last.rank(q.sort, False)
    return SessionPage(rows, len(picked) > q.limit, after, rank_after)


# -- keeping -------------------------------------------------------------------------------------------------------
def _values(kept: KeptRow) -> tuple[Any, ...]:
    """What a row holds past its key, version and sign, as the store gives it back."""
    row = kept.row
    return (kept.index_first_ns, kept.index_last_ns, row.spans, row.first_start_ns, row.last_end_ns, kept.cost,
            kept.cost_rest, kept.failing, kept.filter_models, _shown(row))


def _stored_values(stored: Sequence[Any]) -> tuple[Any, ...]:
    (first, last, spans, first_ns, last_ns, cost, rest, failing, models, shown) = stored[3:]
    return (int(first), int(last), int(spans), int(first_ns), int(last_ns), None if cost is None else float(cost),
            float(rest), bool(failing), [str(m) for m in models], str(shown))


def _keep_agent(store: Store, agent_id: str, traces: Sequence[str], prices: PriceBook, version: int) -> int:
    """Write the rows of every key some traces can list again, each with a copy cancelling its old row; a key
    listing nothing now only has its old row cancelled. The number of keys whose row changed."""
    keys = _keys_of(store, agent_id, traces)
    fresh = _fresh_rows(store, agent_id, keys, prices)
    stored = store.query(_STORED_ROWS, {"agent": agent_id, "keys": keys}, SHORT_READ) if keys else []
    old: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}  # per key: a copy to write per uncancelled row
    for row in _uncancelled(stored):
        old.setdefault(str(row[0]), []).append((int(row[1]), _stored_values(row)))
    values: list[tuple[Any, ...]] = []
    changed = 0
    for key in keys:
        new = _values(fresh[key]) if key in fresh else None
        held = old.get(key, [])
        if new is not None and [held_values for _, held_values in held] == [new]:
            continue  # nothing the row holds changed (a new price book that prices its calls the same)
        values += [(agent_id, key, held_version, -1, *held_values) for held_version, held_values in held]
        if new is not None:
            values.append((agent_id, key, version, 1, *new))
        changed += bool(held) or new is not None
    if values:
        store.insert("session_rows", list(zip(*values, strict=True)), _COLUMN_NAMES)
    return changed


@dataclass(frozen=True)
class KeeperLease:
    """Who keeps the rows, for how long after each chunk kept, by which clock. The services of a cluster each run
    a keeper: one keeps the rows while its lease lasts, the others wait their turn (two at once would do the same
    work, and write a session's row twice, `_current_rows`). It is held in the mark, renewed with each chunk."""

    holder: str
    hold_seconds: float = 30.0
    clock: Callable[[], float] = time.time

    def until_ms(self) -> int:
        return int((self.clock() + self.hold_seconds) * 1000)


def _take_turn(store: Store, lease: KeeperLease, mark: Mark | None) -> bool:
    """Whether this keeper may keep now: no other holds the lease, which it takes or renews (half spent) by
    writing the mark as it is (place and prices) with itself as holder; read back, as another may have written
    the same moment."""
    now_ms = int(lease.clock() * 1000)
    if mark is not None and mark.holder and mark.holder != lease.holder and mark.held_until_ms > now_ms:
        return False
    if mark is None or mark.holder != lease.holder or mark.held_until_ms - now_ms < lease.hold_seconds * 500:
        # With no mark yet, the claim's prices match no price book: pages use no rows until some are kept.
        _write_mark(store, mark.place if mark else (0, "", ""), mark.prices if mark else "", lease)
        mark = read_mark(store)
    return mark is not None and mark.holder == lease.holder


def keep_rows(store: Store, prices: PriceBook, now_ms: int, slack_ms: int,
              progress: Callable[[int], None] | None = None, lease: KeeperLease | None = None) -> int:
    """Keep the rows of every session whose traces got spans since the mark, up to `slack_ms` before `now_ms`
    (which the caller sets no later than the start of any insert into spans still running: its rows are stamped
    then and seen only once it ends); the number of sessions whose rows changed. Run again and again
    (`RowKeeper`); a run cut short is taken up from the mark. With a `lease`, nothing is done while another
    keeper holds it, and the run stops where another took it over."""
    fingerprint = rows_fingerprint(prices)
    mark = read_mark(store)
    if lease is not None and not _take_turn(store, lease, mark):
        return 0
    place = mark.place if mark is not None and mark.prices == fingerprint else (0, "", "")
    before = now_ms - slack_ms
    written, chunks = 0, 0
    while True:
        if lease is not None and chunks:
            current = read_mark(store)
            if current is None or current.holder != lease.holder:
                return written  # its lease ran out during a chunk, and another keeper took it over
        chunks += 1
        activity = [(int(ms), str(agent), str(trace)) for ms, agent, trace in store.query(_ACTIVITY, {
            "at": place[0], "agent": place[1], "trace": place[2], "before": before, "limit": _CHUNK_TRACES})]
        if not activity:
            if written or mark is None or mark.prices != fingerprint:
                # Everything stamped before `before` is kept: a page's read of what is not starts there, a range
                # of the activity's key (from the last place read, it would filter every row stamped that
                # millisecond: a store's whole backlog, stamped by its migration).
                _write_mark(store, (before, "", ""), fingerprint, lease)
            return written
        by_agent: dict[str, set[str]] = {}
        for _, agent, trace in activity:
            by_agent.setdefault(agent, set()).add(trace)
        version = time.time_ns()
        for agent, traces in by_agent.items():
            written += _keep_agent(store, agent, sorted(traces), prices, version)
        place = activity[-1]
        _write_mark(store, place, fingerprint, lease)
        mark = Mark(*place, prices=fingerprint)
        if progress is not None:
            progress(written)


def _write_mark(store: Store, place: tuple[int, str, str], fingerprint: str, lease: KeeperLease | None) -> None:
    store.command("INSERT INTO session_rows_mark (slot, at, agent_id, trace_id, prices, holder, held_until_ms, "
                  "written_at) VALUES (0, fromUnixTimestamp64Milli({at:Int64}), {agent:String}, {trace:String}, "
                  "{prices:String}, {holder:String}, {until:Int64}, now64(3))",
                  {"at": place[0], "agent": place[1], "trace": place[2], "prices": fingerprint,
                   "holder": lease.holder if lease else "", "until": lease.until_ms() if lease else 0})


class RowKeeper:
    """Runs `keep_rows` every `interval` seconds on a thread of its own, until stopped. A failed run is logged
    and tried again at the next interval (pages read the unkept sessions from their spans meanwhile)."""

    def __init__(self, store: Store, prices: PriceBook, interval: float = 2.0, slack: float = 5.0,
                 inserting_since: Callable[[], float | None] = lambda: None,
                 clock: Callable[[], float] = time.time, *, holder: str) -> None:
        # `inserting_since`: when the oldest running insert into spans began (the flattener's); `clock`: the
        # engine's wall clock, which stamps `trace_activity` (not a service's clock set for tests). The slack
        # covers inserts into spans from elsewhere (another process of a cluster). `holder`: this keeper's name
        # in the lease it takes (`KeeperLease`), the same for the same service started again.
        self._store, self._prices, self._clock = store, prices, clock
        self._lease = KeeperLease(holder, max(30.0, 5 * interval), clock)
        self._inserting_since = inserting_since
        self._interval, self._slack = interval, slack
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="evalkit-session-rows", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                # The clock first, then the running inserts: one that begins after this read stamps later.
                now = self._clock()
                began = self._inserting_since()
                if began is not None:
                    now = min(now, began)
                with self._store.unfenced():  # reads by the activity's stamps, not what is acknowledged
                    keep_rows(self._store, self._prices, int(now * 1000), int(self._slack * 1000), lease=self._lease)
            except Exception:  # the store may be closing or away: the next run takes up from the mark
                log.exception("keeping the session list's rows failed; trying again in %.0f s", self._interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
