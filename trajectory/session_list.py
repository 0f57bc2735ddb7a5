"""An agent's sessions, summed from the typed span columns without decoding any attributes.

Two queries: the sessions (span count, times, errors, structure, models) and their
LLM calls' tokens and reported cost per (model, provider), which are priced here with
the same price book the trajectories use. Counts are those of the typed columns: a
framework LLM span that wraps a client library's LLM span counts twice here but once
in the trajectory, which de-duplicates by reading the span tree. A trace that carried no
session id is listed as a session of its own (trajectory/session_index.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from evalkit.store import Store
from evalkit.trajectory.prices import PriceBook, TokenCounts
from evalkit.trajectory.same_call import RESPONSE_ID_KEYS
from evalkit.trajectory.session_index import RESOLVED
from evalkit.trajectory.settle import PARTIAL, VALID

SORTS = {
    "last_seen": "last_ns DESC, sid",
    "first_seen": "first_ns DESC, sid",
    "spans": "span_count DESC, sid",
    "cost": None,  # priced in Python, so sorted there
}

# Sessions overlapping [since, until), then per trace (so structure can be judged), then per session.
_SESSIONS = """
WITH resolved AS (__RESOLVED__),
in_range AS (
    SELECT session_id FROM resolved
    GROUP BY session_id
    HAVING max(last_end) >= fromUnixTimestamp64Nano({since:Int64})
       AND min(first_start) < fromUnixTimestamp64Nano({until:Int64})
),
pairs AS (__PAIRS__),
per_trace AS (
    SELECT trace_id, count() AS spans, min(start_time) AS first_start, max(end_time) AS last_end,
           max(received_at) AS last_received, countIf(status_code = 2) AS errors,
           countIf(parent_span_id = '') AS roots,
           length(groupUniqArrayIf(parent_span_id, parent_span_id != ''))
             - length(arrayIntersect(groupUniqArrayIf(parent_span_id, parent_span_id != ''),
                                     groupUniqArray(span_id))) AS missing_parents,
           groupUniqArrayIf(model, model != '' AND is_llm_call) AS models
    FROM spans FINAL
    WHERE agent_id = {agent:String} AND trace_id IN (SELECT trace_id FROM pairs)
    GROUP BY trace_id
)
SELECT p.session_id AS sid, sum(t.spans) AS span_count, count() AS trace_count,
       toUnixTimestamp64Nano(min(t.first_start)) AS first_ns, toUnixTimestamp64Nano(max(t.last_end)) AS last_ns,
       toUnixTimestamp64Milli(max(t.last_received)) AS received_ms, sum(t.errors) AS error_count,
       countIf(t.roots = 0) AS rootless_traces, sum(t.missing_parents) AS missing_parent_count,
       arraySort(groupUniqArrayArray(t.models)) AS session_models, groupUniqArray(p.trace_id) AS trace_ids
FROM per_trace AS t INNER JOIN pairs AS p ON t.trace_id = p.trace_id
GROUP BY p.session_id
__HAVING__
ORDER BY __ORDER__
__LIMIT__
""".replace("__RESOLVED__", RESOLVED)
_IN_RANGE_PAIRS = ("SELECT DISTINCT session_id, trace_id FROM resolved "
                   "WHERE session_id IN (SELECT session_id FROM in_range)")

# (session, trace) pairs the caller already knows (a page's), so that no query resolves the index again.
_GIVEN_PAIRS = ("SELECT pair.1 AS session_id, pair.2 AS trace_id "
                "FROM (SELECT arrayJoin({pairs:Array(Tuple(String, String))}) AS pair)")
# ... or the named sessions' pairs from the index (as many sessions as a sort by cost prices).
_INDEX_PAIRS = "SELECT DISTINCT session_id, trace_id FROM (__RESOLVED__) WHERE session_id IN {sessions:Array(String)}"
_INDEX_TRACES = "(SELECT trace_id FROM (__RESOLVED__) WHERE session_id IN {sessions:Array(String)})"
_MAX_GIVEN_PAIRS = 5_000  # query parameters travel in the request: past a page's worth, let the store resolve

# A page of sessions by time, from the session index alone (a row per session and trace, times
# kept by ingest): the spans are then read for that page only, so a page costs the page, not the
# agent's every span. Sorts and filters that need the spans (span count, errors, model, cost) scan them.
_PAGE_BY_TIME = """
WITH resolved AS (__RESOLVED__)
SELECT session_id, groupUniqArray(trace_id) FROM resolved
GROUP BY session_id
HAVING max(last_end) >= fromUnixTimestamp64Nano({since:Int64})
   AND min(first_start) < fromUnixTimestamp64Nano({until:Int64})
ORDER BY __ORDER__, session_id
LIMIT {limit:UInt64} OFFSET {offset:UInt64}
""".replace("__RESOLVED__", RESOLVED)
_INDEX_ORDER = {"last_seen": "max(last_end) DESC", "first_seen": "min(first_start) DESC"}

# The session's LLM spans that carry a response id (the keys of trajectory/same_call.py, first non-empty).
_RESPONSE_ID = "multiIf(" + ", ".join(f"attributes['{k}'] != '', attributes['{k}']" for k in RESPONSE_ID_KEYS) + ", '')"
_REPORTS = f"""(
    SELECT trace_id, span_id, toUnixTimestamp64Nano(start_time) AS start_ns, toUnixTimestamp64Nano(end_time) AS end_ns,
           {_RESPONSE_ID} AS response_id
    FROM spans WHERE agent_id = {{agent:String}} AND is_llm_call AND response_id != ''
      AND trace_id IN __TRACES__)"""

_SIBLINGS = """(
    SELECT trace_id, span_id, parent_span_id, scope_name, start_time, input_tokens, output_tokens,
           reported_cost_usd, status_code
    FROM spans WHERE agent_id = {agent:String} AND is_llm_call AND parent_span_id != ''
      AND trace_id IN __TRACES__)"""

# Leaf LLM calls per session and (model, provider): what pricing needs. A NaN or infinite reported
# cost is unknown (NULL): the call is priced from its tokens like one that reported none.
_LLM_CALLS = """
SELECT p.session_id, s.model, s.provider, count(), countIf(__COST__ IS NOT NULL),
       sumIf(__COST__, __COST__ IS NOT NULL),
       -- Prompt tokens include cached ones (as in the trajectory); emitters that leave them out say
       -- fewer prompt tokens than cache tokens.
       sumIf(if(s.input_tokens < s.cache_read_tokens + s.cache_write_tokens,
                s.input_tokens + s.cache_read_tokens + s.cache_write_tokens, s.input_tokens),
             __COST__ IS NULL),
       sumIf(s.output_tokens, __COST__ IS NULL),
       sumIf(s.cache_read_tokens, __COST__ IS NULL),
       sumIf(s.cache_write_tokens, __COST__ IS NULL),
       sum(if(s.input_tokens < s.cache_read_tokens + s.cache_write_tokens,
              s.input_tokens + s.cache_read_tokens + s.cache_write_tokens, s.input_tokens)),
       sum(s.output_tokens), sum(s.cache_read_tokens), sum(s.reasoning_tokens),
       countIf(__COST__ IS NULL AND s.input_tokens = 0 AND s.output_tokens = 0)
FROM spans AS s FINAL
INNER JOIN (__PAIRS__) AS p
    ON s.trace_id = p.trace_id
WHERE s.agent_id = {agent:String} AND s.is_llm_call
  -- An OpenInference LLM span with no messages, token counts or cost is a step preparing a call,
  -- not a call (LlamaIndex's `_prepare_chat_with_tools`): the trajectory reads it so too
  -- (`mappers.openinference.is_preprocessing`).
  -- (Keys only: ClickHouse reads the maps' key subcolumns, not their values.)
  AND NOT (has(mapKeys(s.attributes), 'openinference.span.kind')
           AND NOT arrayExists(k -> startsWith(k, 'llm.input_messages.') OR startsWith(k, 'llm.output_messages.')
                                    OR startsWith(k, 'llm.token_count.') OR startsWith(k, 'llm.cost.'),
                               arrayConcat(mapKeys(s.attributes), mapKeys(s.payloads))))
  -- Leaf calls only: a framework's LLM span wrapping the client library's repeats its usage.
  AND (s.trace_id, s.span_id) NOT IN (
      SELECT trace_id, parent_span_id FROM spans
      WHERE agent_id = {agent:String} AND is_llm_call AND parent_span_id != ''
        AND trace_id IN __TRACES__)
  -- One call reported by several instrumentations (the same response id, overlapping in time) counts
  -- once, the report that started last kept (the innermost), as in the trajectory (trajectory/same_call.py,
  -- which also prefers a report with output, input and usage: these agree whenever every report has them).
  AND (s.trace_id, s.span_id) NOT IN (
      SELECT a.trace_id, a.span_id FROM __REPORTS__ AS a INNER JOIN __REPORTS__ AS b
          ON a.trace_id = b.trace_id AND a.response_id = b.response_id
      WHERE a.span_id != b.span_id AND a.start_ns <= b.end_ns AND b.start_ns <= a.end_ns
        AND (b.start_ns, -b.end_ns, b.span_id) > (a.start_ns, -a.end_ns, a.span_id))
  -- A streamed call's request span (no usage, no cost, no error) that a later sibling of the same
  -- instrumentation answers with usage (Logfire's "streaming response" span) is that call, not a
  -- second, unpriced one (trajectory/same_call.py, which also asks for the same model and input).
  AND (s.trace_id, s.span_id) NOT IN (
      SELECT a.trace_id, a.span_id FROM __SIBLINGS__ AS a INNER JOIN __SIBLINGS__ AS b
          ON a.trace_id = b.trace_id AND a.parent_span_id = b.parent_span_id AND a.scope_name = b.scope_name
      WHERE a.input_tokens = 0 AND a.output_tokens = 0 AND a.reported_cost_usd IS NULL AND a.status_code != 2
        AND (b.input_tokens > 0 OR b.output_tokens > 0) AND b.start_time >= a.start_time AND b.span_id != a.span_id)
GROUP BY p.session_id, s.model, s.provider
""".replace("__REPORTS__", _REPORTS).replace("__SIBLINGS__", _SIBLINGS).replace(
    "__COST__", "if(isFinite(s.reported_cost_usd), s.reported_cost_usd, NULL)")


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


def encode_cursor(offset: int, sort: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "s": sort}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, sort: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, cursor_sort = int(data["o"]), str(data["s"])
        if not 0 <= offset <= 1_000_000_000:
            raise ValueError("offset out of range")
    except Exception as exc:
        raise BadQuery("cursor is not one this service gave out; start again without it") from exc
    if cursor_sort != sort:
        raise BadQuery(f"this cursor pages sort={cursor_sort}; keep the sort while paging or start again")
    return offset


def _sessions(store: Store, agent_id: str, q: SessionQuery, paged_in_sql: bool) -> list[SessionRow]:
    having: list[str] = []
    params: dict[str, Any] = {"agent": agent_id, "since": q.since_ns, "until": q.until_ns}
    if q.errors_only:
        having.append("error_count > 0")
    if q.model:
        having.append("has(session_models, {model:String})")
        params["model"] = q.model
    order = SORTS[q.sort] if paged_in_sql else "sid"
    limit = f"LIMIT {int(q.limit)} OFFSET {int(q.offset)}" if paged_in_sql else ""
    pairs = _IN_RANGE_PAIRS
    if paged_in_sql and not having and q.sort in _INDEX_ORDER:
        page = store.query(_PAGE_BY_TIME.replace("__ORDER__", _INDEX_ORDER[q.sort]),
                           {**params, "limit": q.limit, "offset": q.offset})
        if not page:
            return []
        pairs, limit = _GIVEN_PAIRS, ""
        params["pairs"] = [(str(session), str(trace)) for session, traces in page for trace in traces]
    sql = (_SESSIONS.replace("__PAIRS__", pairs).replace("__HAVING__", ("HAVING " + " AND ".join(having)) if having
                                                          else "")
           .replace("__ORDER__", order or "sid").replace("__LIMIT__", limit))
    rows = store.query(sql, params)
    return [SessionRow(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7]),
                       int(r[8]), list(r[9]), trace_ids=[str(t) for t in r[10]]) for r in rows]


def _price(store: Store, agent_id: str, rows: Sequence[SessionRow], prices: PriceBook) -> None:
    if not rows:
        return
    by_id = {row.session_id: row for row in rows}
    pairs = [(row.session_id, trace) for row in rows for trace in row.trace_ids]
    if len(pairs) <= _MAX_GIVEN_PAIRS:
        sql = _LLM_CALLS.replace("__PAIRS__", _GIVEN_PAIRS).replace("__TRACES__", "{traces:Array(String)}")
        params: dict[str, Any] = {"agent": agent_id, "pairs": pairs, "traces": [trace for _, trace in pairs]}
    else:
        sql = (_LLM_CALLS.replace("__PAIRS__", _INDEX_PAIRS).replace("__TRACES__", _INDEX_TRACES)
               .replace("__RESOLVED__", RESOLVED))
        params = {"agent": agent_id, "sessions": list(by_id)}
    calls = store.query(sql, params)
    for (session, model, provider, count, reported_count, reported, prompt, completion, cache_read, cache_write,
         all_prompt, all_completion, all_cached, reasoning, no_usage) in calls:
        row = by_id[session]
        row.steps += int(count)
        row.prompt_tokens += int(all_prompt)
        row.completion_tokens += int(all_completion)
        row.cached_tokens += int(all_cached)
        row.reasoning_tokens += int(reasoning)
        if reported_count:
            row.price_sources.add("reported")
            if row.cost_usd is not None:
                row.cost_usd += Decimal(repr(float(reported)))
        unreported = int(count) - int(reported_count)
        if not unreported:
            continue
        priced = None
        if model and not no_usage:
            tokens = TokenCounts(int(prompt), int(completion), int(cache_read), int(cache_write))
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


def list_sessions(
    store: Store, agent_id: str, query: SessionQuery, prices: PriceBook
) -> tuple[list[SessionRow], bool]:
    """One page of sessions and whether more follow."""
    if query.sort not in SORTS:
        raise BadQuery(f"sort={query.sort!r} is not known; use one of {', '.join(SORTS)}")
    needs_price_first = query.sort == "cost" or query.min_cost is not None
    if not needs_price_first:
        page = _sessions(store, agent_id, SessionQuery(**{**query.__dict__, "limit": query.limit + 1}), True)
        more = len(page) > query.limit
        page = page[: query.limit]
        _price(store, agent_id, page, prices)
        return page, more
    rows = _sessions(store, agent_id, query, False)
    _price(store, agent_id, rows, prices)
    if query.min_cost is not None:
        # An unpriced session's cost is unknown, not zero: it does not pass a cost floor.
        rows = [r for r in rows if r.cost_usd is not None and r.cost_usd >= Decimal(repr(query.min_cost))]
    if query.sort == "cost":
        # Unpriced sessions last; ties by recency.
        rows.sort(key=lambda r: (r.cost_usd is None, -(r.cost_usd or 0), -r.last_end_ns, r.session_id))
    else:
        key = {"last_seen": lambda r: (-r.last_end_ns, r.session_id),
               "first_seen": lambda r: (-r.first_start_ns, r.session_id),
               "spans": lambda r: (-r.spans, r.session_id)}[query.sort]
        rows.sort(key=key)
    page = rows[query.offset: query.offset + query.limit]
    return page, len(rows) > query.offset + query.limit
