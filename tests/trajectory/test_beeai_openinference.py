"""OpenInference's BeeAI instrumentation (trajectory/mappers/beeai.py): an event recorded as a child span is no
operation, a failed tool's `output.value` is its error (the model is shown the agent's template around it, which
the next call's input has), and a tool message's call id is inside its content part."""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import beeai
from evalkit.trajectory.span import STATUS_ERROR, STATUS_OK, Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

TRACE = "6c0ffee0000000000000000000000001"
T0 = 1_800_000_000_000_000_000
SHOWN = "The tool has failed; the error log is shown below.\n\nToolError: date must be YYYY-MM-DD, got 'Friday'"


def _span(span_id: str, parent: str, name: str, at: float, attributes: dict[str, Any],
          status: int = STATUS_OK) -> Span:
    return Span(trace_id=TRACE, span_id=span_id, parent_span_id=parent, name=name, kind=1,
                start_time_unix_nano=T0 + int(at * 10**9), end_time_unix_nano=T0 + int(at * 10**9) + 10**6,
                status_code=status, scope_name=beeai.SCOPE,
                attributes={"session.id": "bee-1", "input.mime_type": "application/json", **attributes})


def _call(span_id: str, at: float, history: dict[str, Any], call_id: str, arguments: str, name: str) -> Span:
    return _span(span_id, "a" * 16, "OpenAIChatModel", at, {
        "openinference.span.kind": "LLM", "metadata.class_name": "OpenAIChatModel", "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "Your task: a flight on Friday",
        **history,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": call_id,
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": name,
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": arguments,
        "llm.token_count.prompt": 10, "llm.token_count.completion": 2})


def _session() -> list[Span]:
    agent = _span("a" * 16, "", "RequirementAgent", 0, {
        "openinference.span.kind": "AGENT", "agent.name": "RequirementAgent", "metadata.class_name": "RequirementAgent",
        "input.value": '{"input": "a flight on Friday"}', "output.value": "SK4417 on Friday."})
    first = _call("b" * 16, 1, {}, "call_1", '{"date": "Friday"}', "lookup_flight")
    failed = _span("c" * 16, "a" * 16, "lookup_flight", 2, {
        "openinference.span.kind": "TOOL", "metadata.class_name": "FunctionTool", "tool.name": "lookup_flight",
        "input.value": '{"input": {"date": "Friday"}, "options": null}',
        "output.value": "ToolError: date must be YYYY-MM-DD, got 'Friday'"}, STATUS_ERROR)
    # The tool's `error` event: a child span of the tool's, of its kind, the event's meta as metadata.*.
    event = _span("d" * 16, "c" * 16, "error", 2.001, {
        "openinference.span.kind": "TOOL", "input.value": '{"error": "Tool Error"}',
        "metadata.id": "e1", "metadata.path": "tool.custom.lookup_flight.error",
        "output.value": "ToolError: date must be YYYY-MM-DD, got 'Friday'"}, STATUS_ERROR)
    second = _call("e" * 16, 3, {
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "lookup_flight",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": '{"date": "Friday"}',
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.contents.0.message.tool_call_id": "call_1",
        "llm.input_messages.2.message.contents.0.message_content.type": "text",
        "llm.input_messages.2.message.contents.0.message_content.text": SHOWN,
    }, "call_2", '{"response": "SK4417 on Friday."}', "final_answer")
    # RequirementAgent's `final_answer` event: a child span of the agent's, so of kind AGENT.
    answer_event = _span("f" * 16, "a" * 16, "final_answer", 3.5, {
        "openinference.span.kind": "AGENT", "input.value": '{"delta": "SK4417 on Friday."}',
        "metadata.id": "e2", "metadata.path": "agent.requirement.final_answer"})
    final = _span("9" * 16, "a" * 16, "final_answer", 4, {
        "openinference.span.kind": "TOOL", "metadata.class_name": "FinalAnswerTool", "tool.name": "final_answer",
        "input.value": '{"input": {"response": "SK4417 on Friday."}, "options": null}',
        "output.value": "Message has been sent"})
    return [agent, first, failed, event, second, answer_event, final]


def test_events_are_no_steps_and_a_failed_tool_shows_what_the_model_was_shown() -> None:
    document = trajectory_from_spans(_session()).document()
    assert not document.get("subagent_trajectories")  # the final_answer event is no agent
    steps = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s.get("llm_call_count") for s in steps] == [1, 1]  # the error event is no tool step of its own
    (failed,) = steps[0]["observation"]["results"]
    assert (failed["source_call_id"], failed["content"]) == ("call_1", SHOWN)
    assert failed["extra"]["is_error"] is True
    assert document["extra"]["unmapped_attributes"] == []


def test_a_tool_message_call_id_is_read_from_its_content_part() -> None:
    message = {"role": "tool", "contents": {"0": {"message": {"tool_call_id": "call_1"},
                                                  "message_content": {"type": "text", "text": "rainy"}}}}
    assert beeai.content_tool_call_id(message) == "call_1"
    assert beeai.content_tool_call_id({"role": "tool", "contents": {"0": {"message_content": {"text": "x"}}}}) is None


def test_the_capture_is_the_conversation_that_happened() -> None:
    document = trajectory_from_spans(capture_spans("beeai_openinference")).document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load("beeai_openinference").llm_log)) == []
