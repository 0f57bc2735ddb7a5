"""A run's trajectory: pushed by the client (validated) or built from the session's spans.

Statuses: `valid`, `partial` (spans, but the session has not settled or its
trajectory does not validate), `invalid` (a pushed trajectory that fails
validation), `unavailable` (no spans, no trajectory). The settling rules are
trajectory/settle.py's; this module only applies them to runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalkit.store import Store
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mapping_store import current_mapping
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import read_session_spans, read_trace_logs
from evalkit.trajectory.settle import settle_session, status_of_pushed
from evalkit.trajectory.summary import summarise
from evalkit.trajectory.validate import errors_only

# Statuses only ever improve by re-fetching: unavailable < partial < valid.
_RANK = {"unavailable": 0, "invalid": 0, "partial": 1, "valid": 2}


@dataclass
class RunTrajectory:
    status: str
    source: str  # "pushed", "spans" or "" (nothing)
    document: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    # The model the trajectory names (its agent's `model_name`: the session's most used): the run's model when the
    # task reported none, so that an unpriced run can say which model to price.
    model: str = ""


def model_of(document: dict[str, Any] | None) -> str:
    agent = (document or {}).get("agent")
    name = agent.get("model_name") if isinstance(agent, dict) else None
    return name if isinstance(name, str) else ""


def _metrics(document: dict[str, Any]) -> dict[str, Any]:
    s = summarise(document)
    return {"duration_seconds": s.duration_s, "steps": s.steps, "tool_calls": s.tool_calls,
            "input_tokens": s.prompt_tokens, "output_tokens": s.completion_tokens, "cost_usd": s.cost_usd}


def pushed(document: dict[str, Any]) -> RunTrajectory:
    status, errors = status_of_pushed(document)
    metrics: dict[str, Any] = {}
    if status == "valid":
        metrics = _metrics(document)
    return RunTrajectory(status, "pushed", document, [str(e) for e in errors], metrics, model_of(document))


def from_session(store: Store, agent_id: str, session_id: str, *, now: float, quiet_period: float,
                 prices: PriceBook | None = None) -> RunTrajectory:
    settlement, window = settle_session(store, agent_id, session_id, now=now, quiet_period=quiet_period)
    if window is None or settlement.status == "unavailable":
        return RunTrajectory("unavailable", "", None, list(settlement.reasons))
    spans = read_session_spans(store, agent_id, session_id)
    logs = read_trace_logs(store, agent_id, list(window.trace_ids))
    # The agent's mapping overrides, as the trajectory route applies them: evaluators score the
    # trajectory users read.
    overrides = current_mapping(store, agent_id).overrides
    built = trajectory_from_spans(spans, logs, overrides=overrides, prices=prices, session_id=session_id)
    problems = list(settlement.reasons) + [str(e) for e in errors_only(built.issues)]
    status = "valid" if settlement.status == "valid" and built.valid else "partial"
    document = built.document()
    return RunTrajectory(status, "spans", document, problems, _metrics(document), model_of(document))


async def wait_for_session(store: Store, agent_id: str, session_id: str, *, wait_seconds: float, quiet_period: float,
                           prices: PriceBook | None = None, clock: Callable[[], float] = time.time,
                           poll_seconds: float = 0.25) -> RunTrajectory:
    """Poll until the session settles or `wait_seconds` pass; then the best we have."""
    deadline = clock() + wait_seconds
    while True:
        result = await asyncio.to_thread(from_session, store, agent_id, session_id, now=clock(),
                                         quiet_period=quiet_period, prices=prices)
        if result.status == "valid" or clock() >= deadline:
            return result
        await asyncio.sleep(poll_seconds)


def better(old_status: str, new: RunTrajectory) -> bool:
    return _RANK.get(new.status, 0) > _RANK.get(old_status, 0)
