"""pydantic-ai's history processors (the `pydantic-ai_openai_history-processor` capture's trace exports).

Four turns of one conversation: three under the docs' `keep_recent_messages` (the model sent a window of the last four
messages from turn 2 on), the fourth under the docs' `summarize_old_messages` (a `summarizer` agent's run, inside the
turn's model request span, summarizes the conversation; the model is sent the summary as an assistant message, then the
question). The fake LLM's log is the ground truth: seven calls, the summarizer's the sixth.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import pydantic_ai_history_processors
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "pydantic-ai_openai_history-processor"
SESSION = "pai-history-processor-1"
QUESTIONS = ["Weather in Paris and in Atlantis?", "Which of the two is warmer?",
             "Book me two nights in the warmer one.", "Remind me what we settled."]


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _answers() -> list[str]:
    """What each call of the log answered, in order (a call of tool calls alone: '')."""
    return [entry["response"]["text"] for entry in _log()]


def _llm_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == "agent" and step.get("llm_call_count")]


def test_the_answer_to_the_summarized_turn_is_a_step_of_its_call() -> None:
    """The agent's call in turn 4 holds the summarizer's run (the processor runs inside the request's span): it is
    not a wrapper of the summarizer's call reported again, but a call of its own, answered after the summary."""
    document = capture_document(CAPTURE, SESSION)
    steps = _llm_steps(document)
    assert [step["extra"]["response_id"] for step in steps] == [f"openai-resp-{n}" for n in range(7)]
    assert [step["message"] for step in steps] == _answers()
    log = _log()
    final = document["final_metrics"]
    assert final["total_prompt_tokens"] == sum(entry["response"]["usage"]["input_tokens"] for entry in log)
    assert final["total_completion_tokens"] == sum(entry["response"]["usage"]["output_tokens"] for entry in log)
    assert not any("wrapping another" in warning for warning in document["extra"].get("warnings", ()))


def test_the_summarizers_call_is_a_compaction_of_the_context_not_a_subagent() -> None:
    document = capture_document(CAPTURE, SESSION)
    summary = _answers()[5]
    (compaction,) = [step for step in document["steps"] if "context_compaction" in step.get("extra", {})]
    assert compaction["message"] == summary
    assert compaction["extra"]["response_id"] == "openai-resp-5"
    # Written by the summarizer agent, of the five messages it was given; the agent's call sent the question after it.
    assert compaction["extra"]["context_compaction"] == {
        "kind": "summary", "agent": "summarizer", "summarized_messages": 5, "kept_messages": 1}
    assert not document.get("subagent_trajectories")
    # The summarizer's instructions are its summary prompt's, no system step; the summary sent again is no step.
    instructions = _log()[5]["request"]["messages"][0]["content"]
    assert [step["message"] for step in document["steps"] if step["source"] == "system"] == [
        _log()[0]["request"]["messages"][0]["content"]]
    assert instructions not in [step["message"] for step in document["steps"]]
    assert [step["message"] for step in document["steps"]].count(summary) == 1


def test_the_question_asked_with_the_summary_and_its_answer_come_after_the_compaction() -> None:
    """The agent's request was sent when the summarizer's run ended, not when its span started."""
    document = capture_document(CAPTURE, SESSION)
    messages = [step["message"] for step in document["steps"]]
    answers = _answers()
    at = messages.index(answers[5])
    assert messages[at:] == [answers[5], QUESTIONS[3], answers[6]]
    assert not [step for step in document["steps"] if step.get("is_copied_context")]


def test_each_question_once_in_order_whatever_window_the_model_was_sent() -> None:
    """Turn 2's request was sent turn 1's tool calls without the question that asked them, turn 3's two requests
    windows sliding on, turn 4's the summary alone: nothing is asked again, nothing earlier is lost."""
    sent = [[m.get("content") for m in entry["request"]["messages"] if m["role"] == "user"] for entry in _log()]
    assert QUESTIONS[0] not in sent[2] and QUESTIONS[1] not in sent[6]  # trimmed and summarized away
    document = capture_document(CAPTURE, SESSION)
    assert [step["message"] for step in document["steps"] if step["source"] == "user"] == QUESTIONS
    results = {result["source_call_id"]: result["content"] for step in document["steps"]
               for result in (step.get("observation") or {}).get("results", ())}
    assert results == {"call_0_0": "sunny, 21°C", "call_0_1": '{"error":"No weather station in Atlantis."}',
                       "call_3_0": "Hotel Lumière, Paris, 2 nights, confirmation PL-2231"}


def _spans() -> list[Span]:
    return capture_spans(CAPTURE)


def test_a_summarizer_is_a_run_under_a_call_that_is_sent_its_answer() -> None:
    spans = _spans()
    by_name = {(span.name, span.attributes.get("gen_ai.response.id")): span for span in spans}
    summarizer = by_name[("invoke_agent summarizer", None)]
    holding = by_name[("chat gpt-4o", "openai-resp-6")]
    assert pydantic_ai_history_processors.summarizer_runs(spans) == {
        (summarizer.trace_id, summarizer.span_id): (holding.trace_id, holding.span_id)}
    # A run under a call that is not sent its answer (a processor's agent that classifies, say) is left a subagent.
    unsent = replace(summarizer, attributes={**summarizer.attributes, "final_result": json.dumps("on topic")})
    assert pydantic_ai_history_processors.summarizer_runs([unsent if s is summarizer else s for s in spans]) == {}
