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
from evalkit.trajectory.read import FINISHED_ROOT, SessionWindow, SpanFacts, session_window
from evalkit.trajectory.validate import ValidationIssue, errors_only, validate_trajectory

VALID, PARTIAL, INVALID, UNAVAILABLE = "valid", "partial", "invalid", "unavailable"
FINISHED_QUIET_SECONDS = 0.5
# Roots whose end means the agent's work in that trace is over: read.FINISHED_ROOT, which the
# spans read that settles a session's first request (`shapes_of`) shares.

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
PREWHERE agent_id = {agent:String} AND trace_id IN {traces:Array(String)}
GROUP BY trace_id
ORDER BY trace_id
""".replace("{finished}", FINISHED_ROOT)


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


def shapes_of(facts: SpanFacts) -> list[TraceShape]:
    """The traces' shapes from their spans' facts: what `trace_shapes` aggregates in the engine, by trace id.

    For a session's first request, which reads every span anyway (read.read_spans_to_map_settling).
    """
    distinct = set(facts.trace_ids)
    if len(distinct) == 1:
        # The usual session is one trace: whole columns, no step per span in Python.
        (trace_id,) = distinct
        return [_shape(trace_id, facts.span_ids, facts.parent_span_ids, facts.received_ms, facts.finished_roots)]
    by_trace: dict[str, list[int]] = {}
    for index, trace_id in enumerate(facts.trace_ids):
        by_trace.setdefault(trace_id, []).append(index)
    shapes = []
    for trace_id in sorted(by_trace):
        rows = by_trace[trace_id]
        shapes.append(_shape(trace_id, [facts.span_ids[i] for i in rows], [facts.parent_span_ids[i] for i in rows],
                             [facts.received_ms[i] for i in rows], [facts.finished_roots[i] for i in rows]))
    return shapes


def _shape(trace_id: str, span_ids: list[str], parents: list[str], received_ms: list[int],
           finished: list[bool]) -> TraceShape:
    missing = set(parents)
    missing.discard("")
    missing.difference_update(span_ids)
    return TraceShape(trace_id, len(span_ids), parents.count(""), len(missing), max(received_ms), sum(finished))


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
