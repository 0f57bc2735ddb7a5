"""OpenTelemetry's Google Gen AI SDK instrumentation on a chat with automatic function calling (the
`google-genai_otel-genai_chat-afc` capture's exports).

The scenario of `google-genai_openinference` under the other instrumentation: the SDK runs the Python functions
itself, in no span, so their results are only in the next call's `gen_ai.input.messages`; the chat re-sends a
streamed answer one `model` content per chunk. Both are read by the rule the two instrumentations share
(`trajectory/mappers/google_genai.py`). Two turns, five calls, each turn a trace under an application span
carrying `session.id`; the second turn streamed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_logs, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "google-genai_otel-genai_chat-afc"
SESSION = "otel-genai-chat-weather-1"
TIMED_OUT = ("Failed to invoke function get_weather with converted arguments {'city': 'Paris'} from model returned "
             "function call argument {'city': 'Paris'} because of error the weather service did not answer within 5 s")
# What the spans hold of the conversation with content on them (SPAN_ONLY / SPAN_AND_EVENT); with EVENT_ONLY it is
# only in the `gen_ai.client.inference.operation.details` log records.
_CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")


def _call_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if span.scope_name == otel_genai.GOOGLE_GENAI_SCOPE]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def _calls() -> list[LlmCall]:
    calls = [otel_genai.map_span(SpanReader(span), ()) for span in _call_spans()]
    assert len(calls) == 5 and all(isinstance(call, LlmCall) for call in calls)
    return calls  # type: ignore[return-value]  # every one checked above


def _document(spans: list[Span] | None = None) -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE) if spans is None else spans, capture_logs(CAPTURE),
                                   session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_a_streamed_answer_re_sent_in_chunks_is_one_model_turn() -> None:
    # The chat re-sends the streamed answer as it came: "Let me check Lis", "bon's forecast.", then the call.
    logged = corpus.load(CAPTURE).llm_log[-1]["request"]["contents"]
    assert [content["role"] for content in logged[-4:]] == ["model", "model", "model", "user"]
    last = _calls()[-1]
    answer = last.input_messages[-2]
    assert answer.role == "assistant"
    assert answer.text == "Let me check Lisbon's forecast."
    assert [(part.name, part.arguments) for part in answer.tool_calls] == [("get_weather", {"city": "Lisbon"})]
    assert [message.role for message in last.input_messages] == [
        "user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]


def test_the_streamed_answer_is_its_calls_step_not_copied_steps_after_it() -> None:
    document = _document()
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not [step for step in document["steps"] if step.get("is_copied_context")]
    streamed = document["steps"][6]
    assert streamed["message"] == "Let me check Lisbon's forecast."
    assert [(c["function_name"], c["arguments"]) for c in streamed["tool_calls"]] == [
        ("get_weather", {"city": "Lisbon"})]
    assert [r["content"] for r in streamed["observation"]["results"]] == ['{"result": "sunny, 24°C"}']
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert truth.tool_results["gemini_3_0"] == '{"result": "sunny, 24°C"}'
    assert corpus.compare(document, truth) == []


def test_a_function_that_raised_is_flagged_by_its_error_response() -> None:
    # AFC sent {"error": str(exception)} for the weather service's timeout: the only record of the failure.
    results = [part for message in _calls()[1].input_messages for part in message.tool_results]
    assert [(part.name, part.error) for part in results] == [("get_weather", True), ("get_local_time", False)]
    assert json.loads(results[0].text or "") == {"error": TIMED_OUT}

    steps = [step for step in _document()["steps"] if step.get("llm_call_count") == 1]
    first, retry = steps[0]["observation"]["results"], steps[1]["observation"]["results"]
    assert [r["content"] for r in first] == [json.dumps({"error": TIMED_OUT}), '{"result": "14:05"}']
    assert first[0]["extra"]["is_error"] is True
    assert "is_error" not in first[1]["extra"]
    # The model asked again and got the weather: that result is no failure.
    assert retry[0]["content"] == '{"result": "sunny, 21°C"}' and "is_error" not in retry[0]["extra"]


def test_the_log_records_alone_read_the_same() -> None:
    # With content EVENT_ONLY the messages are only in each call's `gen_ai.client.inference.operation.details` record:
    # the same rule reads them there.
    from_spans = _document()
    stripped = [replace(span, attributes={k: v for k, v in span.attributes.items() if k not in _CONTENT_KEYS})
                for span in capture_spans(CAPTURE)]
    from_logs = _document(stripped)
    assert not [step for step in from_logs["steps"] if step.get("is_copied_context")]
    assert [(s["source"], s.get("message"), s.get("tool_calls"), s.get("observation")) for s in from_logs["steps"]] == [
        (s["source"], s.get("message"), s.get("tool_calls"), s.get("observation")) for s in from_spans["steps"]]


def test_an_applications_own_error_response_is_flagged_too() -> None:
    # `google-genai_otel-genai`: its hand-written loop answers the unknown city with {"error": …} as AFC would.
    result = trajectory_from_spans(capture_spans("google-genai_otel-genai"), session_id="genai-weather-1")
    assert result.valid, [str(issue) for issue in result.issues]
    first = next(s for s in result.document()["steps"] if s.get("llm_call_count") == 1)["observation"]["results"]
    assert [(r["content"], r["extra"].get("is_error", False)) for r in first] == [
        ('{"result": "sunny, 21°C"}', False), ('{"error": "unknown city: Atlantis"}', True)]
