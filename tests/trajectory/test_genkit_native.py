"""Firebase Genkit's own OpenTelemetry spans (the `genkit_native` capture; trajectory/mappers/genkit.py).

A model action's span is the call (its `GenerateRequest` in, its `GenerateResponse` out, with usage and the provider's
raw response), a tool action's span the execution (no call id: paired by name and arguments), an agent's span each
turn's run. `@genkit-ai/compat-oai` drops the text a Chat Completions answer said beside its tool calls from Genkit's
message; the raw response still holds it.
"""

from __future__ import annotations

import json

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import genkit, registry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "genkit_native"


def _span(attributes: dict[str, object], scope: str = genkit.SCOPE) -> Span:
    return Span(trace_id="ab" * 16, span_id="00000000000000a1", parent_span_id="00000000000000a0",
                name="openai/gpt-4o-mini", kind=1, start_time_unix_nano=1, end_time_unix_nano=2, status_code=1,
                attributes=attributes, scope_name=scope)


def _model_span(output: dict[str, object]) -> Span:
    return _span({"genkit:type": "action", "genkit:metadata:subtype": "model", "genkit:name": "openai/gpt-4o-mini",
                  "genkit:input": json.dumps({"messages": [{"role": "user", "content": [{"text": "Weather?"}]}]}),
                  "genkit:output": json.dumps(output)})


def test_only_genkits_scope_is_detected() -> None:
    assert genkit.detect(_span({"genkit:type": "action"}))
    # Another emitter's span, even one carrying a genkit-like key, costs the scope test alone.
    assert not genkit.detect(_span({"genkit:type": "action"}, scope="@mastra/otel-exporter"))
    assert genkit.NAME in [e.name for e in registry.detect(_span({}))]


def test_the_text_compat_oai_drops_beside_tool_calls_is_read_from_the_raw_answer() -> None:
    request = {"toolRequest": {"name": "get_weather", "ref": "call_1", "input": {"city": "Paris"}}}
    raw = {"object": "chat.completion", "id": "chatcmpl-1", "model": "gpt-4o-mini-2024-07-18",
           "choices": [{"message": {"role": "assistant", "content": "Let me look that up.",
                                    "tool_calls": [{"id": "call_1", "type": "function", "function": {
                                        "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}]}
    call = genkit.map_span(SpanReader(_model_span({
        "finishReason": "stop", "message": {"role": "model", "content": [request]},
        "usage": {"inputTokens": 10, "outputTokens": 4}, "raw": raw})), [])
    assert isinstance(call, LlmCall)
    [answer] = call.output_messages
    assert answer.role == "assistant" and answer.text == "Let me look that up."
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"})]
    assert (call.model, call.request_model, call.provider) == ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "openai")
    assert (call.usage.input_tokens, call.usage.output_tokens) == (10, 4)
    # A raw answer of another API (Gemini's) is not read: its plugin keeps the text in the message itself.
    other = genkit.map_span(SpanReader(_model_span({
        "message": {"role": "model", "content": [request]},
        "raw": {"candidates": [{"content": {"parts": [{"text": "unrelated"}]}}]}})), [])
    assert isinstance(other, LlmCall) and other.output_messages[0].text == ""


def test_a_tools_json_result_is_kept_as_the_model_was_sent_it() -> None:
    done = genkit.map_span(SpanReader(_span({
        "genkit:type": "action", "genkit:metadata:subtype": "tool", "genkit:name": "get_local_time",
        "genkit:input": '{"city":"Paris"}', "genkit:output": '{"city":"Paris","time":"14:05"}'})), [])
    assert isinstance(done, ToolExecution)
    assert (done.name, done.arguments, done.result) == ("get_local_time", {"city": "Paris"},
                                                         '{"city":"Paris","time":"14:05"}')
    text = genkit.map_span(SpanReader(_span({
        "genkit:type": "action", "genkit:metadata:subtype": "tool", "genkit:name": "get_weather",
        "genkit:input": '{"city":"Paris"}', "genkit:output": '"sunny, 21°C"'})), [])
    assert isinstance(text, ToolExecution) and text.result == "sunny, 21°C"


def test_the_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    result = trajectory_from_spans(capture_spans(CAPTURE))
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log)) == []
    assert document["agent"]["name"] == "weatherAgent" and document["agent"]["model_name"] == "gpt-4o-mini"
    assert [d["function"]["name"] for d in document["agent"]["tool_definitions"]] == ["get_weather", "get_local_time"]
    assert document["extra"]["emitters"] == [genkit.NAME]
    assert document["extra"]["unmapped_attributes"] == []
    # Both turns' questions (each turn a trace of its own), after the agent's system prompt.
    assert [(s["source"], s["message"]) for s in document["steps"] if s["source"] != "agent"] == [
        ("system", "You are a terse weather assistant."),
        ("user", "What's the weather and the local time in Paris?"),
        ("user", "And the weather in Lyon?"),
    ]
    steps = corpus.llm_steps(document)
    # The first answer's words beside its two calls, which Genkit's message lost.
    assert steps[0]["message"] == "Let me look that up."
    assert [c["function_name"] for c in steps[0]["tool_calls"]] == ["get_weather", "get_local_time"]
    results = {r["source_call_id"]: r for r in steps[0]["observation"]["results"]}
    # The tool that threw: flagged, its content what the middleware sent the model; the other's JSON as sent.
    failed = results["call_Gk1wthrParis1"]
    assert failed["content"] == "Error: weather service timed out" and failed["extra"]["is_error"] is True
    assert results["call_Gk1timeParis1"]["content"] == '{"city":"Paris","time":"14:05"}'
    assert [r["content"] for r in steps[1]["observation"]["results"]] == ["sunny, 21°C"]
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (1336, 111)
