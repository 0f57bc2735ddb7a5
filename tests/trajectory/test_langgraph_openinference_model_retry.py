"""A LangChain `create_agent` retrying its model with LangChain v1's `ModelRetryMiddleware` (the
`langgraph_openinference_model-retry` capture).

The middleware's `wrap_model_call` calls the model again after an exception; OpenInference's LangChain tracer records
each attempt as an LLM span of its own side by side under the agent's `model` node (no span of the middleware's, no
`RunnableWithFallbacks`): the one that raised ERROR (HTTP 500 on turn one's first request, then, streamed, 429 on
turn two's request after a tool result), no tokens, an empty answer whose serialised output holds the provider's
status code; then the retry's answer, of the same model. Each failure is listed on the step of the retry that answered
(`trajectory/mappers/langchain_failed_attempts.py`, `failed_attempts.list_before_answers`, the rule the fallback
capture goes through), never a step or an LLM call of its own. The fake LLM's `llm_errors.jsonl` holds the failed
requests (each with the log's call that came next), its `llm_log.jsonl` the five answered ones.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.span import STATUS_ERROR, STATUS_OK, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "langgraph_openinference_model-retry"
SESSION = "lg-oi-model-retry-1"
MODEL_NODE = "model"  # create_agent's graph node that calls the model (and runs wrap_model_call middleware)

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


def _llm_spans(spans: list[Span]) -> list[Span]:
    return sorted((s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda s: s.start_time_unix_nano)


def test_the_retry_answers_beside_the_failed_attempt_under_the_model_node() -> None:
    """The premise the rule reads: each failed attempt and the retry that answered are sibling LLM spans of the same
    model under one `model` node, the failure first."""
    spans = capture_spans(CAPTURE)
    by_id = {s.span_id: s for s in spans}
    assert not any(s.name == "RunnableWithFallbacks" for s in spans)
    failed = [s for s in _llm_spans(spans) if s.status_code == STATUS_ERROR]
    assert len(failed) == len(_failures()) == 2
    for span in failed:
        assert by_id[span.parent_span_id].name == MODEL_NODE
        siblings = [s for s in _llm_spans(spans) if s.parent_span_id == span.parent_span_id]
        assert [(s.attributes["llm.model_name"], s.status_code) for s in siblings] == [
            ("gpt-4o", STATUS_ERROR), ("gpt-4o", STATUS_OK)]


def test_each_answer_is_one_step_and_no_failed_attempt_is_one() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = corpus.load(CAPTURE).llm_log
    assert len(corpus.llm_steps(document)) == len(log)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert [s["source"] for s in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any((step.get("extra") or {}).get("error") for step in document["steps"])
    assert document["agent"]["name"] == "trip_agent"


def test_a_failed_attempt_is_listed_on_the_retry_that_answered() -> None:
    document = capture_document(CAPTURE, SESSION)
    failures = _failures()
    assert [(f["before_seq"], f["error"]["status"], f["stream"]) for f in failures] == [
        (0, 500, False), (4, 429, True)]
    failed_spans = {s.span_id for s in _llm_spans(capture_spans(CAPTURE)) if s.status_code == STATUS_ERROR}
    for failure in failures:
        step = _step_of(document, failure["before_seq"])
        (attempt,) = step["extra"]["failed_attempts"]
        assert (attempt["model"], attempt["provider"], attempt["attempt"], attempt["http_status_code"]) == (
            failure["model"], "openai", 0, failure["error"]["status"])
        assert attempt["span_id"] in failed_spans
        (exception,) = attempt["error"]["exceptions"]
        assert exception["type"] in ("langchain_openai.chat_models.base.OpenAIAPIError",
                                     "langchain_openai.chat_models.base.OpenAIRateLimitError")
        assert exception["message"] == f"Error code: {failure['error']['status']} - {failure['error']['message']}"
    assert [step["step_id"] for step in corpus.llm_steps(document) if step["extra"].get("failed_attempts")] == [
        _step_of(document, f["before_seq"])["step_id"] for f in failures]


def test_a_retry_after_a_tool_result_keeps_the_turn_in_order() -> None:
    """Turn two's 429 came on the request after convert_currency's result: the retry's answer is the step after the
    step whose call that result answers, not a step before it or a second step of the turn's first call."""
    document = capture_document(CAPTURE, SESSION)
    (failure,) = [f for f in _failures() if f["stream"]]
    answer = _step_of(document, failure["before_seq"])
    before = _step_of(document, failure["before_seq"] - 1)
    assert answer["step_id"] == before["step_id"] + 1
    (call,) = before["tool_calls"]
    assert call["function_name"] == "convert_currency"
    assert results_by_call(before)[call["tool_call_id"]]["content"] == "4200 NOK is 359 EUR"
    assert answer["message"] == corpus.load(CAPTURE).llm_log[failure["before_seq"]]["response"]["text"]


def test_tokens_cost_and_errors_count_only_the_answered_calls() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    assert all(step["metrics"]["cost_usd"] for step in steps)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        truth.input_tokens, truth.output_tokens)
    assert "unpriced_steps" not in (final.get("extra") or {})
    summary = summarise(document)
    # The errors: each failed attempt and get_weather's ToolException; the calls: the answered ones.
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (len(truth.calls), 1, len(_failures()) + 1)
