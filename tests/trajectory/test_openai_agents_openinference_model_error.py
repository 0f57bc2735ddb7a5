"""openai-agents under OpenInference, its model endpoint failing once (the `openai-agents_openinference_model-error`
capture).

Turn 2's second call is answered HTTP 500 with the client's retries off, so `Runner.run` raises; the app runs the turn
again from the conversation it keeps (turn 1's items and the question). openai-agents records a call's input and
answer on its response span only once the model answered, so the failed call's span holds its error alone
(`trajectory/mappers/openai_agents_failed_calls.py`): it is a step where it happened, its error shown, no tokens, no
LLM call counted. The turn run again re-sends the question the raised run was asked: asked again, a user step before
the new run's steps (`build._Context._asked_again`). The fake LLM's `llm_errors.jsonl` holds the failed request, its
`llm_log.jsonl` the six answered ones.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.mappers import openai_agents_failed_calls
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.summary import summarise
from tests.captures import corpus, questions
from tests.captures.recording.openai_agents_travel import QUESTIONS
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth

CAPTURE = "openai-agents_openinference_model-error"
SESSION = "oa-oi-model-error-1"

Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _failure() -> Json:
    """The one request the fake LLM answered with its scripted error."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    (failure,) = [json.loads(line) for line in text.splitlines()]
    return failure


def _failed_step(steps: list[Json]) -> Json:
    (step,) = [s for s in steps if (s.get("extra") or {}).get("span_id") == _failed_span_id()]
    return step


def _failed_span_id() -> str:
    (span,) = [s for s in capture_spans(CAPTURE)
               if s.attributes.get("openinference.span.kind") == "LLM" and s.status_code == 2]
    return span.span_id


def test_the_failed_call_records_its_error_alone() -> None:
    (span,) = [s for s in capture_spans(CAPTURE) if s.span_id == _failed_span_id()]
    assert set(span.attributes) == {"llm.system", "session.id", "openinference.span.kind"}
    reader = SpanReader(span)
    assert openai_agents_failed_calls.is_failed_call(reader)
    call = openai_agents_failed_calls.failed_call(reader, "openinference")
    assert not call.answered and call.provider == "openai" and call.usage.empty
    assert call.error is not None and "Error code: 500" in call.error.status_message


def test_the_failed_model_call_is_a_step_where_it_happened() -> None:
    document = _document()
    failure = _failure()
    assert failure["error"]["status"] == 500 and failure["before_seq"] == 4
    steps = document["steps"]
    failed = _failed_step(steps)
    # After the call the raised run made first (get_weather for Bergen), before the run made again.
    answered = corpus.llm_steps(document)
    position = steps.index(failed)
    assert steps.index(answered[3]) < position < steps.index(answered[4])
    assert (failed["source"], failed["message"], failed["llm_call_count"]) == ("agent", "", 0)
    assert "metrics" not in failed and "tool_calls" not in failed
    error = failed["extra"]["error"]
    assert error["status"] == "error"
    assert f"Error code: {failure['error']['status']}" in error["message"]
    assert failure["error"]["message"] in error["message"]
    # The failure the run raised is shown once: no step of the run's stop says it again.
    assert not any((s.get("extra") or {}).get("run_error") for s in steps)
    # The call the failed request followed has the result that request sent the model.
    sent = {item["call_id"]: item["output"] for item in failure["request"]["input"]
            if item.get("type") == "function_call_output"}
    (bergen,) = answered[3]["tool_calls"]
    (result,) = answered[3]["observation"]["results"]
    assert result["source_call_id"] == bergen["tool_call_id"] and result["content"] == sent[bergen["tool_call_id"]]


def test_tokens_cost_and_errors_count_what_happened() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth, call_ids=True) == []
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 6
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens, truth.output_tokens)
    # Only the answered calls are billed: the failed one leaves the session priced.
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    summary = summarise(document)
    assert (summary.llm_calls, summary.tool_errors, summary.errors) == (6, 1, 2)  # book_hotel's timeout, the 500


def test_the_turn_run_again_is_asked_its_question_again() -> None:
    document = _document()
    steps = document["steps"]
    assert [s["message"] for s in steps if s["source"] == "user"] == [QUESTIONS[0], QUESTIONS[1], QUESTIONS[1]]
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []
    # The app re-sent it in a run of its own, after the failed call: the run made again starts with it.
    failed = _failed_step(steps)
    asked_again = steps[steps.index(failed) + 1]
    assert (asked_again["source"], asked_again["message"]) == ("user", QUESTIONS[1])
    assert steps[steps.index(asked_again) + 1] is corpus.llm_steps(document)[4]
