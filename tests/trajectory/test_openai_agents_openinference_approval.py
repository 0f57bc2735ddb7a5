"""openai-agents' human-in-the-loop tool approval under OpenInference (the `openai-agents_openinference_approval`
capture).

Turn 1's parallel calls hold two `book_hotel` calls declared `needs_approval=True`: the run stops with two
interruptions, the app approves Oslo, rejects Bergen with a message for the model, and resumes with
`Runner.run(desk, state)` in the same process. The SDK reattaches that run to the paused run's trace without telling
its processors (`ReattachedTrace`), and OpenInference's processor records only spans of traces it saw start: the
resumed run (two LLM calls, the approved booking's execution, the rejection) is in no span (the corpus's KNOWN_GAPS).
What it did is in turn 2's first call, which re-sends the whole conversation: the builder keeps the two answers no span
recorded as copied steps, each with the reasoning re-sent with it, and puts each booking's outcome on its call.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from tests.captures import corpus

CAPTURE = "openai-agents_openinference_approval"
SESSION = "oa-oi-approval-1"
RESUMED = (1, 2)  # the log's calls made by the resumed run


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _answer(seq: int) -> dict[str, Any]:
    return corpus.load(CAPTURE).llm_log[seq]["response"]


def test_the_resumed_run_is_in_no_span() -> None:
    """The premise of the gap: three of the five calls recorded, none of the resumed run's, in two traces."""
    spans = capture_spans(CAPTURE)
    recorded = [span.attributes["llm.output_messages.0.message.contents.0.message_content.text"]
                for span in spans if span.attributes.get("openinference.span.kind") == "LLM"]
    assert sorted(recorded) == sorted(_answer(seq)["reasoning"] for seq in (0, 3, 4))
    assert len({span.trace_id for span in spans}) == 2
    # The bookings' spans are the paused run's approval checks: the calls' arguments, no output.
    bookings = [span for span in spans if span.attributes.get("tool.name") == "book_hotel"]
    assert [("output.value" in span.attributes, span.attributes["input.value"]) for span in bookings] == [
        (False, '{"city": "Oslo", "nights": 2}'), (False, '{"city": "Bergen", "nights": 1}')]


def test_each_answer_no_span_recorded_is_a_copied_step_with_its_own_reasoning() -> None:
    """Turn 2's history re-sends each answer of the resumed run after its reasoning item: that reasoning is the
    unrecorded call's, its copied step's `reasoning_content`."""
    steps = _document()["steps"]
    copied = [step for step in steps if step.get("is_copied_context") and step["source"] == "agent"]
    assert [(step.get("llm_call_count"), step["extra"]["reconstructed_from"]) for step in copied] == [
        (None, "input history")] * 2
    assert [step["reasoning_content"] for step in copied] == [_answer(seq)["reasoning"] for seq in RESUMED]
    retry, answer = copied
    assert [call["function_name"] for call in retry["tool_calls"]] == ["get_weather"]
    assert answer["message"] == _answer(2)["text"]
    # Every call's reasoning shown once, on its own step: the received calls' re-sent reasoning is never copied.
    shown = [step["reasoning_content"] for step in steps if step.get("reasoning_content")]
    assert shown == [_answer(seq)["reasoning"] for seq in range(5)]


def test_a_received_calls_reasoning_is_not_copied_into_another_agents_history() -> None:
    """The guardrails capture's Topic check agent is sent the desk's earlier turns: copied steps of calls received
    as the desk's, whose reasoning is shown on the desk's steps alone."""
    document = capture_document("openai-agents_openinference_guardrails", "oa-oi-guardrails-1")
    copied = [step for sub in document["subagent_trajectories"] for step in sub["steps"]
              if step.get("is_copied_context") and step["source"] == "agent"]
    assert copied and not any(step.get("reasoning_content") for step in copied)
    desk_reasoning = [step["reasoning_content"] for step in document["steps"] if step.get("reasoning_content")]
    log = corpus.load("openai-agents_openinference_guardrails").llm_log
    assert desk_reasoning == [log[seq]["response"]["reasoning"] for seq in (1, 2, 3, 6)]


def test_each_booking_is_answered_with_what_the_model_was_told() -> None:
    """The approved booking's result and the rejection message the app gave, each on its call, from the history (the
    resumed run that produced them is in no span); the failed weather lookup flagged."""
    steps = _document()["steps"]
    (first,) = [step for step in steps if step.get("reasoning_content") == _answer(0)["reasoning"]]
    results = results_by_call(first)
    oslo, bergen, weather = (call["id"] for call in _answer(0)["tool_calls"])
    told = {item["call_id"]: item["output"] for item in corpus.load(CAPTURE).llm_log[1]["request"]["input"]
            if item.get("type") == "function_call_output"}
    assert results[oslo]["content"] == told[oslo] == "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42"
    assert results[bergen]["content"] == told[bergen] == (
        "The traveller declined this booking: they will stay with friends in Bergen.")
    assert results[weather]["extra"]["is_error"] is True
