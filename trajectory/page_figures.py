"""A session-list page's figures, summed in Python from one plain read of its traces' spans.

A page shows each of its sessions' span count, times, errors, structure, models and LLM calls (tokens and
cost). Its traces are a few dozen, their spans a few thousand rows: the SQL that summed them inside the engine
(windows, a `NOT IN` of LLM parents, grouping sets, a sort for each span's latest version) cost more to plan
than the page's rows cost to read and sum here (at 10M spans 40 ms against 17 ms for the read,
docs/performance.md). Pricing every session of an agent, which reads millions of spans, keeps the SQL
(`_SPANS_COUNTED` in trajectory/session_list.py): this module counts LLM calls by the same rules, and a test
compares the two on every kind of trace and every capture (tests/trajectory_service/test_page_figures.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import pairwise
from operator import attrgetter
from typing import Any, NamedTuple

from evalkit.store import compact_sql

# Every version of each span of some traces (a span sent again is stored again; the newest is kept below), read
# from `{since}` on (nanoseconds: `spans` is partitioned by day of start, trajectory/session_list.py says why).
PAGE_SPAN_ROWS = compact_sql("""
SELECT trace_id, span_id, parent_span_id, scope_name, model, provider, status_code, is_llm_call,
       toUnixTimestamp64Nano(start_time), toUnixTimestamp64Nano(end_time), toUnixTimestamp64Milli(received_at),
       input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, reported_cost_usd,
       prepares_call, response_id, toUInt64(splitByChar('_', _part)[3]), _part_offset
FROM spans
PREWHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
  AND start_time >= fromUnixTimestamp64Nano({since:Int64}, 'UTC')
""")


class SpanRow(NamedTuple):
    """One row of `PAGE_SPAN_ROWS`."""

    trace_id: str
    span_id: str
    parent_span_id: str
    scope_name: str
    model: str
    provider: str
    status_code: int
    is_llm_call: bool
    start_ns: int
    end_ns: int
    received_ms: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    reported_cost_usd: float | None
    prepares_call: bool
    response_id: str
    block: int  # the highest insert block number of the row's part
    offset: int  # the row's place in its part


_SPAN, _PARENT, _START, _END, _RECEIVED, _STATUS = (
    attrgetter(name) for name in ("span_id", "parent_span_id", "start_ns", "end_ns", "received_ms", "status_code"))


class TraceFigures(NamedTuple):
    """A trace's figures, over the latest version of each of its spans."""

    spans: int
    first_start_ns: int
    last_end_ns: int
    last_received_ms: int
    errors: int
    roots: int
    missing_parents: int  # parent ids no span of the trace has
    models: list[str]  # the LLM spans' models


# What pricing needs of one (trace, model, provider)'s counted calls, in this order (session_list's `_add_calls`):
# calls; calls that reported a cost; the costs they reported; of the others the prompt, completion, cache-read and
# cache-write tokens; of all the prompt, completion, cached and reasoning tokens; calls that reported no cost
# and no tokens.
CallFigures = tuple[int, int, float, int, int, int, int, int, int, int, int, int]


def latest_versions(rows: Iterable[SpanRow]) -> list[SpanRow]:
    """The newest version of each span, as a ReplacingMergeTree(received_at) merge keeps it: the highest receive
    time, of equals the last inserted (the part of the higher block number, then the later row in it)."""
    latest: dict[tuple[str, str], SpanRow] = {}
    for row in rows:
        key = (row.trace_id, row.span_id)
        kept = latest.get(key)
        if kept is None or (row.received_ms, row.block, row.offset) > (kept.received_ms, kept.block, kept.offset):
            latest[key] = row
    return list(latest.values())


def trace_figures(spans: Sequence[SpanRow]) -> dict[str, TraceFigures]:
    """Each trace's figures, from the latest versions of its spans."""
    by_trace: dict[str, list[SpanRow]] = {}
    for span in spans:
        rows = by_trace.get(span.trace_id)
        if rows is None:
            by_trace[span.trace_id] = [span]
        else:
            rows.append(span)
    figures: dict[str, TraceFigures] = {}
    for trace, rows in by_trace.items():
        parent_ids = list(map(_PARENT, rows))
        parents = set(parent_ids)
        parents.discard("")
        figures[trace] = TraceFigures(
            len(rows), min(map(_START, rows)), max(map(_END, rows)), max(map(_RECEIVED, rows)),
            list(map(_STATUS, rows)).count(2), parent_ids.count(""), len(parents.difference(map(_SPAN, rows))),
            sorted({r.model for r in rows if r.is_llm_call and r.model}))
    return figures


def counted_calls(spans: Sequence[SpanRow], llm_parents: set[tuple[str, str]]) -> list[SpanRow]:
    """The LLM spans the list counts as calls (the rules of `_SPANS_COUNTED`, trajectory/session_list.py): a leaf
    call (a framework's LLM span wrapping the client library's repeats its usage: `llm_parents`, the (trace,
    parent) of every version of every LLM span), not a step preparing a call, not a second report of a call,
    not a streamed call's request span."""
    llm = [s for s in spans if s.is_llm_call]
    # One call reported by several instrumentations (the same response id, overlapping in time) counts once,
    # the report that started last kept: ordered by (start, longest first, span id), a report is dropped when
    # the next one starts before it ends.
    reports: dict[tuple[str, str], list[SpanRow]] = {}
    for span in llm:
        if span.response_id:
            reports.setdefault((span.trace_id, span.response_id), []).append(span)
    repeated: set[tuple[str, str]] = set()
    for group in reports.values():
        group.sort(key=lambda s: (s.start_ns, -s.end_ns, s.span_id))
        for report, following in pairwise(group):
            if following.start_ns <= report.end_ns:
                repeated.add((report.trace_id, report.span_id))
    # A streamed call's request span (no usage, no cost, no error) that a later sibling of the same
    # instrumentation answers with usage is that call, not a second, unpriced one.
    last_answer: dict[tuple[str, str, str], int] = {}
    for span in llm:
        if span.input_tokens > 0 or span.output_tokens > 0:
            key = (span.trace_id, span.parent_span_id, span.scope_name)
            last_answer[key] = max(last_answer.get(key, span.start_ns), span.start_ns)

    def answered_later(span: SpanRow) -> bool:
        unanswered = (span.parent_span_id != "" and span.input_tokens == 0 and span.output_tokens == 0
                      and span.reported_cost_usd is None and span.status_code != 2)
        answer = last_answer.get((span.trace_id, span.parent_span_id, span.scope_name))
        return unanswered and answer is not None and answer >= span.start_ns

    return [s for s in llm
            if not s.prepares_call and (s.trace_id, s.span_id) not in llm_parents
            and (s.trace_id, s.span_id) not in repeated and not answered_later(s)]


def call_figures(calls: Iterable[SpanRow]) -> dict[tuple[str, str, str], CallFigures]:
    """The counted calls' figures per (trace, model, provider)."""
    summed: dict[tuple[str, str, str], list[Any]] = {}
    for call in calls:
        key = (call.trace_id, call.model, call.provider)
        figures = summed.get(key)
        if figures is None:
            figures = summed[key] = [0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        inputs, outputs, cache_read = call.input_tokens, call.output_tokens, call.cache_read_tokens
        cached = cache_read + call.cache_write_tokens
        # Prompt tokens include cached ones (as in the trajectory); emitters that leave them out say fewer
        # prompt tokens than cache tokens.
        prompt = inputs + cached if inputs < cached else inputs
        cost = call.reported_cost_usd
        figures[0] += 1
        # A NaN or infinite reported cost is unknown: the call is priced from its tokens like one that reported none.
        if cost is not None and math.isfinite(cost):
            figures[1] += 1
            figures[2] += cost
        else:
            figures[3] += prompt
            figures[4] += outputs
            figures[5] += cache_read
            figures[6] += call.cache_write_tokens
            if not inputs and not outputs:
                figures[11] += 1
        figures[7] += prompt
        figures[8] += outputs
        figures[9] += cache_read
        figures[10] += call.reasoning_tokens
    return {key: tuple(figures) for key, figures in summed.items()}  # type: ignore[misc]


def page_figures(rows: Iterable[Sequence[Any]]) -> tuple[dict[str, TraceFigures],
                                                           dict[tuple[str, str, str], CallFigures]]:
    """Each trace's figures and its counted calls' figures per (model, provider), from `PAGE_SPAN_ROWS`."""
    every_version = [SpanRow._make(row) for row in rows]
    llm_parents = {(r.trace_id, r.parent_span_id) for r in every_version if r.is_llm_call and r.parent_span_id}
    spans = latest_versions(every_version)
    return trace_figures(spans), call_figures(counted_calls(spans, llm_parents))
