"""An agent's sessions, summed from the typed span columns without decoding any attributes.

A page's sessions are picked first: by time from the session index (trajectory/session_page.py), by span
count or cost in the order of a bound of each session's, with filters from the per-trace summary. Then its
traces' spans are read once and summed in Python (trajectory/page_figures.py): span count, times, errors,
structure, models, and the LLM calls' tokens and reported costs per (model, provider), priced here with the
price book the trajectories use. Which LLM spans count as calls follows the trajectory's rules as far as the
typed columns tell them (a framework span wrapping the client library's, one call reported twice, a streamed
call's request span). A trace that carried no session id is listed as a session of its own
(trajectory/session_index.py).
"""

from __future__ import annotations

import base64
import json
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Generic, TypeVar

from evalkit.store import SHORT_READ, Store, compact_sql
from evalkit.trajectory.page_figures import page_figures, page_span_rows
from evalkit.trajectory.prices import PriceBook, RateBound, TokenCounts
from evalkit.trajectory.session_index import NAMED, RESOLVED, Resolved, resolve
from evalkit.trajectory.session_page import ORDERS, TooFar, holds_search, page_by_time, rank
from evalkit.trajectory.settle import PARTIAL, VALID
from evalkit.trajectory.tables import WEB_SEARCHES

SORTS = {
    "last_seen": "last_ns DESC, sid",
    "first_seen": "first_ns DESC, sid",
    "spans": "span_count DESC, sid",
    "cost": None,  # priced in Python, so sorted there
}

# The sessions a sort by span count or a filter (errors, model) picks from, from the per-trace summary
# (trajectory/tables.py): a row per trace of the agent's index, not every span. Sessions overlapping
# [since, until) as the index has them (the index resolved once: a CTE named twice is run twice), then
# per trace (every trace of the agent's summary: the summary's rows are small, and narrowing them to the
# sessions' traces would resolve the index again), then per session; the page's own figures are then
# read from its traces' spans (`_page_spans`), so they are those a page by time shows.
# `__SPAN_COUNT__` merges the span-id sets only when the sort needs the count (the one costly figure).
_SUMMARY_SESSIONS = compact_sql("""
WITH sessions AS (
    SELECT session_id, groupUniqArray(trace_id) AS traces FROM (__RESOLVED__)
    __SEARCH__
    GROUP BY session_id
    HAVING max(last_end) >= fromUnixTimestamp64Nano({since:Int64})
       AND min(first_start) < fromUnixTimestamp64Nano({until:Int64})
),
per_trace AS (
    SELECT trace_id, __SPAN_COUNT__ AS spans, max(failing) AS failing, groupUniqArrayArray(models) AS models,
           min(first_start) AS first_start, max(last_end) AS last_end
    FROM trace_summary
    WHERE agent_id = {agent:String}
    GROUP BY trace_id
)
SELECT p.session_id AS sid, sum(t.spans) AS span_count, toUnixTimestamp64Nano(min(t.first_start)) AS first_ns,
       toUnixTimestamp64Nano(max(t.last_end)) AS last_ns, max(t.failing) AS failing,
       groupUniqArrayArray(t.models) AS session_models, groupUniqArray(p.trace_id) AS trace_ids
FROM per_trace AS t
INNER JOIN (SELECT session_id, trace_id FROM sessions ARRAY JOIN traces AS trace_id) AS p ON t.trace_id = p.trace_id
GROUP BY p.session_id
__HAVING__
ORDER BY __ORDER__
__LIMIT__
""".replace("__RESOLVED__", RESOLVED))

# The named sessions' traces from the index (as many sessions as a sort by cost prices).
_INDEX_TRACES = "(SELECT trace_id FROM (__RESOLVED__) WHERE session_id IN {sessions:Array(String)})"
# Whether some traces had a failing span, and their LLM models (a filtered page by time checks its candidates).
TRACE_FLAGS = compact_sql("""
SELECT trace_id, max(failing), groupUniqArrayArray(models) FROM trace_summary
WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
GROUP BY trace_id
""")


def _key_bounds(per_trace: str, zero: str, having: str = "") -> str:
    """Keys (session ids, or a sessionless trace's id) with the sum of a per-trace bound over the traces the
    index could give them, largest first: `per_trace` is a query of (trace_id, bound) over the agent's
    summary, `zero` the bound's zero of its type.

    `per_trace` may give a trace several rows (the summary's unmerged parts): they are summed with the
    trace's index rows in one grouping. (Grouping them by trace first, and a set of names per trace
    with `groupUniqArrayIf` rather than a list made distinct, cost a fifth more at 200,000 sessions.)"""
    return compact_sql(f"""
SELECT key, sum(bound) AS bound FROM (
    SELECT trace_id, sum(bound) AS bound, arrayDistinct(groupArrayIf(session_id, named)) AS names,
           max(indexed) AS in_index
    FROM (
        SELECT trace_id, bound, '' AS session_id, false AS named, false AS indexed FROM ({per_trace})
        UNION ALL
        SELECT trace_id, {zero}, session_id, {NAMED}, true FROM trace_sessions
        WHERE agent_id = {{agent:String}})
    GROUP BY trace_id
    HAVING in_index)
ARRAY JOIN if(empty(names), [trace_id], names) AS key
GROUP BY key
{having}
ORDER BY bound DESC, key
LIMIT {{scan:UInt64}}
""")


# The sort by span count reads sessions in the order of a cheap upper bound of their count and merges the
# span-id sets (the exact count) of the top ones only (`_page_by_span_count`). A list key's bound is the
# sum of `span_rows` (the span rows inserted, trajectory/tables.py: duplicates only raise it) over the
# traces the index could give it: a named session's every named trace, or, for a trace no row names a
# session, the trace itself. The session the key lists (resolved as `RESOLVED` resolves it) has no trace
# beyond those, so no more spans: a nested run's id only loses traces. Grouped by trace first (both tables
# are read in key order), no join; a trace not in the index lists nothing.
_SPAN_BOUNDS = _key_bounds("SELECT trace_id, span_rows AS bound FROM trace_summary WHERE agent_id = {agent:String}",
                           "toUInt64(0)")

# Every index row of the candidate keys' traces (those named after a key, and a named key's), to resolve
# them as `RESOLVED` would (as trajectory/session_page.py does for a page by time, and with one set of traces as it).
KEY_ROWS = compact_sql("""
SELECT session_id, trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)),
       toUnixTimestamp64Milli(max(last_received))
FROM trace_sessions
WHERE agent_id = {agent:String}
  AND trace_id IN (SELECT arrayJoin({keys:Array(String)})
                   UNION ALL
                   SELECT trace_id FROM session_traces
                   WHERE agent_id = {agent:String} AND session_id IN {keys:Array(String)})
GROUP BY session_id, trace_id
""")
# The exact span count of some traces: their span-id sets merged (distinct span ids, as `spans FINAL`).
_EXACT_SPANS = compact_sql("""
SELECT trace_id, uniqExactMerge(span_ids) FROM trace_summary
WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
GROUP BY trace_id
""")
# The sort by cost, likewise: sessions read in the order of an upper bound of their cost (`_page_by_cost`). A
# trace's bound is what its LLM spans of each (model, provider) could cost at the price book's dearest rates
# (`llm_usage`, trajectory/tables.py, and `PriceBook.rate_bound`, given as parameters: a model's prompt and
# completion rate and per-request price; its web searches, under a key of their own, at its price of a search,
# `_rate_bound`), plus the costs they reported; a key's is the sum over the traces
# the index could give it, as for the span count. Priced row by row of the summary and summed (the bound is
# linear in the figures, so merging a trace's rows first, `sumMap`, gives the same but costs twice the
# time; a per-request price is then counted once per row, which only raises the bound).
# The models given are those the agent's spans named when last read (`KnownModels`): a trace naming one not
# among them bounds at infinity, which sorts its key first and has the models read again.
_COST_BOUNDS = _key_bounds("""
SELECT trace_id,
       arrayMap(k -> indexOf({models:Array(Tuple(String, String))}, k), llm_usage.1) AS rate_at,
       arraySum(llm_usage.4) + if(has(rate_at, 0), inf, arraySum(arrayMap(
           (i, p, o) -> p * {prompt:Array(Float64)}[i] + o * {completion:Array(Float64)}[i]
                        + {request:Array(Float64)}[i],
           rate_at, llm_usage.2, llm_usage.3)))
       AS bound
FROM trace_summary WHERE agent_id = {agent:String}
""", "toFloat64(0)", "HAVING bound >= {floor:Float64}")

# The (model, provider) pairs the agent's LLM spans name, which `_COST_BOUNDS` needs the rates of.
_PRICED_MODELS = compact_sql("""
SELECT DISTINCT arrayJoin(llm_usage.1) FROM trace_summary WHERE agent_id = {agent:String}
""")
# Some traces' times as the summary has them (the sort by cost orders ties as `_priced_first` does).
_TRACE_TIMES = compact_sql("""
SELECT trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)) FROM trace_summary
WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
GROUP BY trace_id
""")
# Keys the sort by cost reads beyond the page, and at least when it reads more: fewer than for the span
# count, as each key read is its session's spans read (scattered over the table: a granule each).
_COST_SCAN_STEP = 16
# A bound is summed in floating point: a session's cost counts as above it only past this margin.
_BOUND_MARGIN = 1e-9
# Keys the sort by span count reads by bound before leaving the page to the summary's query (a page deep
# enough, or bounds far above the counts, as duplicated spans make them): past it the keys' traces would
# travel as too long a query parameter.
_MAX_BOUND_KEYS = 20_000
# Keys read by bound beyond the page: where no span came twice the bounds are the counts, and the page
# stops at once (a key that lists nothing, a trace a late root claimed, costs one of them).
_BOUND_SCAN_EXTRA = 64
# Up to this many candidate traces, the sort by span count counts them from their spans, which the page reads
# anyway, rather than from the summary's span-id sets: the summary's rows of a few scattered traces cost a
# granule of 8,192 rows of sets in each of its parts (the first page at 10M spans: docs/performance.md).
_COUNTED_FROM_SPANS = 1_000

# Sessions a filtered first page by time walks in list order before asking the summary for all of them.
_WALK_SESSIONS = 4_000
# A filtered walk's first window, in pages' worth (a page and one more), when no share is known.
_WALK_FIRST = 4
# Walk shares remembered (agents × filters), the oldest forgotten past it.
_SHARES_KEPT = 4_096
_REPORTED = 2  # where the reported cost is among _CALL_FIGURES
_MAX_GIVEN_TRACES = 5_000  # query parameters travel in the request: past a page's worth, let the store resolve

# A page of sessions by last or first seen is picked from the session index in list order
# (trajectory/session_page.py), reading as many sessions as the page needs: the spans are then read
# for that page only, so a page costs the page, not the agent's every span. A sort by span count reads
# sessions by a bound of their count and counts the top ones exactly (`_page_by_span_count`); with a
# filter or a search, or where that reads too many, it and the errors and model filters pick their page from the
# per-trace summary (`_SUMMARY_SESSIONS`: a row per trace), then read that page's spans. A sort by cost
# reads sessions by a bound of their cost and prices the top ones (`_page_by_cost`), a cost floor the
# sessions whose bound reaches it (`_floor_by_cost`); where the bound cannot serve, every session is
# priced. Pricing reads the LLM calls from the spans (`_LLM_CALLS`), because neither what counts as a call
# nor its price can be kept at ingest exactly.
# Which LLM spans count compares a span with others of its trace (a wrapping framework span counts only
# if no LLM span is under it, one call reported twice counts once, a streamed request is answered by a
# later sibling), which may arrive in later batches than it; and the price book (prices.yaml,
# genai-prices by date) is Python's, and may change after the spans came.

# Each LLM span of some traces (its latest version: `FINAL`) with whether it is a call the list counts:
# a leaf call (a framework's LLM span wrapping the client library's repeats its usage), not a step
# preparing a call, not a second report of a call, not a streamed call's request span. One read of the
# spans: the rules that compare a span with others are window functions over it, not self-joins, which
# cost a second and third read and most of the query's planning. A page's few traces are counted by the
# same rules in Python (trajectory/page_figures.py), which a test holds to these.
_SPANS_COUNTED = """(
    SELECT *,
           is_llm_call AND NOT preparing AND (trace_id, span_id) NOT IN (
               SELECT trace_id, parent_span_id FROM spans
               WHERE agent_id = {agent:String} AND is_llm_call AND parent_span_id != '' AND trace_id IN __TRACES__)
             AND NOT (response_id != '' AND next_report_start IS NOT NULL AND next_report_start <= end_ns)
             AND NOT (unanswered AND last_answer_start IS NOT NULL AND last_answer_start >= start_ns)
             AND NOT failed_unanswered
             AND NOT (response_id = '' AND input_tokens > 0 AND next_in_parent.2 NOT IN ('', scope_name)
                      AND next_in_parent.3 = input_tokens AND next_in_parent.4 = output_tokens
                      AND next_in_parent.1 >= end_ns) AS counted
    FROM (
        SELECT trace_id, span_id, parent_span_id, scope_name, model, provider, status_code, is_llm_call, start_time,
               end_time, received_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
               reasoning_tokens, input_audio_tokens, output_audio_tokens, web_search_requests, start_ns, end_ns,
               response_id,
               -- A NaN or infinite reported cost is unknown (NULL): the call is priced from its tokens like
               -- one that reported none.
               if(isFinite(reported_cost_usd), reported_cost_usd, NULL) AS cost,
               -- Prompt tokens include cached ones (as in the trajectory); emitters that leave them out say
               -- fewer prompt tokens than cache tokens.
               if(input_tokens < cache_read_tokens + cache_write_tokens,
                  input_tokens + cache_read_tokens + cache_write_tokens, input_tokens) AS prompt,
               -- A step preparing a call is no call (trajectory/tables.py, migration 207).
               prepares_call AS preparing,
               -- One call reported by several instrumentations (the same response id, overlapping in time)
               -- counts once, the report that started last kept (the innermost), as in the trajectory
               -- (trajectory/same_call.py, which also prefers a report with output, input and usage: these
               -- agree whenever every report has them). A report is dropped when a later one overlaps it:
               -- ordered by (start, longest first, span id), that is when the next one starts before it ends.
               leadInFrame(toNullable(start_ns)) OVER (
                   PARTITION BY trace_id, is_llm_call, response_id ORDER BY start_ns, end_ns DESC, span_id
                   ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_report_start,
               -- A streamed call's request span (no usage, no cost, no error) that a later sibling of the
               -- same instrumentation answers with usage (Logfire's "streaming response" span) is that call,
               -- not a second, unpriced one (trajectory/same_call.py, which also asks for the same model and
               -- input); one that failed is an attempt at the request the sibling answered (a LiteLLM Router
               -- falling back to another model: trajectory/mappers/litellm_failed_attempts.py), billed nothing.
               parent_span_id != '' AND input_tokens = 0 AND output_tokens = 0 AND reported_cost_usd IS NULL
                 AS unanswered,
               -- A failed one no answer follows (every retry failed: the run raised) is no call either, but a
               -- failure (counted as an error, as every failed span is): its step counts no LLM call and is priced
               -- nothing (trajectory/mappers/failed_attempts.py, `mark_unanswered`).
               status_code = 2 AND input_tokens = 0 AND output_tokens = 0 AND reported_cost_usd IS NULL
                 AS failed_unanswered,
               max(if(input_tokens > 0 OR output_tokens > 0, start_ns, NULL)) OVER (
                   PARTITION BY trace_id, is_llm_call, parent_span_id, scope_name) AS last_answer_start,
               -- A report with no response id that the next report of its parent and model, another
               -- instrumentation's started once it ended, repeats (the same prompt and completion tokens) is that
               -- call reported again, the later one counted (trajectory/same_call.py, `_repeats`: OpenLIT's span
               -- of a streamed google-genai call opens when the stream ends, after Google ADK's own of it).
               -- (start, scope, prompt, completion) of the next; (0, '', 0, 0) after the last.
               leadInFrame(tuple(start_ns, scope_name, input_tokens, output_tokens)) OVER (
                   PARTITION BY trace_id, is_llm_call, parent_span_id, model ORDER BY start_ns, span_id
                   ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_in_parent
        -- (The columns named, not `*`: planning a query that names all of the spans' columns costs more
        -- than running it.)
        FROM (SELECT trace_id, span_id, parent_span_id, scope_name, model, provider, status_code, is_llm_call,
                     start_time, end_time, received_at, input_tokens, output_tokens, cache_read_tokens,
                     cache_write_tokens, reasoning_tokens, input_audio_tokens, output_audio_tokens,
                     web_search_requests, reported_cost_usd, prepares_call,
                     call_response_id AS response_id,
                     toUnixTimestamp64Nano(start_time) AS start_ns, toUnixTimestamp64Nano(end_time) AS end_ns
              FROM spans FINAL
              PREWHERE agent_id = {agent:String} AND trace_id IN __TRACES__ WHERE is_llm_call)))
"""


# The counted calls' figures, per group: what pricing needs (see `_add_calls`).
_CALL_FIGURES = """
countIf(counted), countIf(counted AND cost IS NOT NULL), sumIf(cost, counted AND cost IS NOT NULL),
sumIf(prompt, counted AND cost IS NULL), sumIf(output_tokens, counted AND cost IS NULL),
sumIf(cache_read_tokens, counted AND cost IS NULL), sumIf(cache_write_tokens, counted AND cost IS NULL),
sumIf(prompt, counted), sumIf(output_tokens, counted), sumIf(cache_read_tokens, counted),
sumIf(reasoning_tokens, counted), countIf(counted AND cost IS NULL AND input_tokens = 0 AND output_tokens = 0),
sumIf(input_audio_tokens, counted AND cost IS NULL), sumIf(output_audio_tokens, counted AND cost IS NULL),
sumIf(web_search_requests, counted AND cost IS NULL)
"""

# Counted LLM calls per trace and (model, provider), summed per session in Python (a trace of two
# sessions counts in each): for sessions that were not read as a page (a sort by cost prices them all).
_LLM_CALLS = compact_sql(f"""
SELECT trace_id, model, provider, {_CALL_FIGURES}
FROM {_SPANS_COUNTED}
GROUP BY trace_id, model, provider
""")

class BadQuery(ValueError):
    """A parameter of the session list the caller can fix."""


@dataclass
class SessionRow:
    session_id: str
    spans: int
    traces: int
    first_start_ns: int
    last_end_ns: int
    last_received_ms: int
    errors: int
    rootless_traces: int
    missing_parents: int
    models: list[str]
    trace_ids: list[str] = field(default_factory=list)
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)
    price_sources: set[str] = field(default_factory=set)
    unpriced: list[str] = field(default_factory=list)

    def status(self, now: float, quiet_period: float) -> str:
        complete = not self.rootless_traces and not self.missing_parents
        quiet = now - self.last_received_ms / 1000 >= quiet_period
        return VALID if complete and quiet else PARTIAL

    def view(self, now: float, quiet_period: float) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "status": self.status(now, quiet_period),
            "span_count": self.spans,
            "trace_count": self.traces,
            "first_seen": iso(self.first_start_ns),
            "last_seen": iso(self.last_end_ns),
            "duration_s": round(max(0, self.last_end_ns - self.first_start_ns) / 1e9, 6),
            # The LLM calls, each counted once, as the session summary's `llm_calls` (a trajectory's steps
            # count the user's and system messages too); `steps` is the name clients written earlier read.
            "llm_calls": self.steps,
            "steps": self.steps,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": float(self.cost_usd) if self.cost_usd is not None else None,
            "cost_priced": self.cost_usd is not None,
            "price_sources": sorted(self.price_sources),
            "unpriced": self.unpriced,
            "errors": self.errors,
            "models": self.models,
        }


@dataclass(frozen=True)
class SessionQuery:
    since_ns: int = 0
    until_ns: int = 2**62
    limit: int = 50
    offset: int = 0
    sort: str = "last_seen"
    errors_only: bool = False
    model: str | None = None
    min_cost: float | None = None
    # A keyset cursor's place (session_page.rank of the last session shown): the page starts after it.
    after: tuple[int, str] | None = None
    # The same for the other orders (by spans, by cost, by time with a cost floor), as the kept rows rank them
    # (`session_rows.KeptRow.rank`): only a page served by kept rows resumes there; the list's own read uses the
    # offset, which the cursor carries too.
    rank_after: tuple[Any, ...] | None = None
    # Only sessions whose id holds this text, in any case.
    search: str | None = None


@dataclass
class SessionPage:
    rows: list[SessionRow]
    more: bool
    # Where the next page starts (a rank), when the page was picked in index order (by last or first seen).
    after: tuple[int, str] | None = None
    # Where the next page starts in another order, when the page was served by kept rows.
    rank_after: tuple[Any, ...] | None = None


def iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat().replace("+00:00", "Z")


# Times a query may name: the store keeps nanoseconds since 1970 in an Int64 (up to 2262).
_LATEST_NS = 2**62


def parse_time(value: str, name: str) -> int:
    """ISO 8601 or unix seconds -> unix nanoseconds, within 1970..2116 (NaN, Infinity refused)."""
    text = value.strip()
    nanoseconds: int | None = None
    try:
        number = Decimal(text)
        if number.is_finite():
            nanoseconds = int(number * 1_000_000_000)
    except ArithmeticError:
        pass
    if nanoseconds is None:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise BadQuery(f"{name}={value[:60]!r} is not a time; give ISO 8601 (2025-01-31T12:00:00Z) or unix "
                           "seconds") from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        nanoseconds = int(moment.timestamp() * 1_000_000_000)
    if not 0 <= nanoseconds <= _LATEST_NS:
        raise BadQuery(f"{name}={value[:60]!r} is out of range: give a time from 1970-01-01 to "
                       f"{iso(_LATEST_NS)[:10]} (unix seconds 0..{_LATEST_NS // 1_000_000_000})")
    return nanoseconds


def encode_cursor(offset: int, sort: str, after: tuple[int, str] | None = None,
                  rank_after: tuple[Any, ...] | None = None) -> str:
    """A cursor for the page at `offset`; with `after` (a time-ordered page's last rank in the index) or
    `rank_after` (another order's, as kept rows rank it) it resumes there."""
    data: dict[str, Any] = {"o": offset, "s": sort}
    if after is not None:
        data["a"] = [after[0], after[1]]
    if rank_after is not None:
        data["r"] = list(rank_after)
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _int64(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not -(2**63) <= value < 2**63:
        raise ValueError("not an Int64")
    return value


def _finite(value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError("not a finite number")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _kept_rank(value: Any, sort: str) -> tuple[Any, ...]:
    """A rank `encode_cursor` wrote for `sort` (`session_rows._rank`, not by the index), checked field by field."""
    if sort == "cost":
        unpriced, cost, rest, last, key = value
        if not isinstance(unpriced, bool):
            raise ValueError("not a bool")
        return (unpriced, _finite(cost), _finite(rest), _int64(last), _text(key))
    position, key = value
    return (_int64(position), _text(key))


def decode_cursor(cursor: str, sort: str) -> tuple[int, tuple[int, str] | None, tuple[Any, ...] | None]:
    """(offset, index rank to resume after or None, other rank to resume after or None) from a cursor
    `encode_cursor` gave for `sort`."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, cursor_sort = int(data["o"]), str(data["s"])
        if not 0 <= offset <= 1_000_000_000:
            raise ValueError("offset out of range")
        after: tuple[int, str] | None = None
        if "a" in data:
            position, key = data["a"]
            after = (_int64(position), _text(key))
        rank_after = _kept_rank(data["r"], cursor_sort) if "r" in data else None
    except Exception as exc:
        raise BadQuery("cursor is not one this service gave out; start again without it") from exc
    if cursor_sort != sort:
        raise BadQuery(f"this cursor pages sort={cursor_sort}; keep the sort while paging or start again")
    return offset, after, rank_after


def _picked(store: Store, agent_id: str, q: SessionQuery, paged_in_sql: bool) -> list[Resolved]:
    """Sessions as the summary has them (filtered; sorted and paged in SQL unless priced first).

    Their times are the spans' (as the summary keeps them), their received time unknown here (0).
    """
    having: list[str] = []
    params: dict[str, Any] = {"agent": agent_id, "since": q.since_ns, "until": q.until_ns}
    if q.errors_only:
        having.append("failing > 0")
    if q.model:
        having.append("has(session_models, {model:String})")
        params["model"] = q.model
    if q.search:
        params["search"] = q.search
    order = SORTS[q.sort] if paged_in_sql else None
    limit = f"LIMIT {int(q.limit)} OFFSET {int(q.offset)}" if paged_in_sql else ""
    sql = (_SUMMARY_SESSIONS
           .replace("__SPAN_COUNT__", "uniqExactMerge(span_ids)" if order == SORTS["spans"] else "0")
           .replace("__SEARCH__", f"WHERE {holds_search('session_id')}" if q.search else "")
           .replace("__HAVING__", ("HAVING " + " AND ".join(having)) if having else "")
           .replace("__ORDER__", order or "sid").replace("__LIMIT__", limit))
    return [Resolved(str(r[0]), sorted(str(t) for t in r[6]), int(r[2]), int(r[3]), 0)
            for r in store.query(sql, params)]


K = TypeVar("K")
V = TypeVar("V")


class _Newest(Generic[K, V]):
    """A process's memory of at most `kept` values, the oldest forgotten past it (dicts keep insertion order)."""

    def __init__(self, kept: int) -> None:
        self._values: dict[K, V] = {}
        self._kept = kept
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values.pop(key, None)
            if len(self._values) >= self._kept:
                del self._values[next(iter(self._values))]
            self._values[key] = value


class WalkShares:
    """The share of walked sessions each filter of an agent's list kept on its last walk: a hint that
    sizes the next walk's first window, so that a filter keeping few sessions (errors, often one in ten)
    reads its page in one window instead of two. Pages are the same whatever it says: only how far the
    first read looks changes. Kept per service process, bounded."""

    def __init__(self, kept: int = _SHARES_KEPT) -> None:
        self._shares: _Newest[tuple[str, bool, str, str], float] = _Newest(kept)

    @staticmethod
    def _key(agent_id: str, q: SessionQuery) -> tuple[str, bool, str, str]:
        return agent_id, q.errors_only, q.model or "", q.search or ""

    def share(self, agent_id: str, q: SessionQuery) -> float | None:
        return self._shares.get(self._key(agent_id, q))

    def record(self, agent_id: str, q: SessionQuery, kept: int, walked: int) -> None:
        if walked:
            self._shares.put(self._key(agent_id, q), kept / walked)


def _window_for(need: int, share: float | None) -> int:
    """Sessions to walk for `need` matches of a filter that keeps `share` of them (a quarter more, and 64 for
    sessions that list nothing), or four pages' worth when the share is not known."""
    if share is None or share <= 0:
        wanted = _WALK_FIRST * need + 64
    else:
        wanted = int(need / share * 1.25) + 64
    return min(wanted, _WALK_SESSIONS)


def _walk_filtered(store: Store, agent_id: str, q: SessionQuery, shares: WalkShares | None) -> list[Resolved] | None:
    """A filtered page by time (and one more), walking the index in list order from the cursor's place and
    checking each candidate's traces in the summary: a page costs about the page over the share of
    sessions the filter keeps. A first page whose filter keeps too few is left to the summary's query
    (None); a page after a keyset cursor walks on, so that a walk neither repeats nor skips a session.
    """
    need = (q.offset if q.after is None else 0) + q.limit + 1
    after = q.after
    # (A share too low for any walk still walks, once, as far as a walk goes: a share is a process's
    # memory of one walk, and sending the filter to the summary's query on it alone could keep it there.)
    window = _window_for(need, shares.share(agent_id, q) if shares is not None else None)
    matched: list[Resolved] = []
    walked = 0
    while True:
        batch = page_by_time(store, agent_id, q.sort, q.since_ns, q.until_ns, window, 0, after, q.search)
        walked += len(batch)
        traces = sorted({trace for session in batch for trace in session.trace_ids})
        flags = {str(t): (bool(failing), {str(m) for m in models}) for t, failing, models in store.query(
            TRACE_FLAGS, {"agent": agent_id, "traces": traces}, SHORT_READ)} if traces else {}
        for session in batch:
            found = [flags[t] for t in session.trace_ids if t in flags]
            if found and (not q.errors_only or any(failing for failing, _ in found)) \
                    and (not q.model or any(q.model in models for _, models in found)):
                matched.append(session)
        done = len(matched) >= need or len(batch) < window
        if done or (q.after is None and walked >= _WALK_SESSIONS):
            if shares is not None:
                shares.record(agent_id, q, len(matched), walked)
            return matched if done else None
        after = rank(q.sort, batch[-1])
        # As far as the share kept so far says the rest of the page needs, and at least twice as far.
        window = max(min(window * 2, _WALK_SESSIONS),
                     _window_for(need - len(matched), len(matched) / walked if matched else None))


def _page_by_span_count(store: Store, agent_id: str, q: SessionQuery, need: int,
                        prices: PriceBook) -> list[SessionRow] | None:
    """The rows of the sessions ranked `q.offset`..`need` by span count (most first, ties by id), exactly,
    reading keys in the order of their bound (`_SPAN_BOUNDS`) and counting the spans of those read only.

    Why stopping early is exact: a key not read has a bound, hence its session a count, of at most the last
    read key's bound `b`; and when equal to `b`, its id sorts after the last read key's. So sessions read
    whose exact count beats `b` (or equals it with an id no later than that key's) are in their final order
    before every one not read. When fewer than the page needs are settled, four times as many keys are
    read (None past `_MAX_BOUND_KEYS`: the summary's query counts them all).

    The exact counts of a few candidates come from reading their spans (`_read`), which the page needs
    anyway; of many (a deep page), from merging their span-id sets in the summary (`_EXACT_SPANS`), and the
    page's spans are read after. Both count distinct span ids: the summary's sets and the newest row of
    each span id hold the same ids.
    """
    scan = need + _BOUND_SCAN_EXTRA
    while True:
        bounds = [(str(key), int(bound)) for key, bound in store.query(
            _SPAN_BOUNDS, {"agent": agent_id, "scan": scan})]
        if not bounds:
            return []
        keys = [key for key, _ in bounds]
        rows = [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]))
                for r in store.query(KEY_ROWS, {"agent": agent_id, "keys": keys}, SHORT_READ)]
        listed = [s for s in resolve(set(keys), rows).values()
                  if s.last_end_ns >= q.since_ns and s.first_start_ns < q.until_ns]
        traces = sorted({trace for session in listed for trace in session.trace_ids})
        counted: list[tuple[int, Resolved | SessionRow]]
        if len(traces) <= _COUNTED_FROM_SPANS:
            # (Sessions whose spans are not readable are not listed, as the summary's query lists them.)
            counted = [(row.spans, row) for row in read_sessions(store, agent_id, listed, prices)]
        else:
            exact = {str(t): int(n) for t, n in store.query(
                _EXACT_SPANS, {"agent": agent_id, "traces": traces})} if traces else {}
            # As the summary's query lists them: sessions with no summarised trace are not listed.
            counted = [(sum(exact[t] for t in s.trace_ids if t in exact), s) for s in listed
                       if any(t in exact for t in s.trace_ids)]
        counted.sort(key=lambda c: (-c[0], c[1].session_id))
        if len(bounds) < scan:  # read to the end: every session is among them
            return _rows_of(store, agent_id, [s for _, s in counted[q.offset:need]], prices)
        last_key, last_bound = bounds[-1]
        settled = [s for n, s in counted if n > last_bound or (n == last_bound and s.session_id <= last_key)]
        if len(settled) >= need:
            return _rows_of(store, agent_id, settled[q.offset:need], prices)
        if scan >= _MAX_BOUND_KEYS:
            return None
        scan = min(scan * 4, _MAX_BOUND_KEYS)


def _rows_of(store: Store, agent_id: str, ranked: list[Resolved | SessionRow], prices: PriceBook) -> list[SessionRow]:
    """Rows for ranked sessions, in their order: those already read as they are, the others read."""
    unread = [s for s in ranked if isinstance(s, Resolved)]
    read = {row.session_id: row for row in read_sessions(store, agent_id, unread, prices)} if unread else {}
    return [s if isinstance(s, SessionRow) else read[s.session_id] for s in ranked if
            isinstance(s, SessionRow) or s.session_id in read]


class KnownModels(_Newest[str, list[tuple[str, str]]]):
    """The (model, provider) pairs each agent's LLM spans named when last read, so that a page by cost need not
    read them first (`_COST_BOUNDS` tells when a trace names one not among them, and they are read again).
    Pages are the same whatever it holds. Kept per service process, bounded."""

    def __init__(self, kept: int = _SHARES_KEPT) -> None:
        super().__init__(kept)


def _rate_bound(prices: PriceBook, model: str, provider: str) -> RateBound | None:
    """The price book's bound of a (model, provider) of `llm_usage`: one of web searches (trajectory/tables.py,
    migration 225: the searches in the prompt tokens' place) at the model's price of a search."""
    if not provider.startswith(WEB_SEARCHES):
        return prices.rate_bound(model, provider or None)
    bound = prices.rate_bound(model, provider.removeprefix(WEB_SEARCHES) or None)
    return None if bound is None else RateBound(bound.search, Decimal(0))


def _cost_bounds(store: Store, agent_id: str, prices: PriceBook, min_cost: float | None, scan: int,
                 known: KnownModels | None) -> list[tuple[str, float]] | None:
    """The first `scan` keys by the bound of their cost, at or above the cost floor (`_COST_BOUNDS`); None when
    the price book bounds one of the agent's models not (a price by date).

    The agent's models' rates are given as parameters: those known from the last read, read again when a trace
    names one not among them (its key's bound is then infinite), which a model first seen since brings about."""
    models = known.get(agent_id) if known is not None else None
    for _ in range(3):
        if models is None:
            models = sorted((str(m), str(p)) for (m, p), in store.query(_PRICED_MODELS, {"agent": agent_id}))
            if known is not None:
                known.put(agent_id, models)
        rates = [_rate_bound(prices, model, provider) for model, provider in models]
        bounded = [rate for rate in rates if rate is not None]
        if len(bounded) < len(rates):
            return None
        params = {"agent": agent_id, "models": models, "scan": scan,
                  "prompt": [float(r.prompt) for r in bounded], "completion": [float(r.completion) for r in bounded],
                  "request": [float(r.request) for r in bounded],
                  "floor": -1.0 if min_cost is None else min_cost * (1 - _BOUND_MARGIN) - _BOUND_MARGIN}
        bounds = [(str(key), float(bound)) for key, bound in store.query(_COST_BOUNDS, params)]
        if not bounds or not math.isinf(bounds[0][1]):
            return bounds
        models = None
    return None  # models kept coming as they were read: every session is priced


def _bounded_sessions(store: Store, agent_id: str, q: SessionQuery, keys: list[str]) -> list[Resolved]:
    """The sessions some keys list in [since, until), as the summary's query lists them (`_picked`): their
    summarised traces, with the summary's times."""
    if not keys:
        return []
    rows = [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]))
            for r in store.query(KEY_ROWS, {"agent": agent_id, "keys": keys}, SHORT_READ)]
    listed = [s for s in resolve(set(keys), rows).values()
              if s.last_end_ns >= q.since_ns and s.first_start_ns < q.until_ns]
    traces = sorted({trace for session in listed for trace in session.trace_ids})
    times = {str(t): (int(first), int(last)) for t, first, last in store.query(
        _TRACE_TIMES, {"agent": agent_id, "traces": traces}, SHORT_READ)} if traces else {}
    sessions = []
    for session in listed:
        summarised = [t for t in session.trace_ids if t in times]
        if summarised:
            sessions.append(Resolved(session.session_id, summarised, min(times[t][0] for t in summarised),
                                     max(times[t][1] for t in summarised), 0))
    return sessions


def _page_by_cost(store: Store, agent_id: str, q: SessionQuery, need: int, prices: PriceBook,
                  known: KnownModels | None) -> list[SessionRow] | None:
    """The rows of the sessions ranked `q.offset`..`need` by cost (dearest first, unpriced last, ties by
    recency then id), at or above `q.min_cost` if given, exactly, reading keys in the order of their bound
    (`_COST_BOUNDS`) and only those keys' sessions' spans, each once.

    As for the span count: a key not read bounds its session's cost by at most the last key read's bound,
    so sessions read whose cost is above it are in their final order before every one not read; keys whose
    bound is below the cost floor are not read at all. When too few are settled, more keys are read (a
    quarter more: what is missing is usually the sessions tied in cost at the page's end), and only the new
    ones' spans. None when the price book gives no bound for a model of the agent's (a price by date) or
    the page needs more than `_MAX_BOUND_KEYS` keys (every session is then priced, `_priced_first`).
    """
    floor = None if q.min_cost is None else Decimal(repr(q.min_cost))
    scan = need + min(_BOUND_SCAN_EXTRA, _COST_SCAN_STEP)
    read = 0  # keys read so far: the bounds' order is fixed, so they are the first `read` of any longer read
    ranked: list[tuple[int, SessionRow]] = []  # (the summary's last end, as `_priced_first` ties by it; row)
    while True:
        bounds = _cost_bounds(store, agent_id, prices, q.min_cost, scan, known)
        if bounds is None:
            return None
        sessions = _bounded_sessions(store, agent_id, q, [key for key, _ in bounds[read:]])
        read = len(bounds)
        last_ends = {s.session_id: s.last_end_ns for s in sessions}
        ranked += [(last_ends[row.session_id], row)
                   for row in read_sessions(store, agent_id, sessions, prices, summarised=True)
                   if floor is None or (row.cost_usd is not None and row.cost_usd >= floor)]
        ranked.sort(key=lambda r: (r[1].cost_usd is None, -(r[1].cost_usd or 0), -r[0], r[1].session_id))
        if len(bounds) < scan:  # read to the end: every session is among them
            return [row for _, row in ranked[q.offset:need]]
        last_bound = bounds[-1][1] * (1 + _BOUND_MARGIN) + _BOUND_MARGIN
        settled = [row for _, row in ranked if row.cost_usd is not None and row.cost_usd > last_bound]
        if len(settled) >= need:
            return settled[q.offset:need]
        if scan >= _MAX_BOUND_KEYS:
            return None
        scan = min(scan + max(scan // 4, _COST_SCAN_STEP), _MAX_BOUND_KEYS)


def _floor_by_cost(store: Store, agent_id: str, q: SessionQuery, prices: PriceBook,
                   known: KnownModels | None) -> list[Resolved] | None:
    """Every session at or above the cost floor, in the order of `q.sort`: only the sessions whose bound
    reaches the floor are priced. None where the book gives no bound or more than `_MAX_BOUND_KEYS` do."""
    bounds = _cost_bounds(store, agent_id, prices, q.min_cost, _MAX_BOUND_KEYS + 1, known)
    if bounds is None or len(bounds) > _MAX_BOUND_KEYS:
        return None
    return _priced_in_order(store, agent_id, _bounded_sessions(store, agent_id, q, [key for key, _ in bounds]), q,
                            prices)


def read_sessions(store: Store, agent_id: str, sessions: Sequence[Resolved], prices: PriceBook,
                  summarised: bool = False) -> list[SessionRow]:
    """The sessions' rows (in their order), their traces' spans read once, summed and priced. `summarised`: the
    sessions' starts are the summary's (`_picked`, `_bounded_sessions`), not the session index's."""
    if not sessions:
        return []
    # Each trace read over its session's time: the summary's bounds every span of it; the index's, the spans it
    # indexes, so a little wider and checked (`_page_spans`).
    lead = 0 if summarised else _UNINDEXED_LEAD_NS
    windows: dict[str, tuple[int, int]] = {}
    for session in sessions:
        for trace in session.trace_ids:
            since, until = windows.get(trace, (_MAX_TIME_NS, 0))
            windows[trace] = (min(since, max(session.first_start_ns - lead, 0)),
                              max(until, min(session.last_end_ns + lead, _MAX_TIME_NS)))
    per_trace, calls = page_figures(_page_spans(store, agent_id, windows, checked=not summarised))
    rows: list[SessionRow] = []
    for session in sessions:
        found = [(t, per_trace[t]) for t in session.trace_ids if t in per_trace]
        if not found:
            continue  # indexed, but its spans are not readable (as the join with the spans would drop it)
        figures = [f for _, f in found]
        rows.append(SessionRow(
            session.session_id, sum(int(f[0]) for f in figures), len(found), min(int(f[1]) for f in figures),
            max(int(f[2]) for f in figures), max(int(f[3]) for f in figures), sum(int(f[4]) for f in figures),
            sum(1 for f in figures if not int(f[5])), sum(int(f[6]) for f in figures),
            sorted({str(m) for f in figures for m in f[7]}), trace_ids=[t for t, _ in found]))
    _apply_calls(rows, [(*key, *figures) for key, figures in calls.items()], prices)
    return rows


# How far beyond its indexed spans a page's trace is read: spans the index leaves out (an application's request
# span around an agent's run, its work after it) start a little before or after them, seldom an hour.
_UNINDEXED_LEAD_NS = 3_600 * 10**9
_MAX_TIME_NS = 2**63 - 1
_DAY_NS = 86_400 * 10**9  # `spans` is partitioned by UTC day of start (evalkit/migrations.py)
# The most time ranges one read of a page's spans takes (a SELECT each): past it, the closest are read as one.
_READ_RANGES = 16
# Reads a page's spans query waits for on another connection (the summary's bounds, `_page_spans`).
_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evalkit-page")


def _time_ranges(windows: dict[str, tuple[int, int]]) -> list[tuple[list[str], int, int]]:
    """Traces' windows (trace -> [since, until] ns) as the time ranges a read takes them in: (traces, since,
    until), each trace in one. Windows reaching a common day share a range (the same parts are read for them);
    past `_READ_RANGES`, the two ranges closest in time are joined, again and again."""
    ranges: list[tuple[list[str], int, int]] = []
    for trace, (since, until) in sorted(windows.items(), key=lambda item: item[1]):
        if ranges and since // _DAY_NS <= ranges[-1][2] // _DAY_NS:
            traces, first, last = ranges[-1]
            traces.append(trace)
            ranges[-1] = (traces, first, max(last, until))
        else:
            ranges.append(([trace], since, until))
    while len(ranges) > _READ_RANGES:
        i = min(range(len(ranges) - 1), key=lambda j: ranges[j + 1][1] - ranges[j][2])
        (before, first, last), (after, _, later) = ranges[i], ranges.pop(i + 1)
        before.extend(after)
        ranges[i] = (before, first, max(last, later))
    return ranges


def _read_ranges(store: Store, agent_id: str, windows: dict[str, tuple[int, int]]) -> list[Sequence[Any]]:
    ranges = _time_ranges(windows)
    params: dict[str, Any] = {"agent": agent_id}
    for i, (traces, since, until) in enumerate(ranges):
        params.update({f"traces_{i}": traces, f"since_{i}": since, f"until_{i}": until})
    return store.query_columns(page_span_rows(len(ranges)), params) if ranges else []


def _page_spans(store: Store, agent_id: str, windows: dict[str, tuple[int, int]],
                checked: bool = False) -> list[Sequence[Any]]:
    """The span rows (`page_span_rows`) by column (`Store.query_columns`) of some traces, each read over its
    window (trace -> [since, until] ns); `checked`: the windows are the session index's, widened, and may miss
    spans it does not index, so they are checked against the summary's.

    `spans` is partitioned by day of start, and a trace's key range is in a granule of every day's parts: 50
    scattered traces read from one start on filter a granule of each in every partition after it (588 granules
    of 12 parts at 10M spans over 12 days, where 52 hold them; a page by cost or span count is scattered over
    every day). So each trace is read over its own days only (`_time_ranges`). The summary's first start and
    last end count every span, so they bound them all (a span ends no earlier than it starts); but its rows
    are a lookup by random trace id (~17 ms at 10M spans), where the index's times come with the page. So a
    page by time reads each trace from an hour before to an hour after its session as the index has it, while
    the summary's bounds are read beside on another connection; where a trace's spans reach outside its window, the
    page is read again over the summary's (a test has a request span a day before its trace's first indexed
    one, and work a day after its last). Sessions picked from the summary come with its bounds: read once,
    with no check.
    """
    if not checked or not windows:
        return _read_ranges(store, agent_id, windows)
    traces = sorted(windows)
    bounds = _BESIDE.submit(store.query, _TRACE_TIMES, {"agent": agent_id, "traces": traces}, SHORT_READ)
    rows = _read_ranges(store, agent_id, windows)
    # The summary's bounds: those of every span row inserted (trajectory/tables.py). Its row is written by a view
    # after the span's part, so a trace it has no row of yet bounds nothing (read whole): a span being flattened
    # as a page is read may be read or not either way, as any of an unfinished insert.
    summary = {str(trace): (int(first), int(last)) for trace, first, last in bounds.result()}
    exact = {trace: summary.get(trace, (0, _MAX_TIME_NS)) for trace in traces}
    if any(exact[t][0] < windows[t][0] or exact[t][1] > windows[t][1] for t in traces):
        rows = _read_ranges(store, agent_id, exact)
    return rows


def order_rows(rows: list[SessionRow], sort: str) -> None:
    """Sort rows as the list orders `sort`, by their own figures (ties by session id)."""
    if sort == "cost":
        # Unpriced sessions last; ties by recency.
        rows.sort(key=lambda r: (r.cost_usd is None, -(r.cost_usd or 0), -r.last_end_ns, r.session_id))
        return
    key = {"last_seen": lambda r: (-r.last_end_ns, r.session_id),
           "first_seen": lambda r: (-r.first_start_ns, r.session_id),
           "spans": lambda r: (-r.spans, r.session_id)}[sort]
    rows.sort(key=key)


def _price(store: Store, agent_id: str, rows: Sequence[SessionRow], prices: PriceBook) -> None:
    if not rows:
        return
    traces = {trace for row in rows for trace in row.trace_ids}
    if len(traces) <= _MAX_GIVEN_TRACES:
        sql = _LLM_CALLS.replace("__TRACES__", "{traces:Array(String)}")
        params: dict[str, Any] = {"agent": agent_id, "traces": sorted(traces)}
    else:
        sql = _LLM_CALLS.replace("__TRACES__", _INDEX_TRACES).replace("__RESOLVED__", RESOLVED)
        params = {"agent": agent_id, "sessions": [row.session_id for row in rows]}
    _apply_calls(rows, store.query(sql, params), prices)


def _count_spans(store: Store, agent_id: str, rows: Sequence[SessionRow]) -> None:
    """Set the rows' span counts (distinct span ids, as `spans FINAL` counts them), for a sort by span count
    of sessions picked by their cost."""
    traces = sorted({trace for row in rows for trace in row.trace_ids})
    exact: dict[str, int] = {}
    for first in range(0, len(traces), _MAX_GIVEN_TRACES):
        exact.update((str(t), int(n)) for t, n in store.query(
            _EXACT_SPANS, {"agent": agent_id, "traces": traces[first:first + _MAX_GIVEN_TRACES]}))
    for row in rows:
        row.spans = sum(exact.get(t, 0) for t in row.trace_ids)


def _apply_calls(rows: Sequence[SessionRow], calls: Sequence[Sequence[Any]], prices: PriceBook) -> None:
    """Add (trace, model, provider, *figures) of counted LLM calls to the sessions holding those traces."""
    by_trace: dict[str, list[SessionRow]] = {}
    for row in rows:
        for trace in row.trace_ids:
            by_trace.setdefault(trace, []).append(row)
    # Summed per session and (model, provider) before pricing, as one call of the price book per session.
    summed: dict[tuple[int, str, str], list[Any]] = {}
    owners: dict[int, SessionRow] = {}
    for trace, model, provider, *counts in calls:
        if not counts[0]:
            continue  # spans of this (model, provider) but no counted call
        for row in by_trace.get(str(trace), ()):
            owners[id(row)] = row
            seen = summed.setdefault((id(row), str(model), str(provider)), [0] * len(counts))
            for i, value in enumerate(counts):
                # The reported cost (a float) in decimal, summed exactly.
                seen[i] += (Decimal(repr(float(value))) if value is not None else 0) if i == _REPORTED else value
    for (owner, model, provider), counts in summed.items():
        _add_calls(owners[owner], model, provider, counts, prices)


def _add_calls(row: SessionRow, model: str, provider: str, counts: Sequence[Any], prices: PriceBook) -> None:
    """Add the session's LLM calls of one (model, provider) to its steps, tokens and cost."""
    (count, reported_count, reported, prompt, completion, cache_read, cache_write, all_prompt, all_completion,
     all_cached, reasoning, no_usage, audio_in, audio_out, searches) = counts
    row.steps += int(count)
    row.prompt_tokens += int(all_prompt)
    row.completion_tokens += int(all_completion)
    row.cached_tokens += int(all_cached)
    row.reasoning_tokens += int(reasoning)
    if reported_count:
        row.price_sources.add("reported")
        if row.cost_usd is not None:
            row.cost_usd += Decimal(reported)
    unreported = int(count) - int(reported_count)
    if not unreported:
        return
    priced = None
    if model and not no_usage:
        # Audio tokens are of the prompt and completion tokens (each at most those, as the trajectory reads them).
        tokens = TokenCounts(int(prompt), int(completion), int(cache_read), int(cache_write),
                             min(int(audio_in), int(prompt)), min(int(audio_out), int(completion)), int(searches))
        when = datetime.fromtimestamp(row.first_start_ns / 1e9, UTC)
        priced = prices.cost(tokens, model, provider or None, when)
    if priced is None:
        why = "no model name" if not model else ("no token usage" if no_usage else "no price")
        row.unpriced.append(f"{model or '?'}" + (f" ({provider})" if provider else "") + f": {why}")
        row.cost_usd = None
    else:
        row.price_sources.add(priced.source)
        if row.cost_usd is not None:
            row.cost_usd += priced.usd


def index_walk_serves(query: SessionQuery) -> bool:
    """Whether the page is read by walking the session index in list order, costing the page: by time, with no
    filter but a search."""
    return query.sort in ORDERS and query.min_cost is None and not query.errors_only and not query.model


def list_sessions(store: Store, agent_id: str, query: SessionQuery, prices: PriceBook,
                  shares: WalkShares | None = None, known: KnownModels | None = None) -> SessionPage:
    """One page of sessions, whether more follow, and (by last or first seen) where the next one starts.

    `shares` remembers what share of sessions each filter kept, to size the next walk (`WalkShares`); `known`,
    which models each agent's spans named, for the bounds of a page by cost (`KnownModels`)."""
    if query.sort not in SORTS:
        raise BadQuery(f"sort={query.sort!r} is not known; use one of {', '.join(SORTS)}")
    if (query.sort == "cost" or query.min_cost is not None) and not query.errors_only and not query.model \
            and not query.search:
        # Sessions by a bound of their cost: a page by cost prices the top ones, a cost floor those whose
        # bound reaches it.
        if query.sort == "cost":
            by_cost = _page_by_cost(store, agent_id, query, query.offset + query.limit + 1, prices, known)
            if by_cost is not None:
                rows = by_cost[:query.limit]
                order_rows(rows, query.sort)  # by the spans' own times, as the page shows them
                return SessionPage(rows, len(by_cost) > query.limit)
        else:
            floored = _floor_by_cost(store, agent_id, query, prices, known)
            if floored is not None:
                return _page_of(store, agent_id, floored, query, prices)
    if query.sort == "cost" or query.min_cost is not None:
        return _priced_first(store, agent_id, query, prices)
    if query.sort in ORDERS:  # the index serves it, in list order
        # One more than the page says whether more follow; the page is cut in the index's order, so that
        # the next one (from the cursor's rank, or the offset) neither repeats nor skips a session.
        picked: list[Resolved] | None
        if index_walk_serves(query):
            try:
                # A first page whose sessions lie far down the index (a time range long before the newest
                # sessions, by last seen) is left to the summary's query, as a filtered walk's is.
                picked = page_by_time(store, agent_id, query.sort, query.since_ns, query.until_ns, query.limit + 1,
                                      query.offset if query.after is None else 0, query.after, query.search,
                                      give_up_after=_WALK_SESSIONS if query.after is None else None)
            except TooFar:
                picked = None
        else:
            walked = _walk_filtered(store, agent_id, query, shares)
            picked = None if walked is None else walked[(query.offset if query.after is None else 0):]
        if picked is not None:
            shown = picked[:query.limit]
            rows = read_sessions(store, agent_id, shown, prices)
            order_rows(rows, query.sort)  # as the spans have them (the index may not yet know a late span's time)
            return SessionPage(rows, len(picked) > query.limit, rank(query.sort, shown[-1]) if shown else None)
    if query.sort == "spans" and not query.errors_only and not query.model and not query.search:
        by_count = _page_by_span_count(store, agent_id, query, query.offset + query.limit + 1, prices)
        if by_count is not None:
            rows = by_count[:query.limit]
            order_rows(rows, query.sort)
            return SessionPage(rows, len(by_count) > query.limit)
    chosen = _picked(store, agent_id, SessionQuery(**{**query.__dict__, "limit": query.limit + 1}), True)
    rows = read_sessions(store, agent_id, chosen[:query.limit], prices, summarised=True)
    order_rows(rows, query.sort)
    return SessionPage(rows, len(chosen) > query.limit)


def _priced_first(store: Store, agent_id: str, query: SessionQuery, prices: PriceBook) -> SessionPage:
    """A page by cost or above a cost floor: every session the filters pick is priced, then paged."""
    return _page_of(store, agent_id, _priced_in_order(store, agent_id, _picked(store, agent_id, query, False),
                                                      query, prices), query, prices)


def _priced_in_order(store: Store, agent_id: str, sessions: Sequence[Resolved], query: SessionQuery,
                     prices: PriceBook) -> list[Resolved]:
    """The sessions priced, those below the cost floor (if any) left out, in the order of `query.sort`."""
    # Only what pricing needs: the calls of every session's traces, and when it started (for dated prices).
    rows = [SessionRow(s.session_id, 0, 0, s.first_start_ns, s.last_end_ns, 0, 0, 0, 0, [], trace_ids=s.trace_ids)
            for s in sessions]
    _price(store, agent_id, rows, prices)
    if query.min_cost is not None:
        # An unpriced session's cost is unknown, not zero: it does not pass a cost floor.
        rows = [r for r in rows if r.cost_usd is not None and r.cost_usd >= Decimal(repr(query.min_cost))]
    if query.sort == "spans":
        _count_spans(store, agent_id, rows)  # picked by cost, ordered by their counts (page after page)
    order_rows(rows, query.sort)
    by_id = {s.session_id: s for s in sessions}
    return [by_id[r.session_id] for r in rows]


def _page_of(store: Store, agent_id: str, ordered: Sequence[Resolved], query: SessionQuery,
             prices: PriceBook) -> SessionPage:
    """The page `query` asks for of sessions already in the list's order, read from their spans."""
    page = read_sessions(store, agent_id, ordered[query.offset: query.offset + query.limit], prices, summarised=True)
    order_rows(page, query.sort)
    return SessionPage(page, len(ordered) > query.offset + query.limit)
