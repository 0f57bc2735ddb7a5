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
from collections.abc import Sequence
from itertools import compress, groupby, pairwise
from operator import add, lt, or_
from typing import Any, NamedTuple

from evalkit.store import compact_sql

# Every version of each span of some traces (a span sent again is stored again; the newest is kept below), those
# starting in [since, until] (nanoseconds): `spans` is partitioned by day of start, so a read bounded on both sides
# reaches only the parts of the days in between (trajectory/session_list.py, `_page_spans`, says why it matters).
_PAGE_SPAN_RANGE = """
SELECT trace_id, span_id, parent_span_id, scope_name, model, provider, status_code, failed, is_llm_call,
       toUnixTimestamp64Nano(start_time), toUnixTimestamp64Nano(end_time), toUnixTimestamp64Milli(received_at),
       input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, input_audio_tokens,
       output_audio_tokens, web_search_requests, reported_cost_usd, prepares_call, call_response_id,
       toUInt64(splitByChar('_', _part)[3]), _part_offset
FROM spans
PREWHERE agent_id = {agent:String} AND trace_id IN {traces_N:Array(String)}
  AND start_time BETWEEN fromUnixTimestamp64Nano({since_N:Int64}, 'UTC')
                     AND fromUnixTimestamp64Nano({until_N:Int64}, 'UTC')
"""


def page_span_rows(ranges: int) -> str:
    """The rows of `SpanColumns` for traces read in `ranges` time ranges: range i's traces are the parameter
    `traces_i`, its bounds `since_i` and `until_i`. Each range is a SELECT of its own (`UNION ALL`), so that
    each prunes the days (parts) outside it; a trace must be in one range only, or its rows come twice."""
    return compact_sql("\nUNION ALL\n".join(_PAGE_SPAN_RANGE.replace("_N:", f"_{i}:") for i in range(ranges)))


class SpanColumns(NamedTuple):
    """`page_span_rows` as one sequence per column (`Store.query_columns`): row i of each is the same span's.

    A page's figures are summed a column at a time: an object and a loop of Python per row cost more than the
    read did (2.2 µs a row, against 0.6 µs to fetch it)."""

    trace_id: Sequence[str]
    span_id: Sequence[str]
    parent_span_id: Sequence[str]
    scope_name: Sequence[str]
    model: Sequence[str]
    provider: Sequence[str]
    status_code: Sequence[int]
    failed: Sequence[bool]  # as the trajectory's step shows it (trajectory/tables.py, migration 212)
    is_llm_call: Sequence[bool]
    start_ns: Sequence[int]
    end_ns: Sequence[int]
    received_ms: Sequence[int]
    input_tokens: Sequence[int]
    output_tokens: Sequence[int]
    cache_read_tokens: Sequence[int]
    cache_write_tokens: Sequence[int]
    reasoning_tokens: Sequence[int]
    input_audio_tokens: Sequence[int]  # of input_tokens (trajectory/tables.py, migration 225)
    output_audio_tokens: Sequence[int]  # of output_tokens
    web_search_requests: Sequence[int]  # the provider's web searches within the answer
    reported_cost_usd: Sequence[float | None]
    prepares_call: Sequence[bool]
    response_id: Sequence[str]
    block: Sequence[int]  # the highest insert block number of the row's part
    offset: Sequence[int]  # the row's place in its part


class TraceFigures(NamedTuple):
    """A trace's figures, over the latest version of each of its spans."""

    spans: int
    first_start_ns: int
    last_end_ns: int
    last_received_ms: int
    errors: int  # spans that failed
    roots: int
    missing_parents: int  # parent ids no span of the trace has
    models: list[str]  # the LLM spans' models


# What pricing needs of one (trace, model, provider)'s counted calls, in this order (session_list's `_add_calls`):
# calls; calls that reported a cost; the costs they reported; of the others the prompt, completion, cache-read and
# cache-write tokens; of all the prompt, completion, cached and reasoning tokens; calls that reported no cost
# and no tokens; of the calls that reported no cost the audio prompt and completion tokens and the web searches.
CallFigures = tuple[int, int, float, int, int, int, int, int, int, int, int, int, int, int, int]


def latest_rows(columns: SpanColumns, keys: Sequence[tuple[str, str]]) -> list[int]:
    """The row of each span's newest version, as a ReplacingMergeTree(received_at) merge keeps it: the highest
    receive time, of equals the last inserted (the part of the higher block number, then the later row in it).
    `keys`: each row's (trace, span)."""
    if len(set(keys)) == len(keys):
        return list(range(len(keys)))  # the usual page: no span stored twice
    version = list(zip(columns.received_ms, columns.block, columns.offset, strict=True))
    latest: dict[tuple[str, str], int] = {}
    for row, key in enumerate(keys):
        kept = latest.get(key)
        if kept is None or version[row] > version[kept]:
            latest[key] = row
    return sorted(latest.values())


def trace_figures(columns: SpanColumns, rows: list[int]) -> dict[str, TraceFigures]:
    """Each trace's figures, from some rows (the latest versions of its spans)."""
    c = columns
    trace = c.trace_id.__getitem__
    figures: dict[str, TraceFigures] = {}
    for trace_id, grouped in groupby(sorted(rows, key=trace), trace):
        group = list(grouped)
        parents = list(map(c.parent_span_id.__getitem__, group))
        missing = set(parents)
        missing.discard("")
        missing.difference_update(map(c.span_id.__getitem__, group))
        models = set(compress(map(c.model.__getitem__, group), map(c.is_llm_call.__getitem__, group)))
        models.discard("")
        figures[trace_id] = TraceFigures(
            len(group), min(map(c.start_ns.__getitem__, group)), max(map(c.end_ns.__getitem__, group)),
            max(map(c.received_ms.__getitem__, group)), sum(map(c.failed.__getitem__, group)),
            parents.count(""), len(missing), sorted(models))
    return figures


def counted_calls(columns: SpanColumns, rows: list[int], keys: Sequence[tuple[str, str]],
                  llm_parents: set[tuple[str, str]]) -> list[int]:
    """The rows of the LLM spans the list counts as calls (the rules of `_SPANS_COUNTED`,
    trajectory/session_list.py): a leaf call (a framework's LLM span wrapping the client library's repeats its
    usage: `llm_parents`, the (trace, parent) of every version of every LLM span), not a step preparing a call,
    not a second report of a call, not a streamed call's request span. `rows`: the latest versions; `keys`:
    each row's (trace, span)."""
    c = columns
    trace, span, start, end = c.trace_id, c.span_id, c.start_ns, c.end_ns
    llm = list(compress(rows, map(c.is_llm_call.__getitem__, rows)))
    dropped = set(compress(llm, map(c.prepares_call.__getitem__, llm)))
    if llm_parents:
        dropped.update(row for row in llm if keys[row] in llm_parents)
    # One call reported by several instrumentations (the same response id, overlapping in time) counts once,
    # the report that started last kept: ordered by (start, longest first, span id), a report is dropped when
    # the next one starts before it ends.
    response = c.response_id
    with_id = [row for row in llm if response[row]]
    ids = list(zip(map(trace.__getitem__, with_id), map(response.__getitem__, with_id), strict=True))
    if len(set(ids)) < len(ids):
        reports: dict[tuple[str, str], list[int]] = {}
        for row, key in zip(with_id, ids, strict=True):
            reports.setdefault(key, []).append(row)
        for group in reports.values():
            group.sort(key=lambda row: (start[row], -end[row], span[row]))
            for report, following in pairwise(group):
                if start[following] <= end[report]:
                    dropped.add(report)
    # A streamed call's request span (no usage, no cost, no error) that a later sibling of the same
    # instrumentation answers with usage is that call, not a second, unpriced one; one that failed is an attempt at
    # the request the sibling answered (a LiteLLM Router's fallback), billed nothing.
    inputs, outputs, parent, scope = c.input_tokens, c.output_tokens, c.parent_span_id, c.scope_name
    # A failed one no answer follows (every retry failed: the run raised) is no call either, but a failure (counted
    # as every failed span is): its step counts no LLM call, priced nothing (trajectory/mappers/failed_attempts.py).
    status, cost = c.status_code, c.reported_cost_usd
    dropped.update(row for row in llm
                   if status[row] == 2 and not inputs[row] and not outputs[row] and cost[row] is None)
    unanswered = [row for row in llm if not inputs[row] and not outputs[row] and parent[row]
                  and c.reported_cost_usd[row] is None]
    if unanswered:
        last_answer: dict[tuple[str, str, str], int] = {}
        for row in llm:
            if inputs[row] > 0 or outputs[row] > 0:
                sibling = (trace[row], parent[row], scope[row])
                last_answer[sibling] = max(last_answer.get(sibling, start[row]), start[row])
        for row in unanswered:
            answer = last_answer.get((trace[row], parent[row], scope[row]))
            if answer is not None and answer >= start[row]:
                dropped.add(row)
    # A report with no response id that the next report of its parent and model, another instrumentation's started
    # once it ended, repeats (the same prompt and completion tokens) is that call reported again: the later counted.
    model = c.model
    in_parent = sorted(llm, key=lambda row: (trace[row], parent[row], model[row], start[row], span[row]))
    for row, following in pairwise(in_parent):
        if (not response[row] and inputs[row] > 0 and scope[following] != scope[row]
                and (trace[following], parent[following], model[following]) == (trace[row], parent[row], model[row])
                and (inputs[following], outputs[following]) == (inputs[row], outputs[row])
                and start[following] >= end[row]):
            dropped.add(row)
    return [row for row in llm if row not in dropped] if dropped else llm


def _token_sums(columns: SpanColumns, rows: Sequence[int]) -> tuple[int, int, int, int, int, int]:
    """Some calls' prompt, completion, cache-read, cache-write and reasoning tokens, and how many reported none."""
    c = columns
    inputs = list(map(c.input_tokens.__getitem__, rows))
    outputs = list(map(c.output_tokens.__getitem__, rows))
    reads = list(map(c.cache_read_tokens.__getitem__, rows))
    writes = list(map(c.cache_write_tokens.__getitem__, rows))
    cached = list(map(add, reads, writes))
    # Prompt tokens include cached ones (as in the trajectory); emitters that leave them out say fewer prompt
    # tokens than cache tokens, and those calls' cached tokens are added.
    prompt = sum(inputs) + sum(compress(cached, map(lt, inputs, cached)))
    no_usage = list(map(or_, inputs, outputs)).count(0)  # `a | b` is 0 only when both are
    return (prompt, sum(outputs), sum(reads), sum(writes), sum(map(c.reasoning_tokens.__getitem__, rows)),
            no_usage)


def call_figures(columns: SpanColumns, calls: list[int]) -> dict[tuple[str, str, str], CallFigures]:
    """The counted calls' figures per (trace, model, provider)."""
    c = columns
    keys = list(zip(map(c.trace_id.__getitem__, calls), map(c.model.__getitem__, calls),
                    map(c.provider.__getitem__, calls), strict=True))
    figures: dict[tuple[str, str, str], CallFigures] = {}
    # Grouped by a stable sort, so that each group's reported costs are summed in the order they were read.
    for key, positions in groupby(sorted(range(len(calls)), key=keys.__getitem__), keys.__getitem__):
        group = list(map(calls.__getitem__, positions))
        every = _token_sums(c, group)
        costs = list(map(c.reported_cost_usd.__getitem__, group))
        reported: list[float] = []
        unreported = every
        if costs.count(None) < len(costs):
            # A NaN or infinite reported cost is unknown: the call is priced from its tokens like one that
            # reported none.
            reported = [cost for cost in costs if cost is not None and math.isfinite(cost)]
            unreported = _token_sums(c, [row for row, cost in zip(group, costs, strict=True)
                                         if cost is None or not math.isfinite(cost)])
        prompt, completion, cache_read, cache_write, _, no_usage = unreported
        priced = group if not reported else [row for row, cost in zip(group, costs, strict=True)
                                             if cost is None or not math.isfinite(cost)]
        figures[key] = (len(group), len(reported), sum(reported, 0.0), prompt, completion, cache_read, cache_write,
                        every[0], every[1], every[2], every[4], no_usage,
                        sum(map(c.input_audio_tokens.__getitem__, priced)),
                        sum(map(c.output_audio_tokens.__getitem__, priced)),
                        sum(map(c.web_search_requests.__getitem__, priced)))
    return figures


def page_figures(columns: Sequence[Sequence[Any]]) -> tuple[dict[str, TraceFigures],
                                                             dict[tuple[str, str, str], CallFigures]]:
    """Each trace's figures and its counted calls' figures per (model, provider), from `page_span_rows` read by
    column (`Store.query_columns`; no rows, no columns)."""
    if not columns:
        return {}, {}
    c = SpanColumns._make(columns)
    keys = list(zip(c.trace_id, c.span_id, strict=True))
    llm_parents = {(trace, parent)
                   for trace, parent, is_llm in zip(c.trace_id, c.parent_span_id, c.is_llm_call, strict=True)
                   if is_llm and parent}
    rows = latest_rows(c, keys)
    return trace_figures(c, rows), call_figures(c, counted_calls(c, rows, keys, llm_parents))
