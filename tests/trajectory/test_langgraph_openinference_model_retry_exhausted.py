"""A LangChain `create_agent` whose `ModelRetryMiddleware(max_retries=2)` runs out of retries (the
`langgraph_openinference_model-retry-exhausted` capture).

The request after get_weather's result fails three times (HTTP 500, 500, then 429): OpenInference's LangChain tracer
records each attempt as an ERROR LLM span side by side under the agent's `model` node, with no answer after them, and
the middleware (`on_failure="continue"`) ends the node with an AIMessage of its own, which turn 2's request re-sends.
The request is one step where it happened, the last attempt's, listing the two before it in `extra.failed_attempts`;
a request no model answered, it counts no LLM call and is priced nothing (`failed_attempts.mark_unanswered`, the rule
openai-agents' failed call follows): the session's total cost stays known. Read before as calls, the attempts were
three empty, unpriced gpt-4o steps counted as LLM calls, and the session had no total cost.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.span import STATUS_ERROR, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "langgraph_openinference_model-retry-exhausted"
SESSION = "lg-oi-model-retry-exhausted-1"
MIDDLEWARE_MESSAGE = "Model call failed after 3 attempts with OpenAIRateLimitError: Error code: 429 - "

Json = dict[str, Any]


def _failures() -> list[Json]:
    """The requests the fake LLM answered with a scripted error, in the order made."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _llm_spans(spans: list[Span]) -> list[Span]:
    return sorted((s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda s: s.start_time_unix_nano)


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _failed_step(document: Json) -> Json:
    (step,) = [s for s in document["steps"] if (s.get("extra") or {}).get("error")]
    return step


def test_every_attempt_failed_side_by_side_under_the_model_node() -> None:
    """The premise: three ERROR LLM spans of gpt-4o under one `model` node, no LLM span after them there, and the
    request after them (turn 2's) re-sends the middleware's message."""
    spans = _llm_spans(capture_spans(CAPTURE))
    failed = [s for s in spans if s.status_code == STATUS_ERROR]
    assert [f["error"]["status"] for f in _failures()] == [500, 500, 429]
    assert len(failed) == 3 and len({s.parent_span_id for s in failed}) == 1
    assert [s for s in spans if s.parent_span_id == failed[0].parent_span_id] == failed
    by_id = {s.span_id: s for s in capture_spans(CAPTURE)}
    assert by_id[failed[0].parent_span_id].name == "model"
    sent = corpus.load(CAPTURE).llm_log[1]["request"]["messages"]
    assert any(m["role"] == "assistant" and str(m["content"]).startswith(MIDDLEWARE_MESSAGE) for m in sent)


def test_the_request_no_answer_follows_is_one_failed_step_listing_its_attempts() -> None:
    document = _document()
    spans = [s for s in _llm_spans(capture_spans(CAPTURE)) if s.status_code == STATUS_ERROR]
    step = _failed_step(document)
    assert (step["source"], step["model_name"], step["message"]) == ("agent", "gpt-4o", "")
    assert step["llm_call_count"] == 0 and "metrics" not in step and "tool_calls" not in step
    assert step["extra"]["span_id"] == spans[2].span_id  # the last attempt's, where the request ended
    assert step["extra"]["http_status_code"] == 429
    (exception,) = step["extra"]["error"]["exceptions"]
    assert exception["type"] == "langchain_openai.chat_models.base.OpenAIRateLimitError"
    attempts = step["extra"]["failed_attempts"]
    assert [(a["model"], a["attempt"], a["http_status_code"], a["span_id"]) for a in attempts] == [
        ("gpt-4o", 0, 500, spans[0].span_id), ("gpt-4o", 1, 500, spans[1].span_id)]
    # Listed once: no other step for the attempts, no attempts on another step.
    assert [s for s in document["steps"] if (s.get("extra") or {}).get("failed_attempts")] == [step]


def test_the_failure_is_where_it_happened_then_the_middlewares_message() -> None:
    """After get_weather's call and its result; then the middleware's message (an agent step of no model, from turn
    2's re-sent history), then turn 2's question and answer."""
    document = _document()
    steps = document["steps"]
    failed = _failed_step(document)
    at = steps.index(failed)
    asked = steps[at - 1]
    (call,) = asked["tool_calls"]
    (result,) = asked["observation"]["results"]
    assert call["function_name"] == "get_weather" and result["source_call_id"] == call["tool_call_id"]
    middleware, question, answer = steps[at + 1:]
    assert middleware["source"] == "agent" and middleware.get("is_copied_context") and "model_name" not in middleware
    assert middleware["message"].startswith(MIDDLEWARE_MESSAGE)
    assert (question["source"], answer["source"], answer["llm_call_count"]) == ("user", "agent", 1)


def test_tokens_cost_and_errors_count_the_answered_calls_and_every_failure() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth, call_ids=True) == []
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 2
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens, truth.output_tokens)
    # Only the answered calls are billed: the failed request leaves the session priced.
    assert "unpriced_steps" not in (final.get("extra") or {})
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    summary = summarise(document)
    # Each attempt an error, as the session list counts their ERROR spans.
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (2, 0, len(_failures()))
