"""Derived numbers of a trajectory for scoring and session lists: steps, tool calls, tokens, cost, time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from evalkit.trajectory.cost import is_llm_step


@dataclass(frozen=True)
class TrajectorySummary:
    steps: int
    agent_steps: int
    user_steps: int
    llm_calls: int
    tool_calls: int
    tool_errors: int
    errors: int  # steps or tool results that carry an error, and failed attempts at a step's request
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


def summarise(trajectory: Mapping[str, Any]) -> TrajectorySummary:
    """Counts over an ATIF document and its embedded subagents (their steps included)."""
    steps = agent_steps = user_steps = llm_calls = tool_calls = tool_errors = errors = 0
    prompt = completion = cached = 0
    cost: Decimal | None = Decimal(0)
    times: list[datetime] = []
    subagents = 0
    pending = [trajectory]
    while pending:
        current = pending.pop()
        nested = current.get("subagent_trajectories") or ()
        pending.extend(nested)
        subagents += len(nested)
        for step in current.get("steps") or ():
            steps += 1
            source = step.get("source")
            agent_steps += source == "agent"
            user_steps += source == "user"
            tool_calls += len(step.get("tool_calls") or ())
            extra = step.get("extra") or {}
            errors += bool(extra.get("error"))
            # The failed attempts at its request before the one that answered (a fallback model's): each a failure,
            # as the session list counts their spans (trajectory/mappers/pydantic_ai_attempts.py).
            errors += len(extra.get("failed_attempts") or ())
            for result in (step.get("observation") or {}).get("results") or ():
                failed = bool((result.get("extra") or {}).get("is_error"))
                tool_errors += failed
                errors += failed
            moment = _time(step.get("timestamp"))
            if moment is not None:
                times.append(moment)
            metrics = step.get("metrics")
            if metrics is not None and not step.get("is_copied_context"):
                prompt += metrics.get("prompt_tokens") or 0
                completion += metrics.get("completion_tokens") or 0
                cached += metrics.get("cached_tokens") or 0
            if is_llm_step(step):
                llm_calls += step.get("llm_call_count") or 1
                if metrics is None or metrics.get("cost_usd") is None:
                    cost = None
                elif cost is not None:
                    cost += Decimal(repr(metrics["cost_usd"]))
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
