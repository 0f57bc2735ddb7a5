"""Is a session complete? Settling decides the status a trajectory is served with.

A session is `valid` once it is complete: every span's parent is present or the
span is a root, every trace has its root (a span is exported when it ends, and
the root ends last, so a root that arrived has ended), and nothing arrived for
the quiet period. Until then it is `partial`; a session with no spans is
`unavailable`.

A complete session whose every trace's root says the work is done (an agent run
ended: `invoke_agent`, OpenInference's AGENT; or the SDK's `evalkit.run` root) needs
only `FINISHED_QUIET_SECONDS` of quiet, not the whole quiet period: the quiet period
exists for emitters that give no such sign, and waiting 5 s after an agent said it
ended made every experiment's scoring wait too. The short wait remains because a
root that ended says nothing of spans of the same trace exported by another
process. A pushed trajectory (scoring pushes them) is `valid` or `invalid`
by validation alone.

The check reads the session index and the typed columns only (ids and receive
times aggregated in ClickHouse), never the attributes, so it is cheap enough to
poll.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.store import Store
from evalkit.trajectory.read import SessionWindow, session_window
from evalkit.trajectory.validate import ValidationIssue, errors_only, validate_trajectory

VALID, PARTIAL, INVALID, UNAVAILABLE = "valid", "partial", "invalid", "unavailable"
FINISHED_QUIET_SECONDS = 0.5
# Roots whose end means the agent's work in that trace is over. `evalkit.run` is the SDK's task-call
# root (sdk/tracing.py; named here, not imported: trajectory never imports the SDK).
_FINISHED_ROOT = "parent_span_id = '' AND (operation IN ('invoke_agent', 'create_agent') OR name = 'evalkit.run')"

# Per trace: spans, roots, distinct parent ids that are not a span of the trace, last receive time,
# roots that say the work is done; and on every row the log records linked to the traces (most
# sessions have none: the trajectory then need not ask for them, a query of its own).
_TRACE_SHAPES = """
SELECT trace_id, count(), countIf(parent_span_id = ''),
       length(groupUniqArrayIf(parent_span_id, parent_span_id != ''))
         - length(arrayIntersect(groupUniqArrayIf(parent_span_id, parent_span_id != ''), groupUniqArray(span_id))),
       toUnixTimestamp64Milli(max(received_at)),
       (SELECT count() FROM logs WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}),
       countIf({finished})
FROM spans FINAL
WHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
GROUP BY trace_id
""".replace("{finished}", _FINISHED_ROOT)


@dataclass(frozen=True)
class TraceShape:
    trace_id: str
    spans: int
    roots: int
    missing_parents: int
    last_received_ms: int
    finished_roots: int = 0  # roots that say the agent's work in this trace is done


@dataclass(frozen=True)
class Settlement:
    status: str  # valid | partial | unavailable
    span_count: int
    trace_count: int
    traces_without_root: tuple[str, ...] = ()
    missing_parents: int = 0
    quiet_seconds: float = 0.0  # since the last span arrived
    quiet_period: float = 0.0
    reasons: tuple[str, ...] = field(default_factory=tuple)
    log_records: int | None = None  # linked to the session's traces; None: not counted

    @property
    def settled(self) -> bool:
        return self.status == VALID

    @property
    def complete(self) -> bool:
        return not self.traces_without_root and not self.missing_parents

    def as_extra(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "settled": self.settled,
            "complete": self.complete,
            "span_count": self.span_count,
            "trace_count": self.trace_count,
            "traces_without_root": list(self.traces_without_root),
            "missing_parents": self.missing_parents,
            "quiet_seconds": round(self.quiet_seconds, 3),
            "quiet_period_seconds": self.quiet_period,
            "reasons": list(self.reasons),
        }


def assess(
    shapes: Sequence[TraceShape], *, now: float, quiet_period: float, log_records: int | None = None
) -> Settlement:
    """The settlement of a session from its traces' shapes at time `now` (unix seconds)."""
    if not shapes or not any(s.spans for s in shapes):
        return Settlement(UNAVAILABLE, 0, len(shapes), quiet_period=quiet_period,
                          reasons=("no spans stored for this session",))
    last_ms = max(s.last_received_ms for s in shapes)
    quiet = max(0.0, now - last_ms / 1000)
    rootless = tuple(s.trace_id for s in shapes if s.roots == 0)
    missing = sum(s.missing_parents for s in shapes)
    if not rootless and not missing and all(s.finished_roots for s in shapes):
        quiet_period = min(quiet_period, FINISHED_QUIET_SECONDS)
    reasons: list[str] = []
    if rootless:
        reasons.append(f"{len(rootless)} trace(s) without a root span yet (it ends, and is exported, last)")
    if missing:
        reasons.append(f"{missing} parent span(s) not arrived")
    if quiet < quiet_period:
        reasons.append(f"last span arrived {quiet:.1f}s ago; the quiet period is {quiet_period:g}s")
    return Settlement(
        PARTIAL if reasons else VALID,
        span_count=sum(s.spans for s in shapes),
        trace_count=len(shapes),
        traces_without_root=rootless,
        missing_parents=missing,
        quiet_seconds=quiet,
        quiet_period=quiet_period,
        reasons=tuple(reasons),
        log_records=log_records,
    )


def trace_shapes(store: Store, agent_id: str, trace_ids: Sequence[str]) -> tuple[list[TraceShape], int | None]:
    """The traces' shapes, and how many log records are linked to them (None without traces)."""
    if not trace_ids:
        return [], None
    rows = store.query(_TRACE_SHAPES, {"agent": agent_id, "traces": list(trace_ids)})
    shapes = [TraceShape(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[6])) for r in rows]
    return shapes, (int(rows[0][5]) if rows else None)


def settle_session(
    store: Store,
    agent_id: str,
    session_id: str,
    *,
    now: float,
    quiet_period: float,
    window: SessionWindow | None = None,
) -> tuple[Settlement, SessionWindow | None]:
    """The session's settlement now, and its index window (None for an unknown session)."""
    window = window or session_window(store, agent_id, session_id)
    if window is None:
        return assess([], now=now, quiet_period=quiet_period), None
    shapes, log_records = trace_shapes(store, agent_id, window.trace_ids)
    return assess(shapes, now=now, quiet_period=quiet_period, log_records=log_records), window


def status_of_pushed(document: Mapping[str, Any] | str | bytes) -> tuple[str, list[ValidationIssue]]:
    """`valid` or `invalid` for a trajectory pushed to us (not built from spans), with the errors found."""
    issues = validate_trajectory(document)
    errors = errors_only(issues)
    return (INVALID if errors else VALID), errors
