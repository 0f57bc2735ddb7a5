"""A LiteLLM `Router` falling back from gpt-4o to gpt-4o-mini (the `litellm_native_router-fallback` capture).

LiteLLM's otel callback records each request the Router sent as a `litellm_request` span of its own under the app's
turn span: the one gpt-4o failed (HTTP 500, then, streamed, 429) ERROR, with its input, no output, no usage, no cost,
and beside it the fallback's answer. Each failure is listed on the step of the call that answered after it
(`trajectory/mappers/litellm_failed_attempts.py`, in pydantic-ai's `extra.failed_attempts` shape), never a step or an
LLM call of its own: read as a call, it was an empty, unpriced, error-flagged step of gpt-4o. The fake LLM's
`llm_errors.jsonl` holds the failed requests (each with the log's call that came next), its `llm_log.jsonl` the four
answered ones.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import STATUS_ERROR, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "litellm_native_router-fallback"
SESSION = "litellm-router-fallback-1"
CALL = "litellm_request"

Json = dict[str, Any]


def _failures() -> list[Json]:
    """The requests the fake LLM answered with a scripted error: the ground truth of the failed attempts."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _step_of(document: Json, seq: int) -> Json:
    """The step of the log's call `seq`, by the response id the fake LLM gave it."""
    (step,) = [s for s in corpus.llm_steps(document) if s["extra"].get("response_id") == f"openai-resp-{seq}"]
    return step


def _failed_spans(spans: list[Span]) -> list[Span]:
    return sorted((s for s in spans if s.name == CALL and s.status_code == STATUS_ERROR),
                  key=lambda s: s.start_time_unix_nano)


def test_each_answer_is_one_step_of_the_model_that_gave_it() -> None:
    # The premise: each failed request is a LiteLLM call span of its own beside the answer's, under the turn's span.
    spans = capture_spans(CAPTURE)
    failed = _failed_spans(spans)
    assert [s.attributes["gen_ai.request.model"] for s in failed] == ["gpt-4o", "gpt-4o"]
    for span in failed:
        beside = [s for s in spans if s.name == CALL and s.parent_span_id == span.parent_span_id
                  and s.start_time_unix_nano > span.start_time_unix_nano]
        assert beside and beside[0].attributes["gen_ai.request.model"] == "gpt-4o-mini"

    document = capture_document(CAPTURE, SESSION)
    log = corpus.load(CAPTURE).llm_log
    assert [_step_of(document, entry["seq"])["model_name"] for entry in log] == [
        "gpt-4o", "gpt-4o-mini", "gpt-4o", "gpt-4o-mini"] == [entry["model"] for entry in log]
    assert len(corpus.llm_steps(document)) == len(log)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    # No step of a failed request: every agent step is an answer, none flagged as failed.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent"]
    assert not any((step.get("extra") or {}).get("error") for step in document["steps"])
    assert document["extra"]["unmapped_attributes"] == []


def test_a_failed_request_is_listed_on_the_step_that_answered_after_it() -> None:
    document = capture_document(CAPTURE, SESSION)
    failures = _failures()
    assert [(f["model"], f["error"]["status"], f["stream"]) for f in failures] == [
        ("gpt-4o", 500, False), ("gpt-4o", 429, True)]
    spans = {s.span_id: s for s in _failed_spans(capture_spans(CAPTURE))}
    for failure in failures:
        step = _step_of(document, failure["before_seq"])
        (attempt,) = step["extra"]["failed_attempts"]
        assert (attempt["model"], attempt["provider"], attempt["attempt"], attempt["http_status_code"]) == (
            failure["model"], "openai", 0, failure["error"]["status"])
        assert attempt["span_id"] in spans
        error = attempt["error"]
        assert error["status"] == "error"
        assert failure["error"]["message"] in error["message"]
        assert error["type"] in ("InternalServerError", "RateLimitError")
        (exception,) = error["exceptions"]
        assert exception["type"] == f"litellm.exceptions.{error['type']}"
    before = {f["before_seq"] for f in failures}
    assert not any(step["extra"].get("failed_attempts") for step in corpus.llm_steps(document)
                   if int(step["extra"]["response_id"].rsplit("-", 1)[1]) not in before)


def test_a_failed_attempt_has_pydantic_ais_shape() -> None:
    """One shape for every emitter's failed attempts (trajectory/mappers/failed_attempts.py): read alike."""
    pydantic_ai = capture_document("pydantic-ai_openai_fallback-model", "pai-fallback-1")
    (theirs, *_) = [a for s in corpus.llm_steps(pydantic_ai) for a in s["extra"].get("failed_attempts") or ()]
    ours = [a for s in corpus.llm_steps(capture_document(CAPTURE, SESSION))
            for a in s["extra"].get("failed_attempts") or ()]
    assert len(ours) == len(_failures())
    for attempt in ours:
        assert list(attempt) == [*list(theirs)[:-1], "http_status_code", "error"]


def test_tokens_cost_and_errors_count_only_the_answered_calls() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    # Only the answered calls are billed, each priced at what LiteLLM reported for the model that answered.
    assert all(step["metrics"]["cost_usd"] for step in steps)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        truth.input_tokens, truth.output_tokens)
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    assert "unpriced_steps" not in (final.get("extra") or {})
    # The failed requests are the session's errors, as the session list counts their ERROR spans; no LLM call each.
    summary = summarise(document)
    assert (summary.llm_calls, summary.errors) == (len(truth.calls), len(_failures()))


def test_a_failure_no_answer_follows_is_a_step_where_it_happened() -> None:
    """Turn two without the fallback's answer (every model failed, the app's turn raised): the 429 stays a step of its
    own with its error and the provider's status, not an attempt listed on turn one's last answer; a request no model
    answered, it counts no LLM call and is priced nothing, leaving the session's total cost known
    (`failed_attempts.mark_unanswered`)."""
    spans = capture_spans(CAPTURE)
    (answer,) = [s for s in spans if s.attributes.get("gen_ai.response.id") == "openai-resp-3"]
    kept = [s for s in spans if s is not answer and s.parent_span_id != answer.span_id]
    result = trajectory_from_spans(kept, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    last = document["steps"][-1]
    assert (last["source"], last["model_name"]) == ("agent", "gpt-4o")
    assert last["extra"]["http_status_code"] == 429
    assert last["extra"]["error"]["type"] == "RateLimitError"
    assert last["llm_call_count"] == 0 and "metrics" not in last
    assert [len(s["extra"].get("failed_attempts") or ()) for s in corpus.llm_steps(document)] == [0, 1, 0]
    assert document["final_metrics"]["total_cost_usd"] is not None
    summary = summarise(document)
    assert (summary.llm_calls, summary.errors) == (3, 2)  # the 500 listed on turn one's answer, the 429
