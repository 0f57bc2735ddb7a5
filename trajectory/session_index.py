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

# Logfire scrubs attribute values whose key matches 'session' by default: every `session.id` arrives as
# "[Scrubbed due to 'session']", which names no session (it would make all of a user's traces one).
SCRUBBED_PREFIX = "[Scrubbed due to "
_NAMED = f"session_id != '' AND NOT startsWith(session_id, '{SCRUBBED_PREFIX}')"

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
      WHERE agent_id = {{agent:String}} AND {_NAMED} AND trace_id IN __SHARED__
      GROUP BY session_id, trace_id) AS n
INNER JOIN (SELECT session_id, trace_id, min(first_start) AS fs, max(last_end) AS le FROM session_traces
            WHERE agent_id = {{agent:String}} AND {_NAMED} AND trace_id IN __SHARED__
            GROUP BY session_id, trace_id) AS o ON n.trace_id = o.trace_id
WHERE n.session_id != o.session_id AND o.fs <= n.fs AND n.le <= o.le
  AND (o.fs < n.fs OR n.le < o.le OR o.session_id < n.session_id)
""".replace("__SHARED__", f"""(SELECT trace_id FROM session_traces WHERE agent_id = {{agent:String}} AND {_NAMED}
                                  GROUP BY trace_id HAVING uniqExact(session_id) > 1)""")

RESOLVED = f"""
SELECT if(named, named_id, trace_id) AS session_id, trace_id, first_start, last_end, last_received
FROM (SELECT session_id AS named_id, {_NAMED} AS named, trace_id, first_start, last_end, last_received
      FROM session_traces
      WHERE agent_id = {{agent:String}}
        AND ({_NAMED} OR trace_id GLOBAL NOT IN (SELECT trace_id FROM session_traces
                                                  WHERE agent_id = {{agent:String}} AND {_NAMED}))
        AND (session_id, trace_id) GLOBAL NOT IN ({_NESTED}))
"""

# The rows of one session: named ones, or those of the trace it is named after; plus every other row
# of a named session's traces: sessionless rows, whose times (children exported before the root, or
# after it) are the trace's too, and other sessions' (a run the session's is nested in). Resolved by
# `window_rows`.
ONE_SESSION = """
SELECT session_id, trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)),
       toUnixTimestamp64Milli(max(last_received))
FROM session_traces
WHERE agent_id = {agent:String}
  AND (session_id = {session:String} OR trace_id = {session:String}
       OR trace_id IN (SELECT trace_id FROM session_traces
                       WHERE agent_id = {agent:String} AND session_id = {session:String}))
GROUP BY session_id, trace_id
ORDER BY trace_id
"""


def names_a_session(session_id: str) -> bool:
    """Whether an indexed session id names a session (not empty, not a scrubbing placeholder)."""
    return bool(session_id) and not session_id.startswith(SCRUBBED_PREFIX)


def _nested(session_id: str, trace: str, rows: list[tuple[str, str, int, int, int]]) -> bool:
    """Whether the session's spans in `trace` lie within another named session's (a nested run's id)."""
    spans: dict[str, tuple[int, int]] = {}
    for sid, row_trace, first, last, _ in rows:
        if row_trace == trace and names_a_session(sid):
            seen = spans.get(sid)
            spans[sid] = (first, last) if seen is None else (min(seen[0], first), max(seen[1], last))
    mine = spans.get(session_id)
    if mine is None:
        return False
    return any(other != session_id and start <= mine[0] and mine[1] <= end
               and (start < mine[0] or mine[1] < end or other < session_id)
               for other, (start, end) in spans.items())


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
