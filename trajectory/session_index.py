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
RESOLVED = f"""
SELECT if(named, named_id, trace_id) AS session_id, trace_id, first_start, last_end, last_received
FROM (SELECT session_id AS named_id, {_NAMED} AS named, trace_id, first_start, last_end, last_received
      FROM session_traces
      WHERE agent_id = {{agent:String}}
        AND ({_NAMED} OR trace_id GLOBAL NOT IN (SELECT trace_id FROM session_traces
                                                  WHERE agent_id = {{agent:String}} AND {_NAMED})))
"""

# The rows of one session: named ones, or those of the trace it is named after; plus the
# sessionless rows of a named session's traces, whose times (children exported before the root,
# or after it) are the trace's too. Resolved by `window_rows`.
ONE_SESSION = f"""
SELECT session_id, trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)),
       toUnixTimestamp64Milli(max(last_received))
FROM session_traces
WHERE agent_id = {{agent:String}}
  AND (session_id = {{session:String}} OR trace_id = {{session:String}}
       OR (NOT ({_NAMED}) AND trace_id IN (SELECT trace_id FROM session_traces
                                         WHERE agent_id = {{agent:String}} AND session_id = {{session:String}})))
GROUP BY session_id, trace_id
ORDER BY trace_id
"""


def names_a_session(session_id: str) -> bool:
    """Whether an indexed session id names a session (not empty, not a scrubbing placeholder)."""
    return bool(session_id) and not session_id.startswith(SCRUBBED_PREFIX)


def window_rows(session_id: str, rows: list[tuple[str, str, int, int, int]]) -> list[tuple[str, int, int, int]]:
    """(trace, first start ns, last end ns, last received ms) of the session's traces from `ONE_SESSION`'s rows.

    A named session is its named traces (with their sessionless rows' times); otherwise the
    session is the trace it is named after, if no span of that trace carried a session id.
    """
    if not names_a_session(session_id):
        return []  # the empty id marks the sessionless rows; a placeholder names nobody's session
    named = {trace for sid, trace, *_ in rows if sid == session_id}
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
