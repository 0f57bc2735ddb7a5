"""openai-agents under OpenInference, its runner retrying failed model requests (the
`openai-agents_openinference_model-retry` capture).

The travel desk opts in to the SDK's runner-managed retries (`ModelSettings(retry=ModelRetrySettings(…))`, the OpenAI
client's own retries off): turn 1 (`Runner.run`) has a request answered HTTP 500, turn 2 (`Runner.run_streamed`) its
first request answered HTTP 429; the runner makes each again and the retry answers. Each attempt is a `response` span
of its own, the failed one holding its error alone, beside the retry's under the turn's span. Each failure is listed
on the step of the call that answered after it (`trajectory/mappers/openai_agents_model_retries.py`,
`failed_attempts.list_before_answers`), never a step or an LLM call of its own. The fake LLM's `llm_errors.jsonl`
holds the failed requests (each with the log's call that came next), its `llm_log.jsonl` the five answered ones.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.span import STATUS_ERROR
from evalkit.trajectory.summary import summarise
from tests.captures import corpus, questions
from tests.captures.recording.openai_agents_travel import QUESTIONS

CAPTURE = "openai-agents_openinference_model-retry"
SESSION = "oa-oi-model-retry-1"

Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _failures() -> list[Json]:
    """The requests the fake LLM answered with a scripted error: the ground truth of the failed attempts."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_each_retried_request_is_the_retry_of_the_same_request() -> None:
    # The premise: the runner re-sent what failed, as it was, and each failed attempt is a span beside its retry's.
    log = corpus.load(CAPTURE).llm_log
    failures = _failures()
    assert [(f["error"]["status"], f["stream"], f["before_seq"]) for f in failures] == [(500, False, 1), (429, True, 3)]
    for failure in failures:
        retry = log[failure["before_seq"]]["request"]
        assert {k: v for k, v in failure["request"].items() if k != "stream"} == {
            k: v for k, v in retry.items() if k != "stream"}
    spans = capture_spans(CAPTURE)
    failed = [s for s in spans
              if s.attributes.get("openinference.span.kind") == "LLM" and s.status_code == STATUS_ERROR]
    assert len(failed) == len(failures)
    for span in failed:
        beside = [s for s in spans if s.parent_span_id == span.parent_span_id
                  and s.attributes.get("openinference.span.kind") == "LLM" and s is not span]
        assert [(s.status_code, s.start_time_unix_nano > span.end_time_unix_nano) for s in beside] == [(1, True)]


def test_each_answer_is_one_step_and_no_failure_a_step_of_its_own() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth, call_ids=True) == []
    assert len(corpus.llm_steps(document)) == len(truth.calls) == 5
    # Before: each failed attempt was an agent step of its own (no model, no tokens, its error), eight agent steps.
    assert [s["source"] for s in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any((step.get("extra") or {}).get("error") for step in document["steps"])


def test_a_failed_attempt_is_listed_on_the_step_that_answered_after_it() -> None:
    document = _document()
    steps = corpus.llm_steps(document)
    failed_span_ids = {s.span_id for s in capture_spans(CAPTURE)
                       if s.attributes.get("openinference.span.kind") == "LLM" and s.status_code == STATUS_ERROR}
    listed = {}
    for failure in _failures():
        answer = steps[failure["before_seq"]]
        (attempt,) = answer["extra"]["failed_attempts"]
        listed[attempt["span_id"]] = answer["step_id"]
        assert (attempt["model"], attempt["provider"], attempt["attempt"]) == (
            failure["request"]["model"], "openai", 0)
        assert attempt["model"] == answer["model_name"]
        assert attempt["error"]["status"] == "error"
        written = f"Error code: {failure['error']['status']} - {failure['error']['message']}"
        assert written in attempt["error"]["message"]
        assert "http_status_code" not in attempt  # only in the message, as the SDK wrote it
    assert set(listed) == failed_span_ids
    # No other step lists one.
    assert [s["step_id"] for s in steps if (s.get("extra") or {}).get("failed_attempts")] == sorted(listed.values())


def test_the_streamed_turns_question_comes_before_its_answer() -> None:
    # Before: the 429's step, which records no input, came right after turn 1's answer, then the question the retry
    # was asked.
    document = _document()
    steps = document["steps"]
    assert [s["message"] for s in steps if s["source"] == "user"] == QUESTIONS
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []
    (streamed_failure,) = [f for f in _failures() if f["stream"]]
    answers = corpus.llm_steps(document)
    answer = answers[streamed_failure["before_seq"]]
    asked = steps[steps.index(answer) - 1]
    assert (asked["source"], asked["message"]) == ("user", QUESTIONS[1])
    assert steps[steps.index(asked) - 1] is answers[streamed_failure["before_seq"] - 1]  # turn 1's answer


def test_tokens_cost_and_errors_count_what_happened() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens, truth.output_tokens)
    # Only the answered calls are billed.
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    summary = summarise(document)
    # book_hotel's timeout, the 500 and the 429.
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (5, 1, 1 + len(_failures()))
