"""Cost backfill: `metrics.cost_usd` per LLM step and `final_metrics` for the whole trajectory.

Works on the trajectory as JSON data (what `build.build_trajectory` makes and the routes
serve). Each LLM step says where its price came from in `metrics.extra.price_source`:
"reported" (the emitter's own cost wins), "prices.yaml", "genai-prices@<version>", or
"unpriced" — the model is unknown or there is no usage, so the cost stays null instead
of a made-up $0, and `final_metrics.total_cost_usd` is null too (with
`final_metrics.extra.unpriced_steps` naming the steps).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from evalkit.trajectory import run_totals
from evalkit.trajectory.build import ordered_trajectory
from evalkit.trajectory.prices import PriceBook, TokenCounts

REPORTED = "reported"
UNPRICED = "unpriced"
_METRICS_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost_usd",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "extra",
)


def is_llm_step(step: Mapping[str, Any]) -> bool:
    """An agent step that stands for at least one LLM inference we observed."""
    calls = step.get("llm_call_count")
    if step.get("source") != "agent" or step.get("is_copied_context") or calls == 0:
        return False
    return calls is not None or step.get("metrics") is not None


def _when(step: Mapping[str, Any]) -> datetime | None:
    timestamp = step.get("timestamp")
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _updated(metrics: Mapping[str, Any], cost_usd: float | None, extra: dict[str, Any]) -> dict[str, Any]:
    """A copy of `metrics` with this `cost_usd` (None drops it) and `extra`, in the metrics fields' order."""
    updated: dict[str, Any] = {}
    for name in _METRICS_FIELDS:
        value = cost_usd if name == "cost_usd" else extra if name == "extra" else metrics.get(name)
        if value is not None:
            updated[name] = value
    return updated


def _set_metrics(step: dict[str, Any], metrics: dict[str, Any]) -> None:
    """`step["metrics"] = metrics`, in its field's place when the step had none (before these)."""
    if "metrics" not in step:
        later = ("llm_call_count", "is_copied_context", "extra")
        after: dict[str, Any] = {name: step.pop(name) for name in later if name in step}
        step["metrics"] = metrics
        step.update(after)
    else:
        step["metrics"] = metrics


def price_step(step: dict[str, Any], book: PriceBook, default_model: str | None) -> None:
    metrics: Mapping[str, Any] = step.get("metrics") or {}
    extra: dict[str, Any] = dict(metrics.get("extra") or {})
    if metrics.get("cost_usd") is not None and extra.get("price_source") in (None, REPORTED):
        extra["price_source"] = REPORTED
        _set_metrics(step, _updated(metrics, metrics["cost_usd"], extra))
        return
    model = step.get("model_name") or default_model
    prompt_tokens, completion_tokens = metrics.get("prompt_tokens"), metrics.get("completion_tokens")
    reason = None
    if model is None:
        reason = "no model name"
    elif prompt_tokens is None or completion_tokens is None:
        reason = "no token usage"
    priced = None
    if reason is None and model is not None:
        prompt, completion = prompt_tokens or 0, completion_tokens or 0
        # Most steps count no audio and no search: their keys are looked for once.
        audio_in, audio_out = (0, 0) if _AUDIO_KEYS.isdisjoint(extra) else _audio_tokens(extra, prompt, completion)
        searches = extra.get("web_search_requests")
        tokens = TokenCounts(  # prompt, completion, cached, cache-written, audio in and out, web searches (positional)
            prompt,
            completion,
            metrics.get("cached_tokens") or 0,
            int(extra.get("cache_creation_input_tokens") or 0),
            audio_in,
            audio_out,
            int(searches) if searches else 0,
        )
        provider = (step.get("extra") or {}).get("provider")
        priced = book.cost(tokens, model, provider if isinstance(provider, str) else None, _when(step))
        if priced is None:
            reason = f"no price for model {model!r}" + (f" of provider {provider!r}" if provider else "")
    if priced is None:
        extra["price_source"] = UNPRICED
        extra["unpriced_reason"] = reason
        _set_metrics(step, _updated(metrics, None, extra))
        return
    extra["price_source"] = priced.source
    if priced.model != model:
        extra["priced_as"] = priced.model
    _set_metrics(step, _updated(metrics, float(priced.usd), extra))


_AUDIO_KEYS = frozenset(("input_audio_tokens", "output_audio_tokens", "prompt_tokens_by_modality",
                         "completion_tokens_by_modality"))


def _audio_tokens(extra: Mapping[str, Any], prompt: int, completion: int) -> tuple[int, int]:
    """A step's audio prompt and completion tokens (of its prompt and completion tokens, each at most those): as
    OpenInference records them (`input_audio_tokens`, `output_audio_tokens`), else the GenAI conventions' audio share
    of the tokens by modality (`gen_ai.usage.audio.input_tokens`, `…output_tokens`: trajectory/mappers/otel_genai.py).
    The session list reads the same keys (`spans.input_audio_tokens`, trajectory/tables.py, migration 225)."""
    audio_in, audio_out = extra.get("input_audio_tokens"), extra.get("output_audio_tokens")
    if audio_in is None and isinstance(extra.get("prompt_tokens_by_modality"), dict):
        audio_in = extra["prompt_tokens_by_modality"].get("audio")
    if audio_out is None and isinstance(extra.get("completion_tokens_by_modality"), dict):
        audio_out = extra["completion_tokens_by_modality"].get("audio")
    return (min(max(int(audio_in or 0), 0), prompt), min(max(int(audio_out or 0), 0), completion))


def apply_costs(document: dict[str, Any], book: PriceBook | None = None) -> dict[str, Any]:
    """Prices every LLM step (subagents included) and recomputes `final_metrics`.

    Changes the steps in place; returns the document with `final_metrics` in its place.
    """
    book = book or PriceBook()
    subagents = document.get("subagent_trajectories")
    if subagents:
        document["subagent_trajectories"] = [apply_costs(sub, book) for sub in subagents]
    default_model = (document.get("agent") or {}).get("model_name")
    for step in document["steps"]:
        if is_llm_step(step):
            price_step(step, book, default_model)
    for total in run_totals.listed(document):  # a trace whose calls report no usage, a run's total does
        price_run_total(total, book)
    document["final_metrics"] = final_metrics(document)
    return ordered_trajectory(document)


def price_run_total(total: dict[str, Any], book: PriceBook) -> None:
    """A run's total (trajectory/run_totals.py) priced as its calls' model, in place: `cost_usd` and `price_source`,
    else `unpriced_reason` (its calls named several models, or none, or nobody prices it)."""
    for name in ("cost_usd", "price_source", "priced_as", "unpriced_reason"):
        total.pop(name, None)
    model = total.get("model")
    priced = None
    if model is not None:
        tokens = TokenCounts(total["prompt_tokens"], total["completion_tokens"], total.get("cached_tokens") or 0,
                             total.get("cache_creation_input_tokens") or 0, 0, 0, 0)
        priced = book.cost(tokens, model, total.get("provider"), _when(total))
    if priced is None:
        several = total.get("models")
        total["unpriced_reason"] = (f"its calls name several models: {', '.join(several)}" if several
                                    else "its calls name no model" if model is None
                                    else f"no price for model {model!r}")
        return
    total["cost_usd"] = float(priced.usd)
    total["price_source"] = priced.source
    if priced.model != model:
        total["priced_as"] = priced.model


def _decimal(value: float) -> Decimal:
    # repr gives the shortest decimal that round-trips, i.e. the value the step was given.
    return Decimal(repr(value))


def final_metrics(document: Mapping[str, Any]) -> dict[str, Any]:
    """Totals over the steps and the embedded subagents (whose own final_metrics must be set).

    Prompt-cache writes have no ATIF field: a step keeps them in `metrics.extra.cache_creation_input_tokens`
    (Anthropic's name), and their total is `extra.total_cache_creation_input_tokens`, when there are any.
    """
    prompt = completion = cached = written = 0
    cost = Decimal(0)
    unpriced: list[str] = []
    for step in document["steps"]:
        metrics = step.get("metrics")
        if metrics is not None and not step.get("is_copied_context"):
            prompt += metrics.get("prompt_tokens") or 0
            completion += metrics.get("completion_tokens") or 0
            cached += metrics.get("cached_tokens") or 0
            written += (metrics.get("extra") or {}).get("cache_creation_input_tokens") or 0
        if not is_llm_step(step):
            continue
        if metrics is None or metrics.get("cost_usd") is None:
            unpriced.append(f"steps[{step['step_id'] - 1}]")
        else:
            cost += _decimal(metrics["cost_usd"])
    for index, sub in enumerate(document.get("subagent_trajectories") or ()):
        totals = sub.get("final_metrics") or final_metrics(sub)
        prompt += totals.get("total_prompt_tokens") or 0
        completion += totals.get("total_completion_tokens") or 0
        cached += totals.get("total_cached_tokens") or 0
        written += (totals.get("extra") or {}).get("total_cache_creation_input_tokens") or 0
        sub_unpriced = (totals.get("extra") or {}).get("unpriced_steps", [])
        unpriced.extend(f"subagent_trajectories[{index}].{path}" for path in sub_unpriced)
        if totals.get("total_cost_usd") is not None:
            cost += _decimal(totals["total_cost_usd"])
    # A trace whose calls report no usage, where a run holding them records its total (trajectory/run_totals.py).
    runs = run_totals.listed(document)
    for total in runs:
        prompt += total["prompt_tokens"]
        completion += total["completion_tokens"]
        cached += total.get("cached_tokens") or 0
        written += total.get("cache_creation_input_tokens") or 0
        if total.get("cost_usd") is not None:
            cost += _decimal(total["cost_usd"])
    if runs and unpriced:
        unpriced = run_totals.still_unpriced(document, runs, unpriced)
    result: dict[str, Any] = {
        "total_prompt_tokens": prompt,
        "total_completion_tokens": completion,
        "total_cached_tokens": cached,
    }
    if not unpriced:
        result["total_cost_usd"] = float(cost)
    result["total_steps"] = len(document["steps"])
    extra: dict[str, Any] = {}
    if written:
        extra["total_cache_creation_input_tokens"] = written
    if unpriced:
        extra["unpriced_steps"] = unpriced
    if runs:
        extra["tokens_from"] = run_totals.TOKENS_FROM
        extra["run_totals"] = runs
    if extra:
        result["extra"] = extra
    return result
