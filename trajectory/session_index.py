"""The session -> trace index as readers see it: named sessions, and traces that are sessions of their own.

`session_traces` has a row per (session id, trace) for spans that carried a session id
(`session_traces_feed`, evalkit/migrations.py) and, since migration 201, a row with an empty
session id per trace for spans that carried none (`sessionless_traces_feed`, trajectory/tables.py).

A trace with no named row anywhere is a session of its own, whose id is the trace id (hex), as
Phoenix and Langfuse show every trace: LangChain, LlamaIndex or OpenLLMetry users who set no
session id see their runs. A trace that has a named row belongs to that session only, whenever that
row arrived: the root carrying the session id usually ends, and is exported, last, so until it
arrives its trace is listed on its own and then joins its session. A session id that is a
scrubbing placeholder (Logfire's "[Scrubbed due to 'session']") names no session: its traces are
sessionless.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

# Logfire scrubs attribute values whose key matches 'session' by default: every `session.id` arrives as
# "[Scrubbed due to 'session']", which names no session (it would make all of a user's traces one).
SCRUBBED_PREFIX = "[Scrubbed due to "
NAMED = f"session_id != '' AND NOT startsWith(session_id, '{SCRUBBED_PREFIX}')"

# Every (session id, trace) of an agent with its times, sessionless traces under their trace id.
# The anti-join reads the agent's named rows once; the empty-id rows sort first in the index
# (agent_id, session_id, trace_id), so finding them is a range read. (The inner SELECT keeps the
# stored id apart from the resolved one: in ClickHouse an alias would shadow the column in WHERE.)
# A nested agent run may carry a session id of its own (pydantic-ai gives every run a conversation id,
# a fresh UUID7 unless told one): in a trace with several named sessions, one whose spans lie within
# another's time (started no earlier, ended no later; ties broken by id) is a nested run's, and the
# trace is not that session's. Only traces with two named sessions or more are compared.
_NESTED = f"""
SELECT n.session_id, n.trace_id
FROM (SELECT session_id, trace_id, min(first_start) AS fs, max(last_end) AS le FROM session_traces
      WHERE agent_id = {{agent:String}} AND {NAMED} AND trace_id IN __SHARED__
      GROUP BY session_id, trace_id) AS n
INNER JOIN (SELECT session_id, trace_id, min(first_start) AS fs, max(last_end) AS le FROM session_traces
            WHERE agent_id = {{agent:String}} AND {NAMED} AND trace_id IN __SHARED__
            GROUP BY session_id, trace_id) AS o ON n.trace_id = o.trace_id
WHERE n.session_id != o.session_id AND o.fs <= n.fs AND n.le <= o.le
  AND (o.fs < n.fs OR n.le < o.le OR o.session_id < n.session_id)
""".replace("__SHARED__", f"""(SELECT trace_id FROM session_traces WHERE agent_id = {{agent:String}} AND {NAMED}
                                  GROUP BY trace_id HAVING uniqExact(session_id) > 1)""")

RESOLVED = f"""
SELECT if(named, named_id, trace_id) AS session_id, trace_id, first_start, last_end, last_received
FROM (SELECT session_id AS named_id, {NAMED} AS named, trace_id, first_start, last_end, last_received
      FROM session_traces
      WHERE agent_id = {{agent:String}}
        AND ({NAMED} OR trace_id GLOBAL NOT IN (SELECT trace_id FROM session_traces
                                                  WHERE agent_id = {{agent:String}} AND {NAMED}))
        AND (session_id, trace_id) GLOBAL NOT IN ({_NESTED}))
"""

# The rows of one session: named ones, or those of the trace it is named after; plus every other row
# of a named session's traces: sessionless rows, whose times (children exported before the root, or
# after it) are the trace's too, and other sessions' (a run the session's is nested in). Resolved by
# `window_rows`. Read from `trace_sessions` (the index by trace, trajectory/tables.py): every row of the
# session's traces is a primary-key range there, where `session_traces` would be read whole for them.
ONE_SESSION = """
SELECT session_id, trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)),
       toUnixTimestamp64Milli(max(last_received))
FROM trace_sessions
WHERE agent_id = {agent:String}
  AND (trace_id = {session:String}
       OR trace_id IN (SELECT trace_id FROM session_traces
                       WHERE agent_id = {agent:String} AND session_id = {session:String}))
GROUP BY session_id, trace_id
ORDER BY trace_id
"""


def names_a_session(session_id: str) -> bool:
    """Whether an indexed session id names a session (not empty, not a scrubbing placeholder)."""
    return bool(session_id) and not session_id.startswith(SCRUBBED_PREFIX)


def _nested_among(session_id: str, spans: dict[str, tuple[int, int]]) -> bool:
    """Whether the session's (first start, last end) in a trace lies within another named session's there."""
    mine = spans.get(session_id)
    if mine is None:
        return False
    return any(other != session_id and start <= mine[0] and mine[1] <= end
               and (start < mine[0] or mine[1] < end or other < session_id)
               for other, (start, end) in spans.items())


def _nested(session_id: str, trace: str, rows: list[tuple[str, str, int, int, int]]) -> bool:
    """Whether the session's spans in `trace` lie within another named session's (a nested run's id)."""
    spans: dict[str, tuple[int, int]] = {}
    for sid, row_trace, first, last, _ in rows:
        if row_trace == trace and names_a_session(sid):
            seen = spans.get(sid)
            spans[sid] = (first, last) if seen is None else (min(seen[0], first), max(seen[1], last))
    return _nested_among(session_id, spans)


@dataclass
class Resolved:
    """A listed session as the index knows it: its traces and times (those `RESOLVED` gives it)."""

    session_id: str
    trace_ids: list[str]
    first_start_ns: int
    last_end_ns: int
    last_received_ms: int


def resolve(keys: Collection[str], rows: list[tuple[str, str, int, int, int]]) -> dict[str, Resolved]:
    """The sessions among `keys` that `RESOLVED` lists, from index rows (session, trace, first, last, received).

    `rows` must hold every row of every trace they mention (as `trace_sessions` gives a trace's rows):
    a trace with a named row is its named sessions' (but a nested run's), and a trace without one is a
    session of its own, named after it, from its sessionless rows. A key that lists nothing (a trace a
    late root's session claimed, a nested run's id, a stale id) is left out.
    """
    by_trace: dict[str, dict[str, tuple[int, int, int]]] = {}
    for sid, trace, first, last, received in rows:
        sessions = by_trace.setdefault(trace, {})
        seen = sessions.get(sid)
        sessions[sid] = (first, last, received) if seen is None else (
            min(seen[0], first), max(seen[1], last), max(seen[2], received))
    found: dict[str, Resolved] = {}

    def add(session_id: str, trace: str, first: int, last: int, received: int) -> None:
        seen = found.get(session_id)
        if seen is None:
            found[session_id] = Resolved(session_id, [trace], first, last, received)
            return
        if trace not in seen.trace_ids:
            seen.trace_ids.append(trace)
        seen.first_start_ns = min(seen.first_start_ns, first)
        seen.last_end_ns = max(seen.last_end_ns, last)
        seen.last_received_ms = max(seen.last_received_ms, received)

    for trace, sessions in by_trace.items():
        named = {sid: times for sid, times in sessions.items() if names_a_session(sid)}
        if named:
            spans = {sid: (first, last) for sid, (first, last, _) in named.items()}
            for sid, (first, last, received) in named.items():
                if sid in keys and not (len(named) > 1 and _nested_among(sid, spans)):
                    add(sid, trace, first, last, received)
        elif trace in keys:
            for first, last, received in sessions.values():
                add(trace, trace, first, last, received)
    return found


def window_rows(session_id: str, rows: list[tuple[str, str, int, int, int]]) -> list[tuple[str, int, int, int]]:
    """(trace, first start ns, last end ns, last received ms) of the session's traces from `ONE_SESSION`'s rows.

    A named session is its named traces (with their sessionless rows' times), but for those where it
    is a nested run's id; otherwise the session is the trace it is named after, if no span of that
    trace carried a session id.
    """
    if not names_a_session(session_id):
        return []  # the empty id marks the sessionless rows; a placeholder names nobody's session
    named = {trace for sid, trace, *_ in rows if sid == session_id}
    named = {trace for trace in named if not _nested(session_id, trace, rows)}
    if not named:
        if any(names_a_session(sid) for sid, trace, *_ in rows if trace == session_id):
            return []  # that trace belongs to a named session
        named = {trace for sid, trace, *_ in rows if trace == session_id}
    by_trace: dict[str, tuple[str, int, int, int]] = {}
    for sid, trace, first, last, received in rows:
        if trace not in named or (sid != session_id and names_a_session(sid)):
            continue
        seen = by_trace.get(trace)
        by_trace[trace] = (trace, first, last, received) if seen is None else (
            trace, min(seen[1], first), max(seen[2], last), max(seen[3], received))
    return [by_trace[t] for t in sorted(by_trace)]
