"""A trace's tokens where only a run's total records them.

Some emitters record no LLM call's usage, only the total of a run holding the calls: MLflow's DSPy autolog turns DSPy's
usage tracking on, which reaches only the program's root span (`mlflow.chat.tokenUsage` on the CHAIN span), the trace's
total. The builder ignores run aggregates by rule (pydantic-ai's `gen_ai.aggregated_usage`, Strands' agent span, the AI
SDK's outer span: they would count again calls that report their own). So the rule is narrow: where no LLM call of a
trace reports any usage (nor a cost) and a span holding all of them (the trace's root, or the outermost one that holds
them all) records a run's total, the trajectory's `final_metrics` take that total, priced as the calls' model (one
model: priced; several: not, and says so), and `final_metrics.extra` says where it came from (`tokens_from`, and each
total with its span). No step gets a share of it: each call's step keeps the usage it reported, none.

The builder finds the totals (`of_session`) and leaves them in the document it makes (`final_metrics.extra`), for the
pricing (trajectory/cost.py) to price and add to the steps' sums.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from evalkit.trajectory.operations import LlmCall, Usage
from evalkit.trajectory.span import Span

SpanKey = tuple[str, str]
TOKENS_FROM = "run total"  # `final_metrics.extra.tokens_from` where some trace's tokens are a run's total
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PATH = re.compile(r"(subagent_trajectories|steps)\[(\d+)\]")


def of_session(calls: Iterable[tuple[SpanKey, LlmCall]], spans: Mapping[SpanKey, Span],
               parent: Callable[[SpanKey], SpanKey | None],
               run_total: Callable[[Span], Usage | None]) -> list[dict[str, Any]]:
    """The run totals standing for the tokens of the session's traces whose calls (`calls`, the counted ones) report
    none: for each such trace, the outermost span holding all its calls that records a run's total (`run_total`, the
    span's emitter's reading), as `final_metrics.extra.run_totals` lists them."""
    reported: set[str] = set()
    silent: dict[str, list[tuple[SpanKey, LlmCall]]] = {}
    for key, call in calls:
        if not call.usage.empty or call.reported_cost is not None:
            reported.add(key[0])
        elif key[0] not in reported:
            silent.setdefault(key[0], []).append((key, call))
    totals: list[dict[str, Any]] = []
    for trace, trace_calls in silent.items():
        if trace in reported:
            continue
        found = _outermost_total([key for key, _call in trace_calls], spans, parent, run_total)
        if found is not None:
            totals.append(_listed(*found, trace_calls))
    return totals


def _ancestors(key: SpanKey, parent: Callable[[SpanKey], SpanKey | None]) -> list[SpanKey]:
    """The spans above `key`, innermost first."""
    above: list[SpanKey] = []
    current = parent(key)
    while current is not None and current not in above:
        above.append(current)
        current = parent(current)
    return above


def _outermost_total(keys: list[SpanKey], spans: Mapping[SpanKey, Span],
                     parent: Callable[[SpanKey], SpanKey | None],
                     run_total: Callable[[Span], Usage | None]) -> tuple[Span, Usage] | None:
    """The outermost span holding every one of `keys` that records a run's total, and that total."""
    holding = _ancestors(keys[0], parent)
    for key in keys[1:]:
        above = set(_ancestors(key, parent))
        holding = [ancestor for ancestor in holding if ancestor in above]
    for key in reversed(holding):  # outermost first: the trace's root, where it holds them all
        usage = run_total(spans[key])
        if usage is not None and not usage.empty:
            return spans[key], usage
    return None


def _listed(span: Span, usage: Usage, calls: list[tuple[SpanKey, LlmCall]]) -> dict[str, Any]:
    """A run total as `final_metrics.extra.run_totals` lists it: its span, its figures, the calls' model(s)."""
    entry: dict[str, Any] = {"trace_id": span.trace_id, "span_id": span.span_id, "span_name": span.name,
                             "timestamp": _iso(span.start_time_unix_nano),
                             "prompt_tokens": usage.input_tokens or 0, "completion_tokens": usage.output_tokens or 0}
    if usage.cache_read_tokens:
        entry["cached_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        entry["cache_creation_input_tokens"] = usage.cache_write_tokens
    models = sorted({call.model for _key, call in calls if call.model})
    providers = sorted({call.provider for _key, call in calls if call.provider})
    if len(models) == 1:
        entry["model"] = models[0]
    elif models:
        entry["models"] = models
    if len(providers) == 1:
        entry["provider"] = providers[0]
    entry["calls"] = len(calls)
    return entry


def _iso(time_ns: int) -> str:
    return (_EPOCH + timedelta(microseconds=time_ns // 1000)).isoformat().replace("+00:00", "Z")


def listed(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run totals the builder left in the document (none for almost every session)."""
    final = document.get("final_metrics")
    if not final:
        return []
    return list((final.get("extra") or {}).get("run_totals") or ())


def still_unpriced(document: Mapping[str, Any], totals: list[dict[str, Any]], unpriced: list[str]) -> list[str]:
    """Which of `unpriced` (steps' paths) are still unpriced: a step of a trace a priced run total stands for is not
    (its cost is in the total, none of its own)."""
    covered = {total["trace_id"] for total in totals if total.get("cost_usd") is not None}
    return [path for path in unpriced if _trace_of(document, path) not in covered] if covered else unpriced


def _trace_of(document: Mapping[str, Any], path: str) -> str | None:
    """The trace of the step at `path` (`subagent_trajectories[0].steps[2]`), as its `extra.trace_id` says."""
    node: Any = document
    for field, index in _PATH.findall(path):
        node = node[field][int(index)]
    return (node.get("extra") or {}).get("trace_id")
