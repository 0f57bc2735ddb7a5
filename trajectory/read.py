"""Reading a session back from the store: its traces, spans and linked log records.

A session is every span of every trace the session index maps to it, so spans
that never carried the session id (often all but the root) belong to it too; a trace
none of whose spans carried one is a session of its own (trajectory/session_index.py).
Reads deduplicate with FINAL: a span re-sent by a retrying exporter shows once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from evalkit.attributes import decode_attributes, decode_value, json_any_value_to_python
from evalkit.store import Store
from evalkit.trajectory.session_index import ONE_SESSION, window_rows
from evalkit.trajectory.span import LogRecord, Span, SpanEvent, SpanLink

# Every column of the traces' spans, a span's events and its links each packed in one JSON string,
# empty for the usual span that has none: eight array columns decoded row by row were most of the time of
# reading a 3,000-span session whole (what GET /sessions/{id} shows).
_SPAN_PACKED_SELECT = """
SELECT trace_id, span_id, parent_span_id, name, kind,
       toUnixTimestamp64Nano(start_time), toUnixTimestamp64Nano(end_time), status_code, status_message,
       attributes, payloads, attribute_types, truncated, resource_attributes, resource_attribute_types,
       scope_name, scope_version,
       if(empty(event_times) AND empty(event_names) AND empty(event_attributes) AND empty(event_attribute_types), '',
          toJSONString((arrayMap(t -> toUnixTimestamp64Nano(t), event_times), event_names, event_attributes,
                        event_attribute_types))),
       if(empty(link_trace_ids) AND empty(link_span_ids) AND empty(link_attributes) AND empty(link_attribute_types),
          '', toJSONString((link_trace_ids, link_span_ids, link_attributes, link_attribute_types))),
       session_id
FROM spans FINAL
PREWHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
"""
# PREWHERE, not WHERE: with FINAL, ClickHouse applies WHERE after merging the rows of every part whose
# granules the key ranges touch, so every column of those granules is read and merged (a session's
# traces touch a granule in each part of each day's partition, as trace ids are random). A PREWHERE
# drops the other traces' rows first. Only sorting-key columns go there: every version of a span has the
# same agent and trace, so filtering before the merge keeps or drops them all (a page of 50 sessions at
# 10M spans: 592 → 172 ms CPU, the same rows; docs/performance.md).


# What the trajectory builder reads of a span, and no more: no links, no truncation sizes, of the
# resource only `service.name` (the agent's name of last resort). Events come packed in one JSON
# string, empty for the usual span that has none, rather than as four array columns decoded row
# by row. A third of the time of reading a 3,000-span session was those columns.
_SPAN_TO_MAP_SELECT = """
SELECT trace_id, span_id, parent_span_id, name, kind,
       toUnixTimestamp64Nano(start_time), toUnixTimestamp64Nano(end_time), status_code, status_message,
       attributes, payloads, attribute_types, scope_name, scope_version,
       if(empty(event_times) AND empty(event_names) AND empty(event_attributes) AND empty(event_attribute_types), '',
          toJSONString((arrayMap(t -> toUnixTimestamp64Nano(t), event_times), event_names, event_attributes,
                        event_attribute_types))),
       mapContains(resource_attributes, 'service.name'), resource_attributes['service.name'],
       resource_attribute_types['service.name'], session_id
FROM spans FINAL
PREWHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
"""
# Ordered here rather than by the query: ClickHouse sorts a block by permuting every column, i.e.
# copies each attribute text once more, which for an agent loop re-sending its history (~100 MB
# a session) cost more than reading it (bench/trajectory_queries.py). (start, span id) as SQL
# sorted them: the start's nanoseconds, then the hex id, compared bytewise in both.
_SPAN_ORDER = itemgetter(5, 1)
_SPAN_ORDER_SQL = " ORDER BY start_time, span_id"
_SERVICE_NAME = "service.name"

# Roots whose end means the agent's work in that trace is over (trajectory/settle.py says why).
# `evalkit.run` is the SDK's task-call root (sdk/tracing.py; named here, not imported: trajectory
# never imports the SDK). `invoke_workflow` is the GenAI conventions' run of a multi-step app: OpenLIT's
# crew kickoff, LangGraph graph and openai-agents run, Google ADK 2's app run. `invoke_swarm` and
# `invoke_graph` are a Strands multi-agent run; `execute_task` OpenLIT's pydantic-ai `Agent.run`.
FINISHED_ROOT = ("parent_span_id = '' AND (operation IN ('invoke_agent', 'create_agent', 'invoke_workflow', "
                 "'invoke_swarm', 'invoke_graph', 'execute_task') OR name = 'evalkit.run')")

# `_SPAN_TO_MAP_SELECT` and, on each row, what settling needs of the span (its receive time, whether
# it is a root saying the work is done) and the log records linked to the traces: a session's first
# request settles it from the spans it reads anyway, one round trip instead of two (settle.py).
_SPAN_TO_MAP_SETTLING_SELECT = _SPAN_TO_MAP_SELECT.replace(
    "session_id\nFROM spans FINAL",
    "session_id, toUnixTimestamp64Milli(received_at), " + FINISHED_ROOT + ",\n"
    "       (SELECT count() FROM logs WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)})\n"
    "FROM spans FINAL",
)
assert _SPAN_TO_MAP_SETTLING_SELECT != _SPAN_TO_MAP_SELECT


@dataclass(frozen=True)
class SessionWindow:
    """What the session index knows of a session without reading its spans."""

    trace_ids: tuple[str, ...]
    first_start_ns: int
    last_end_ns: int
    last_received_ms: int


def session_window(store: Store, agent_id: str, session_id: str) -> SessionWindow | None:
    """The session's traces and times; a trace that carried no session id is the session named by its id."""
    rows = window_rows(session_id, store.query(ONE_SESSION, {"agent": agent_id, "session": session_id}))
    if not rows:
        return None
    return SessionWindow(
        trace_ids=tuple(r[0] for r in rows),
        first_start_ns=min(r[1] for r in rows),
        last_end_ns=max(r[2] for r in rows),
        last_received_ms=max(r[3] for r in rows),
    )


def _span(row: tuple[Any, ...]) -> Span:
    (
        trace_id,
        span_id,
        parent,
        name,
        kind,
        start,
        end,
        status_code,
        status_message,
        values,
        payloads,
        types,
        truncated,
        resource_values,
        resource_types,
        scope_name,
        scope_version,
        event_times,
        event_names,
        event_values,
        event_types,
        link_traces,
        link_spans,
        link_values,
        link_types,
        session_id,
    ) = row
    # Most spans have neither events nor links: skip building two empty generators per span.
    events = tuple(
        SpanEvent(name=n, time_unix_nano=t, attributes=decode_attributes(v, ty))
        for t, n, v, ty in zip(event_times, event_names, event_values, event_types, strict=True)
    ) if event_times or event_names or event_values or event_types else ()
    links = tuple(
        SpanLink(trace_id=t, span_id=s, attributes=decode_attributes(v, ty))
        for t, s, v, ty in zip(link_traces, link_spans, link_values, link_types, strict=True)
    ) if link_traces or link_spans or link_values or link_types else ()
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        status_code=status_code,
        status_message=status_message,
        attributes=decode_attributes(values, types, payloads),
        resource_attributes=decode_attributes(resource_values, resource_types),
        scope_name=scope_name,
        scope_version=scope_version,
        events=events,
        links=links,
        truncated=dict(truncated),
        session_id=session_id,
    )


# What the session's spans view shows beside each span: the typed columns ingest derived from it.
TYPED_COLUMNS = """operation, provider, model, is_llm_call, input_tokens, output_tokens, cache_read_tokens,
       cache_write_tokens, reasoning_tokens, reported_cost_usd, tool_name, tool_call_id,
       toUnixTimestamp64Milli(received_at), failed"""
_SPAN_PACKED_TYPED_SELECT = _SPAN_PACKED_SELECT.replace("       session_id\nFROM spans FINAL",
                                                        f"       session_id, {TYPED_COLUMNS}\nFROM spans FINAL")


def read_trace_spans(
    store: Store,
    agent_id: str,
    trace_ids: tuple[str, ...] | list[str],
    limit: int | None = None,
    offset: int = 0,
) -> list[Span]:
    return _packed_spans(store, _SPAN_PACKED_SELECT, agent_id, trace_ids, limit, offset)[0]


def read_trace_spans_typed(
    store: Store,
    agent_id: str,
    trace_ids: tuple[str, ...] | list[str],
    limit: int | None = None,
    offset: int = 0,
) -> tuple[list[Span], list[tuple[Any, ...]]]:
    """`read_trace_spans`, and for each span its `TYPED_COLUMNS`, in one query rather than two."""
    return _packed_spans(store, _SPAN_PACKED_TYPED_SELECT, agent_id, trace_ids, limit, offset)


def _packed_spans(
    store: Store, sql: str, agent_id: str, trace_ids: tuple[str, ...] | list[str], limit: int | None, offset: int
) -> tuple[list[Span], list[tuple[Any, ...]]]:
    if limit is not None:
        sql += f"{_SPAN_ORDER_SQL} LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = store.query(sql, {"agent": agent_id, "traces": list(trace_ids)})
    rows.sort(key=_SPAN_ORDER)
    new = object.__new__
    spans = []
    typed = []
    for row in rows:
        (trace_id, span_id, parent, name, kind, start, end, status_code, status_message, values, payloads, types,
         truncated, resource_values, resource_types, scope_name, scope_version, packed_events, packed_links,
         session_id) = row[:20]
        if len(row) > 20:
            typed.append(row[20:])
        span = new(Span)
        # Filled as `read_spans_to_map` fills it (a frozen dataclass's __init__ is ten times slower).
        span.__dict__.update(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind=kind,
            start_time_unix_nano=start,
            end_time_unix_nano=end,
            status_code=status_code,
            status_message=status_message,
            attributes=decode_attributes(values, types, payloads),
            resource_attributes=decode_attributes(resource_values, resource_types),
            scope_name=scope_name,
            scope_version=scope_version,
            events=_unpacked_events(packed_events) if packed_events else (),
            links=_unpacked_links(packed_links) if packed_links else (),
            truncated=dict(truncated),
            session_id=session_id,
        )
        spans.append(span)
    return spans, typed


def _unpacked_events(packed: str) -> tuple[SpanEvent, ...]:
    times, names, values, types = json.loads(packed)
    return tuple(
        SpanEvent(name=n, time_unix_nano=int(t), attributes=decode_attributes(v, ty))
        for t, n, v, ty in zip(times, names, values, types, strict=True)
    )


def _unpacked_links(packed: str) -> tuple[SpanLink, ...]:
    traces, spans, values, types = json.loads(packed)
    return tuple(
        SpanLink(trace_id=t, span_id=s, attributes=decode_attributes(v, ty))
        for t, s, v, ty in zip(traces, spans, values, types, strict=True)
    )


def read_spans_to_map(store: Store, agent_id: str, trace_ids: tuple[str, ...] | list[str]) -> list[Span]:
    """The traces' spans as the trajectory builder needs them (`read_trace_spans` reads them whole).

    Left out: `links` and `truncated` (empty), and every resource attribute but `service.name`.
    Everything else is as `read_trace_spans` gives it.
    """
    rows = store.query(_SPAN_TO_MAP_SELECT, {"agent": agent_id, "traces": list(trace_ids)})
    rows.sort(key=_SPAN_ORDER)
    return _spans_to_map(rows)


@dataclass(frozen=True)
class SpanFacts:
    """What settling asks of the spans read, as columns: one entry per span, in the read's order."""

    trace_ids: list[str]
    span_ids: list[str]
    parent_span_ids: list[str]  # "" for a root
    received_ms: list[int]
    finished_roots: list[bool]  # a root saying the agent's work in its trace is done (FINISHED_ROOT)

    def __len__(self) -> int:
        return len(self.span_ids)


def read_spans_to_map_settling(
    store: Store, agent_id: str, trace_ids: tuple[str, ...] | list[str], limit: int | None = None
) -> tuple[list[Span], SpanFacts, int | None]:
    """`read_spans_to_map`, with each span's settle facts and the traces' log record count (None: no spans).

    `limit`: read at most this many spans (a caller refusing sessions over a cap reads one more than
    the cap, not the whole session); past it the spans and facts are `limit` of the session's, not made
    into spans. No ORDER BY with it: the rows are put in order here, and a session within the limit (the
    usual case) is read whole anyway; sorting its rows in the engine cost ~45 ms of CPU for 3,000 spans
    of re-sent histories (94 MB), for nothing.
    """
    sql = (_SPAN_TO_MAP_SETTLING_SELECT if limit is None
           else f"{_SPAN_TO_MAP_SETTLING_SELECT} LIMIT {int(limit)}")
    rows = store.query(sql, {"agent": agent_id, "traces": list(trace_ids)})
    rows.sort(key=_SPAN_ORDER)
    # Column by column: a comprehension per column costs less than a tuple per span.
    facts = SpanFacts([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[19] for r in rows],
                      [bool(r[20]) for r in rows])
    log_records = int(rows[0][21]) if rows else None
    if limit is not None and len(rows) >= limit:
        return [], facts, log_records  # the caller refuses the session: spend nothing on making spans
    return _spans_to_map(map(_MAP_COLUMNS, rows)), facts, log_records


# The columns `_spans_to_map` makes a span of (sliced in C: unpacking the rest with `*` cost a list per span).
_MAP_COLUMNS = itemgetter(slice(0, 19))


def _spans_to_map(rows: Iterable[tuple[Any, ...]]) -> list[Span]:
    new = object.__new__
    spans = []
    for (trace_id, span_id, parent, name, kind, start, end, status_code, status_message, values, payloads, types,
         scope_name, scope_version, packed_events, has_service, service, service_type, session_id) in rows:
        events = _unpacked_events(packed_events) if packed_events else ()
        span = new(Span)
        # A frozen dataclass's __init__ sets each field through object.__setattr__: ten times the cost
        # of filling its __dict__, which is what it amounts to (every field is given here).
        span.__dict__.update(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind=kind,
            start_time_unix_nano=start,
            end_time_unix_nano=end,
            status_code=status_code,
            status_message=status_message,
            attributes=decode_attributes(values, types, payloads),
            resource_attributes={_SERVICE_NAME: decode_value(service, service_type)} if has_service else {},
            scope_name=scope_name,
            scope_version=scope_version,
            events=events,
            links=(),
            truncated={},
            session_id=session_id,
        )
        spans.append(span)
    return spans


def read_session_spans(store: Store, agent_id: str, session_id: str) -> list[Span]:
    window = session_window(store, agent_id, session_id)
    if window is None:
        return []
    return read_trace_spans(store, agent_id, window.trace_ids)


def count_trace_spans(store: Store, agent_id: str, trace_ids: tuple[str, ...] | list[str]) -> int:
    rows = store.query(
        "SELECT count() FROM spans FINAL PREWHERE agent_id = {agent:String} "
        "AND trace_id IN {traces:Array(String)}",
        {"agent": agent_id, "traces": list(trace_ids)},
    )
    return int(rows[0][0])


def read_trace_logs(store: Store, agent_id: str, trace_ids: tuple[str, ...] | list[str]) -> list[LogRecord]:
    rows = store.query(
        "SELECT toUnixTimestamp64Nano(time), trace_id, span_id, event_name, body, attributes, attribute_types, "
        "severity_number, severity_text, resource_attributes, resource_attribute_types, scope_name "
        "FROM logs FINAL PREWHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)} "
        "ORDER BY time, log_id",
        {"agent": agent_id, "traces": list(trace_ids)},
    )
    return [
        LogRecord(
            time_unix_nano=r[0],
            trace_id=r[1],
            span_id=r[2],
            event_name=r[3],
            body=json_any_value_to_python(json.loads(r[4])) if r[4] else None,
            attributes=decode_attributes(r[5], r[6]),
            severity_number=r[7],
            severity_text=r[8],
            resource_attributes=decode_attributes(r[9], r[10]),
            scope_name=r[11],
        )
        for r in rows
    ]
