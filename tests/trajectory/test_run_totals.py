"""A trace's tokens where only a run's total records them (trajectory/run_totals.py), on MLflow's DSPy capture.

`dspy_mlflow`: no LM call's span records its usage; DSPy's usage tracking records the program's total on its root
CHAIN span (`mlflow.chat.tokenUsage`). The spans below are the capture's, some attributes changed to make the cases the
rule must tell apart (a call that reports usage, calls of two models).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from evalkit.trajectory import from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import by_trace, capture_spans

CAPTURE = "dspy_mlflow"


def _turns() -> list[list[Span]]:
    return sorted(by_trace(capture_spans(CAPTURE)).values(), key=lambda spans: min(s.start_time_unix_nano
                                                                                     for s in spans))


def _final(spans: list[Span]) -> dict[str, Any]:
    result = from_spans.trajectory_from_spans(spans, session_id="s")
    assert result.valid, [str(issue) for issue in result.issues]
    return dict(result.document()["final_metrics"])


def _with(span: Span, **attributes: Any) -> Span:
    return dataclasses.replace(span, attributes={**span.attributes, **attributes})


def test_a_session_of_two_traces_counts_each_trace_s_total() -> None:
    """Both turns in one session (as they would be had MLflow's export kept the session): each trace's total is the
    root span's, the session's their sum, both listed with their spans (before: 0 tokens, no cost)."""
    first, second = _turns()
    final = _final(first + second)
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                 truth.output_tokens) == (6609, 363)
    assert [t["span_name"] for t in final["extra"]["run_totals"]] == ["TripDesk.forward"] * 2
    assert final["total_cost_usd"] is not None and "unpriced_steps" not in final["extra"]


def test_calls_of_several_models_leave_the_total_unpriced_and_say_so() -> None:
    """A run total is priced as its calls' model: with two models it is not (which share is whose is unknown)."""
    (first, _second) = _turns()
    lm_calls = [s for s in first if s.name == "LM.__call__"]
    other = {lm_calls[0].span_id: _with(lm_calls[0], **{"mlflow.llm.model": json.dumps("openai/gpt-4o")})}
    final = _final([other.get(s.span_id, s) for s in first])
    (total,) = final["extra"]["run_totals"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (2919, 187)
    assert "total_cost_usd" not in final and len(final["extra"]["unpriced_steps"]) == 5
    assert total["models"] == ["openai/gpt-4o", "openai/gpt-4o-mini"]
    assert total["unpriced_reason"] == "its calls name several models: openai/gpt-4o, openai/gpt-4o-mini"


def test_a_trace_whose_call_reports_usage_keeps_the_calls_sum() -> None:
    """The rule is only for a trace no call of which reports usage: where one does, the run's total would count it
    again (pydantic-ai's `gen_ai.aggregated_usage`, Strands' agent span), and the steps' sum stands."""
    (first, _second) = _turns()
    lm_call = next(s for s in first if s.name == "LM.__call__")
    reported = _with(lm_call, **{"mlflow.chat.tokenUsage": json.dumps({"input_tokens": 100, "output_tokens": 7})})
    final = _final([reported if s.span_id == lm_call.span_id else s for s in first])
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (100, 7)
    assert "tokens_from" not in (final.get("extra") or {})
