"""Mastra's AI tracing through `@mastra/otel-exporter` (the `mastra_native` capture; trajectory/mappers/mastra.py).

A call is an `agent_step` span (its answer whole, tool calls with ids) around a `chat` span (model, usage, and
only the answer's text); a throwing tool's span records the error's message, which the model was sent.
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import mastra
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import STATUS_ERROR, Span, SpanEvent
from tests.captures import corpus

CAPTURE = "mastra_native"
SESSION = "mastra-weather-thread-1"


def _span(span_id: str, parent: str, attributes: dict[str, object], *, status: int = 1,
          events: tuple[SpanEvent, ...] = ()) -> Span:
    return Span(trace_id="ab" * 16, span_id=span_id, parent_span_id=parent, name="span", kind=1,
                start_time_unix_nano=1, end_time_unix_nano=2, status_code=status, attributes=attributes,
                scope_name=mastra.SCOPE, events=events)


def test_a_step_and_its_chat_span_are_one_call_the_steps_answer_with_the_chat_spans_usage() -> None:
    step = mastra.map_span(SpanReader(_span("00000000000000a1", "00000000000000a0", {
        "gen_ai.operation.name": "agent_step", "mastra.span.type": "model_step",
        "mastra.model_step.input": '[{"role":"assistant","content":"[tool: get_weather]"}]',
        "mastra.model_step.output": '{"text":"Checking.","toolCalls":[{"toolCallId":"fc_1","toolName":"get_weather",'
                                    '"args":{"city":"Paris"}}]}'})), [])
    chat = mastra.map_span(SpanReader(_span("00000000000000a2", "00000000000000a1", {
        "gen_ai.operation.name": "chat", "mastra.span.type": "model_inference",
        "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"Checking."}]}]',
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": '["tool-calls"]'})), [])
    assert isinstance(step, LlmCall) and isinstance(chat, LlmCall)
    assert step.response_id == chat.response_id == mastra.call_key("00000000000000a1")
    [answer] = step.output_messages
    assert answer.text == "Checking."
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [("fc_1", "get_weather", {"city": "Paris"})]
    assert step.input_messages == []  # the step's input is a preview: not read
    # The chat span's text without the calls it asked for is not the answer; its usage is the call's.
    assert chat.output_messages == [] and chat.usage.input_tokens == 10


def test_a_thrown_tool_is_the_error_message_the_model_was_sent_a_json_result_its_text() -> None:
    failed = mastra.map_span(SpanReader(_span("00000000000000b1", "00000000000000a1", {
        "gen_ai.operation.name": "execute_tool", "mastra.span.type": "tool_call", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "fc_1", "gen_ai.tool.call.arguments": '{"city":"Paris"}', "error.type": "unknown",
        "error.message": "weather service timed out"}, status=STATUS_ERROR,
        events=(SpanEvent("exception", 1, {"exception.message": "weather service timed out"}),))), [])
    assert isinstance(failed, ToolExecution) and failed.error is not None
    assert failed.result == "weather service timed out"
    done = mastra.map_span(SpanReader(_span("00000000000000b2", "00000000000000a1", {
        "gen_ai.operation.name": "execute_tool", "mastra.span.type": "tool_call", "gen_ai.tool.name": "get_time",
        "gen_ai.tool.call.id": "fc_2", "gen_ai.tool.call.result": '{"city":"Paris","time":"14:05"}'})), [])
    assert isinstance(done, ToolExecution) and done.result == '{"city":"Paris","time":"14:05"}'


def test_the_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    result = trajectory_from_spans(capture_spans(CAPTURE))
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log)) == []
    assert document["session_id"] == SESSION and document["agent"]["name"] == "Weather Agent"
    assert mastra.NAME in document["extra"]["emitters"]
    assert document["extra"]["unmapped_attributes"] == []
    # Both turns' questions, from the agent spans (no call span records its input).
    assert [(s["source"], s["message"]) for s in document["steps"] if s["source"] != "agent"] == [
        ("system", "You are a terse weather assistant."),
        ("user", "What's the weather and the local time in Paris?"),
        ("user", "And in Lyon?"),
    ]
    # The timed-out call: flagged, its content the message the model was sent; then retried alone.
    first = document["steps"][2]
    assert [c["function_name"] for c in first["tool_calls"]] == ["get_weather", "get_local_time"]
    failed = first["observation"]["results"][0]
    assert failed["content"] == "weather service timed out" and failed["extra"]["is_error"] is True
    assert [r["content"] for r in document["steps"][3]["observation"]["results"]] == ["sunny, 21°C"]


def test_each_call_is_named_by_its_call_id_not_its_items_id() -> None:
    """The Responses API gives a function call two ids: its output item's (`fc_…`) and the `call_id` (`call_…`) the
    model is sent its output under. Mastra records the item's beside the call (`providerMetadata.openai.itemId` of
    `mastra.model_step.output`'s tool calls, `mastra.metadata.providerMetadata` of a tool-call chunk): every call and
    result of the trajectory is on the `call_id`."""
    capture = corpus.load(CAPTURE)
    scripted = [(c["id"], c["item_id"]) for entry in capture.llm_log for c in entry["response"]["tool_calls"]]
    assert scripted and all(call_id != item_id for call_id, item_id in scripted)  # the capture tells them apart
    assert any(item_id in str(span.attributes.get("mastra.model_step.output")) for span in capture_spans(CAPTURE)
               for _, item_id in scripted)
    steps = corpus.llm_steps(trajectory_from_spans(capture_spans(CAPTURE)).document())
    assert [c["tool_call_id"] for step in steps for c in step.get("tool_calls") or ()] == [c for c, _ in scripted]
    assert sorted(r["source_call_id"] for step in steps for r in (step.get("observation") or {}).get("results") or ()) \
        == sorted(c for c, _ in scripted)
