"""LangGraph.js traced by OpenInference's LangChain.js instrumentation (capture langgraph-js_openinference): the
flattened messages carry no call ids, so they are read from the serialised messages in `input.value` /
`output.value`, and a tool span's `{"output": <ToolMessage>}` is its ToolMessage
(trajectory/mappers/langchain.py, `js_call_ids`, `tool_run_output`)."""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import langchain, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "langgraph-js_openinference"


def _tool_message(content: str, call_id: str) -> dict[str, object]:
    return {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"],
            "kwargs": {"status": "success", "content": content, "tool_call_id": call_id, "name": "get_weather"}}


def _span(scope: str, attributes: dict[str, object]) -> Span:
    return Span(trace_id="6bf92f3577b34da6a3ce929d0e0e4736", span_id="1000000000000001", parent_span_id="",
                name="get_weather", kind=1, start_time_unix_nano=1, end_time_unix_nano=2, status_code=1,
                scope_name=scope, attributes=attributes)


def test_a_tool_spans_output_is_its_tool_message() -> None:
    output = json.dumps({"output": _tool_message("sunny, 21°C", "call_0_0")})
    attributes = {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": "Paris",
                  "output.value": output}
    execution = openinference.tool_execution(SpanReader(_span(langchain.JS_OPENINFERENCE_SCOPE, attributes)))
    assert execution.result == _tool_message("sunny, 21°C", "call_0_0")
    # Another instrumentation's `{"output": …}` is its own convention: left as it is.
    other = openinference.tool_execution(SpanReader(_span("openinference.instrumentation.langchain", attributes)))
    assert other.result == {"output": _tool_message("sunny, 21°C", "call_0_0")}


def test_call_ids_come_from_the_serialised_messages_when_the_calls_agree() -> None:
    ai = {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"],
          "kwargs": {"content": "", "additional_kwargs": {"tool_calls": [
              {"id": "call_0_0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}}}
    attributes = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                  "input.value": json.dumps({"messages": [[ai, _tool_message("sunny", "call_0_0")]]}),
                  "output.value": json.dumps({"generations": [[{"text": "", "message": ai}]]}),
                  "llm.input_messages.0.message.role": "assistant",
                  "llm.input_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
                  "llm.input_messages.1.message.role": "tool",
                  "llm.input_messages.1.message.content": "sunny",
                  "llm.output_messages.0.message.role": "assistant",
                  "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_time"}
    call = openinference.llm_call(SpanReader(_span(langchain.JS_OPENINFERENCE_SCOPE, attributes)))
    assert [p.call_id for m in call.input_messages for p in m.parts] == ["call_0_0", "call_0_0"]
    # The serialised answer calls another tool than the flattened one: not the same message, no id taken.
    assert [p.call_id for p in call.output_messages[0].parts if p.kind == "tool_call"] == [None]


def test_capture_results_are_on_their_calls_by_id() -> None:
    capture = corpus.load(CAPTURE)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()
    truth = corpus.GroundTruth.of(capture.llm_log)
    assert corpus.compare(document, truth) == []
    steps = corpus.llm_steps(document)
    # The model's own call ids, none synthesized from the span.
    assert [c["tool_call_id"] for s in steps for c in s.get("tool_calls") or ()] == [
        "call_0_0", "call_0_1", "call_0_2", "call_2_0"]
    results = {r["source_call_id"]: r for s in steps for r in (s.get("observation") or {}).get("results") or ()}
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    # The tool that threw: its span has no output; the text ToolNode showed the model, from the next call's input.
    assert results["call_0_1"]["content"] == "Error: unknown city: Atlantis\n Please fix your mistakes."
    assert [r["source_call_id"] for r in results.values() if (r.get("extra") or {}).get("is_error")] == ["call_0_1"]
