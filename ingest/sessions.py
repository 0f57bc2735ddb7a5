"""The session index: which traces make up a session.

Often only the root span carries the session id, and it arrives last; every
span of an indexed trace belongs to the session whatever the arrival order, so
indexing (session, trace) pairs is enough. Only min/max are kept per pair,
which a re-sent batch cannot inflate.
"""

from __future__ import annotations

from typing import Any

from evalkit.ingest.decode import SPAN_COLUMNS

SESSION_TRACE_COLUMNS = ("agent_id", "session_id", "trace_id", "first_start", "last_end", "last_received")
_AGENT, _TRACE, _SESSION = SPAN_COLUMNS.index("agent_id"), SPAN_COLUMNS.index("trace_id"), SPAN_COLUMNS.index(
    "session_id")
_START, _END, _RECEIVED = (SPAN_COLUMNS.index("start_time"), SPAN_COLUMNS.index("end_time"),
                           SPAN_COLUMNS.index("received_at"))


def span_identity(row: tuple[Any, ...]) -> str:
    return f"{row[_AGENT]}/{row[_TRACE]}/{row[2]}"


def index_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One (agent, session, trace, first start, last end, last received) row per pair in these spans."""
    index: dict[tuple[str, str, str], list[int]] = {}
    for row in rows:
        session = row[_SESSION]
        if not session:
            continue
        key = (row[_AGENT], session, row[_TRACE])
        seen = index.get(key)
        if seen is None:
            index[key] = [row[_START], row[_END], row[_RECEIVED]]
        else:
            seen[0] = min(seen[0], row[_START])
            seen[1] = max(seen[1], row[_END])
            seen[2] = max(seen[2], row[_RECEIVED])
    return [(*key, *values) for key, values in index.items()]
