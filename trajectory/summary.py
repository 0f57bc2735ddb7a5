"""Derived numbers of a trajectory for scoring and session lists: steps, tool calls, tokens, cost, time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from evalkit.trajectory.atif import Trajectory
from evalkit.trajectory.cost import is_llm_step


@dataclass(frozen=True)
class TrajectorySummary:
    steps: int
    agent_steps: int
    user_steps: int
    llm_calls: int
    tool_calls: int
    tool_errors: int
    errors: int  # steps or tool results that carry an error
    subagents: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float | None  # None when any LLM call is unpriced
    duration_s: float | None  # first to last step timestamp


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def summarise(trajectory: Trajectory) -> TrajectorySummary:
    """Counts over the trajectory and its embedded subagents (their steps included)."""
    steps = agent_steps = user_steps = llm_calls = tool_calls = tool_errors = errors = 0
    prompt = completion = cached = 0
    cost: Decimal | None = Decimal(0)
    times: list[datetime] = []
    subagents = 0
    pending = [trajectory]
    while pending:
        current = pending.pop()
        pending.extend(current.subagent_trajectories or ())
        subagents += len(current.subagent_trajectories or ())
        for step in current.steps:
            steps += 1
            agent_steps += step.source == "agent"
            user_steps += step.source == "user"
            tool_calls += len(step.tool_calls or ())
            errors += bool((step.extra or {}).get("error"))
            for result in step.observation.results if step.observation else ():
                failed = bool((result.extra or {}).get("is_error"))
                tool_errors += failed
                errors += failed
            moment = _time(step.timestamp)
            if moment is not None:
                times.append(moment)
            if step.metrics is not None and not step.is_copied_context:
                prompt += step.metrics.prompt_tokens or 0
                completion += step.metrics.completion_tokens or 0
                cached += step.metrics.cached_tokens or 0
            if is_llm_step(step):
                llm_calls += step.llm_call_count or 1
                if step.metrics is None or step.metrics.cost_usd is None:
                    cost = None
                elif cost is not None:
                    cost += Decimal(repr(step.metrics.cost_usd))
    duration = (max(times) - min(times)).total_seconds() if len(times) > 1 else (0.0 if times else None)
    return TrajectorySummary(
        steps=steps,
        agent_steps=agent_steps,
        user_steps=user_steps,
        llm_calls=llm_calls,
        tool_calls=tool_calls,
        tool_errors=tool_errors,
        errors=errors,
        subagents=subagents,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
        cost_usd=None if cost is None else float(cost),
        duration_s=duration,
    )
