"""A failed request no answer follows (every retry failed, no fallback left: the run raised) is shown the same way
whatever the emitter (`trajectory/mappers/failed_attempts.py`, `mark_unanswered`): a step showing its failure where it
happened, counting no LLM call and priced nothing, so that the session's total cost stays known; its error counts.

Read on real captures: each capture of a failed attempt a later call answered, cut where that answer came (the
answering span and all after it left out, as when the run raised), and pydantic-ai's, whose `chat` span is the
request (its failed attempts under it), with that span's answer taken off as pydantic-ai records a request every
attempt of which failed (ERROR, no messages, no usage). Before, each such failure was an unpriced LLM call
(openai-agents' alone was not): the list counted a call no model answered, and the session had no total cost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import STATUS_ERROR, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

Json = dict[str, Any]

# capture -> its session; each has a failed attempt listed on the step of the call that answered after it
CUT_AT_THE_ANSWER = {
    "langgraph_openinference_fallback": "lg-oi-fallback-1",
    "langgraph_openinference_model-retry": "lg-oi-model-retry-1",
    "litellm_native_router-fallback": None,
    "openai-agents_openinference_model-retry": "oa-oi-model-retry-1",
}


def _session(name: str) -> str:
    return CUT_AT_THE_ANSWER[name] or str(corpus.load(name).session_id)


def _descendants(spans: list[Span], root: Span) -> set[str]:
    under, found = {root.span_id}, True
    while found:
        found = False
        for span in spans:
            if span.parent_span_id in under and span.span_id not in under:
                under.add(span.span_id)
                found = True
    return under


def _cut(name: str) -> tuple[list[Span], Json]:
    """The capture's spans up to its first answer after a failed attempt, that answer and all after it left out;
    and the step that answered in the whole capture."""
    document = capture_document(name, _session(name))
    (answered, *_) = [s for s in corpus.llm_steps(document) if s["extra"].get("failed_attempts")]
    spans = capture_spans(name)
    (answer,) = [s for s in spans if s.span_id == answered["extra"]["span_id"]]
    gone = _descendants(spans, answer)
    kept = [s for s in spans if s.span_id not in gone and s.start_time_unix_nano < answer.start_time_unix_nano]
    return kept, answered


def _no_answer_steps(document: Json) -> list[Json]:
    return [s for s in document["steps"] if (s.get("extra") or {}).get("error") and s["source"] == "agent"
            and not s["extra"].get("run_error")]


@pytest.mark.parametrize("name", sorted(CUT_AT_THE_ANSWER))
def test_a_failure_no_answer_follows_is_a_step_of_no_llm_call_priced_nothing(name: str) -> None:
    kept, answered = _cut(name)
    result = trajectory_from_spans(kept, session_id=_session(name))
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    (first_attempt, *earlier) = answered["extra"]["failed_attempts"]
    failed = _no_answer_steps(document)
    assert failed and failed[-1]["extra"]["span_id"] == answered["extra"]["failed_attempts"][-1]["span_id"]
    step = failed[-1]
    assert step["llm_call_count"] == 0 and "metrics" not in step
    # One step for the request: the attempts before the last listed on it, none a step of its own.
    listed = [a["span_id"] for a in step["extra"].get("failed_attempts") or ()]
    assert listed == [a["span_id"] for a in [first_attempt, *earlier][:-1]]
    shown = {s["extra"].get("span_id") for s in document["steps"] if s.get("extra")}
    assert not shown & set(listed)
    final = document["final_metrics"]
    assert "unpriced_steps" not in (final.get("extra") or {}) and final["total_cost_usd"] is not None
    summary = summarise(document)
    assert summary.llm_calls == len(corpus.llm_steps(document))
    assert summary.cost_usd is not None and summary.errors >= 1 + len(listed)


def test_pydantic_ais_request_every_attempt_of_which_failed_is_one_step_of_no_llm_call() -> None:
    """pydantic-ai's `FallbackModel` records each failed attempt under the request's `chat` span, and the `chat` span
    of a request every attempt at which failed ERROR, with no messages or usage (they are written once the model
    answers): the request is its step, its attempts listed on it, no LLM call, priced nothing."""
    name, session = "pydantic-ai_openai_fallback-model", None
    spans = capture_spans(name)
    attempts = [s for s in spans if "pydantic_ai.model_request.attempt" in s.attributes]
    (chat,) = [s for s in spans if s.span_id == attempts[-1].parent_span_id]
    unanswered = replace(chat, status_code=STATUS_ERROR, status_message="FallbackExceptionGroup: All models from "
                         "FallbackModel failed (1 sub-exception)",
                         attributes={k: v for k, v in chat.attributes.items()
                                     if not k.startswith(("gen_ai.usage.", "gen_ai.response.", "gen_ai.output.",
                                                          "gen_ai.input."))})
    kept = [unanswered if s is chat else s for s in spans
            if s is chat or s.parent_span_id == chat.span_id or s.start_time_unix_nano < chat.start_time_unix_nano]
    result = trajectory_from_spans(kept, session_id=session or str(corpus.load(name).session_id))
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    (step,) = _no_answer_steps(document)
    assert step["extra"]["span_id"] == chat.span_id
    assert step["llm_call_count"] == 0 and "metrics" not in step
    assert [a["span_id"] for a in step["extra"]["failed_attempts"]] == [attempts[-1].span_id]
    final = document["final_metrics"]
    assert "unpriced_steps" not in (final.get("extra") or {}) and final["total_cost_usd"] is not None
    summary = summarise(document)
    # The request's failure and its attempt's, beside turn 1's attempt and its tool's error.
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (len(corpus.llm_steps(document)), 1, 4)
