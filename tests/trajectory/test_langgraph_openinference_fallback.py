"""A LangChain `create_agent` whose model falls back from gpt-4o to gpt-4o-mini (the `langgraph_openinference_fallback`
capture).

The model is `ChatOpenAI(gpt-4o).with_fallbacks([ChatOpenAI(gpt-4o-mini)])`, a `RunnableWithFallbacks`, which
OpenInference's LangChain tracer records as a CHAIN span holding one LLM span per model tried: gpt-4o's ERROR (HTTP 500,
then, streamed, 429), no tokens, an empty answer whose serialised output holds the provider's status code; then the
fallback's answer. Each failure is listed on the step of the call that answered after it
(`trajectory/mappers/langchain_failed_attempts.py`, `failed_attempts.list_before_answers`, in pydantic-ai's
`extra.failed_attempts` shape), never a step or an LLM call of its own: read as a call, it was an empty, unpriced,
error-flagged step of gpt-4o. The fake LLM's `llm_errors.jsonl` holds the failed requests (each with the log's call
that came next), its `llm_log.jsonl` the five answered ones.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import STATUS_ERROR, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "langgraph_openinference_fallback"
SESSION = "lg-oi-fallback-1"
FALLBACKS = "RunnableWithFallbacks"

Json = dict[str, Any]


def _failures() -> list[Json]:
    """The requests the fake LLM answered with a scripted error: the ground truth of the failed attempts."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _step_of(document: Json, seq: int) -> Json:
    """The step of the log's call `seq`, by the prompt tokens scripted for it (distinct: OpenInference's LangChain
    tracer records no response id)."""
    tokens = corpus.load(CAPTURE).llm_log[seq]["response"]["usage"]["input_tokens"]
    (step,) = [s for s in corpus.llm_steps(document) if (s.get("metrics") or {}).get("prompt_tokens") == tokens]
    return step


def _failed_spans(spans: list[Span]) -> list[Span]:
    return sorted((s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"
                   and s.status_code == STATUS_ERROR), key=lambda s: s.start_time_unix_nano)


def test_each_answer_is_one_step_of_the_model_that_gave_it() -> None:
    # The premise: each failed call is an LLM span of its own under the RunnableWithFallbacks span, the fallback's
    # answer beside it.
    spans = capture_spans(CAPTURE)
    by_id = {s.span_id: s for s in spans}
    failed = _failed_spans(spans)
    assert [(s.attributes["llm.model_name"], by_id[s.parent_span_id].name) for s in failed] == [
        ("gpt-4o", FALLBACKS)] * 2
    for span in failed:
        beside = [s for s in spans if s.parent_span_id == span.parent_span_id and s is not span]
        assert [(s.attributes["llm.model_name"], s.status_code) for s in beside] == [("gpt-4o-mini", 1)]

    document = capture_document(CAPTURE, SESSION)
    log = corpus.load(CAPTURE).llm_log
    assert [_step_of(document, entry["seq"])["model_name"] for entry in log] == [
        "gpt-4o-mini", "gpt-4o", "gpt-4o", "gpt-4o-mini", "gpt-4o"] == [entry["model"] for entry in log]
    assert len(corpus.llm_steps(document)) == len(log)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    # No step of a failed call: every agent step is an answer, none flagged as failed.
    assert [s["source"] for s in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any((step.get("extra") or {}).get("error") for step in document["steps"])


def test_a_failed_call_is_listed_on_the_step_that_answered_after_it() -> None:
    document = capture_document(CAPTURE, SESSION)
    failures = _failures()
    assert [(f["model"], f["error"]["status"], f["stream"]) for f in failures] == [
        ("gpt-4o", 500, False), ("gpt-4o", 429, True)]
    spans = {s.span_id: s for s in _failed_spans(capture_spans(CAPTURE))}
    for failure in failures:
        step = _step_of(document, failure["before_seq"])
        (attempt,) = step["extra"]["failed_attempts"]
        # The provider's status, read from the empty answer langchain-core made of the error (`output.value`).
        assert (attempt["model"], attempt["provider"], attempt["attempt"], attempt["http_status_code"]) == (
            failure["model"], "openai", 0, failure["error"]["status"])
        assert attempt["span_id"] in spans
        error = attempt["error"]
        assert error["status"] == "error"
        assert failure["error"]["message"] in error["message"]
        (exception,) = error["exceptions"]
        assert exception["type"] in ("langchain_openai.chat_models.base.OpenAIAPIError",
                                     "langchain_openai.chat_models.base.OpenAIRateLimitError")
        assert exception["message"] == f"Error code: {failure['error']['status']} - {failure['error']['message']}"
    answered_after = [_step_of(document, f["before_seq"])["step_id"] for f in failures]
    assert [step["step_id"] for step in corpus.llm_steps(document) if step["extra"].get("failed_attempts")] == \
        answered_after


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
    # Only the answered calls are billed, each priced at the model that answered.
    assert all(step["metrics"]["cost_usd"] for step in steps)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        truth.input_tokens, truth.output_tokens)
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    assert "unpriced_steps" not in (final.get("extra") or {})
    # The errors are the failed calls' ERROR spans, each listed once, and get_weather's ToolMessage with status
    # "error": what the session list counts (a span each); the calls are the answered ones.
    listed = [a["span_id"] for step in steps for a in step["extra"].get("failed_attempts") or ()]
    assert sorted(listed) == sorted(s.span_id for s in _failed_spans(capture_spans(CAPTURE)))
    summary = summarise(document)
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (len(truth.calls), 1, len(_failures()) + 1)


def test_a_failure_no_answer_follows_is_a_step_where_it_happened() -> None:
    """Turn two without the fallback's answer (every model failed, the agent's run raised): the 429 stays a step of its
    own with its error and the provider's status, not an attempt listed on turn one's last answer; a request no model
    answered, it counts no LLM call and is priced nothing, leaving the session's total cost known
    (`failed_attempts.mark_unanswered`)."""
    spans = capture_spans(CAPTURE)
    (failure,) = [f for f in _failures() if f["stream"]]
    tokens = corpus.load(CAPTURE).llm_log[failure["before_seq"]]["response"]["usage"]["input_tokens"]
    (answer,) = [s for s in spans if s.attributes.get("llm.token_count.prompt") == tokens]
    kept = [s for s in spans if s is not answer and s.start_time_unix_nano < answer.start_time_unix_nano]
    result = trajectory_from_spans(kept, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    last = document["steps"][-1]
    assert (last["source"], last["model_name"]) == ("agent", "gpt-4o")
    assert last["extra"]["http_status_code"] == 429
    (exception,) = last["extra"]["error"]["exceptions"]
    assert exception["type"] == "langchain_openai.chat_models.base.OpenAIRateLimitError"
    assert last["llm_call_count"] == 0 and "metrics" not in last
    assert [len(s["extra"].get("failed_attempts") or ()) for s in corpus.llm_steps(document)] == [1, 0, 0]
    assert document["final_metrics"]["total_cost_usd"] is not None
    summary = summarise(document)
    assert (summary.llm_calls, summary.errors) == (3, 2 + 1)  # the 500 listed, the 429, get_weather's ToolException
