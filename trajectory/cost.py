"""Cost backfill: `metrics.cost_usd` per LLM step and `final_metrics` for the whole trajectory.

Each LLM step says where its price came from in `metrics.extra.price_source`:
"reported" (the emitter's own cost wins), "prices.yaml", "genai-prices@<version>", or
"unpriced" — the model is unknown or there is no usage, so the cost stays null instead
of a made-up $0, and `final_metrics.total_cost_usd` is null too (with
`final_metrics.extra.unpriced_steps` naming the steps).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from evalkit.trajectory.atif import FinalMetrics, Metrics, Step, Trajectory, unchecked
from evalkit.trajectory.prices import PriceBook, TokenCounts

REPORTED = "reported"
UNPRICED = "unpriced"


def is_llm_step(step: Step) -> bool:
    """An agent step that stands for at least one LLM inference we observed."""
    if step.source != "agent" or step.is_copied_context or step.llm_call_count == 0:
        return False
    return step.llm_call_count is not None or step.metrics is not None


def _when(step: Step) -> datetime | None:
    if not step.timestamp:
        return None
    try:
        moment = datetime.fromisoformat(step.timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _updated(metrics: Metrics, **update: Any) -> Metrics:
    """`metrics.model_copy(update=...)` (a shallow copy, the step's metrics may be shared) at a
    fraction of its cost; the updates are a float or None cost and a dict `extra`."""
    return unchecked(Metrics, **{**metrics.__dict__, **update})


def price_step(step: Step, book: PriceBook, default_model: str | None) -> None:
    metrics = step.metrics or Metrics()
    extra: dict[str, Any] = dict(metrics.extra or {})
    if metrics.cost_usd is not None and extra.get("price_source") in (None, REPORTED):
        extra["price_source"] = REPORTED
        step.metrics = _updated(metrics, extra=extra)
        return
    model = step.model_name or default_model
    reason = None
    if model is None:
        reason = "no model name"
    elif metrics.prompt_tokens is None or metrics.completion_tokens is None:
        reason = "no token usage"
    priced = None
    if reason is None and model is not None:
        tokens = TokenCounts(
            prompt_tokens=metrics.prompt_tokens or 0,
            completion_tokens=metrics.completion_tokens or 0,
            cached_tokens=metrics.cached_tokens or 0,
            cache_write_tokens=int(extra.get("cache_creation_input_tokens") or 0),
        )
        provider = (step.extra or {}).get("provider")
        priced = book.cost(tokens, model, provider if isinstance(provider, str) else None, _when(step))
        if priced is None:
            reason = f"no price for model {model!r}" + (f" of provider {provider!r}" if provider else "")
    if priced is None:
        extra["price_source"] = UNPRICED
        extra["unpriced_reason"] = reason
        step.metrics = _updated(metrics, cost_usd=None, extra=extra)
        return
    extra["price_source"] = priced.source
    if priced.model != model:
        extra["priced_as"] = priced.model
    step.metrics = _updated(metrics, cost_usd=float(priced.usd), extra=extra)


def apply_costs(trajectory: Trajectory, book: PriceBook | None = None) -> Trajectory:
    """Prices every LLM step (subagents included) and recomputes `final_metrics`, in place."""
    book = book or PriceBook()
    for sub in trajectory.subagent_trajectories or ():
        apply_costs(sub, book)
    for step in trajectory.steps:
        if is_llm_step(step):
            price_step(step, book, trajectory.agent.model_name)
    trajectory.final_metrics = final_metrics(trajectory)
    return trajectory


def _decimal(value: float) -> Decimal:
    # repr gives the shortest decimal that round-trips, i.e. the value the step was given.
    return Decimal(repr(value))


def final_metrics(trajectory: Trajectory) -> FinalMetrics:
    """Totals over the steps and the embedded subagents (whose own final_metrics must be set)."""
    prompt = completion = cached = 0
    cost = Decimal(0)
    unpriced: list[str] = []
    for step in trajectory.steps:
        metrics = step.metrics
        if metrics is not None and not step.is_copied_context:
            prompt += metrics.prompt_tokens or 0
            completion += metrics.completion_tokens or 0
            cached += metrics.cached_tokens or 0
        if not is_llm_step(step):
            continue
        if metrics is None or metrics.cost_usd is None:
            unpriced.append(f"steps[{step.step_id - 1}]")
        else:
            cost += _decimal(metrics.cost_usd)
    for index, sub in enumerate(trajectory.subagent_trajectories or ()):
        totals = sub.final_metrics or final_metrics(sub)
        prompt += totals.total_prompt_tokens or 0
        completion += totals.total_completion_tokens or 0
        cached += totals.total_cached_tokens or 0
        sub_unpriced = (totals.extra or {}).get("unpriced_steps", [])
        unpriced.extend(f"subagent_trajectories[{index}].{path}" for path in sub_unpriced)
        if totals.total_cost_usd is not None:
            cost += _decimal(totals.total_cost_usd)
    extra: dict[str, Any] = {}
    if unpriced:
        extra["unpriced_steps"] = unpriced
    return FinalMetrics(
        total_prompt_tokens=prompt,
        total_completion_tokens=completion,
        total_cached_tokens=cached,
        total_cost_usd=None if unpriced else float(cost),
        total_steps=len(trajectory.steps),
        extra=extra or None,
    )
