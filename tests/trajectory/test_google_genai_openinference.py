"""OpenInference's Google Gen AI SDK instrumentation (the `google-genai_openinference` capture's trace exports).

A google-genai chat with automatic function calling: the SDK runs the Python functions itself, in no span, so
the results are only in the next call's input (`trajectory/mappers/google_genai.py`). Two turns, five calls,
each a trace of its own joined by OpenInference's `using_session`; the second turn streamed.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import google_genai, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "google-genai_openinference"
SESSION = "oi-genai-weather-1"
TIMED_OUT = ("Failed to invoke function get_weather with converted arguments {'city': 'Paris'} from model returned "
             "function call argument {'city': 'Paris'} because of error the weather service did not answer within 5 s")


def _calls() -> list[LlmCall]:
    spans = sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)
    assert {span.scope_name for span in spans} == {google_genai.OPENINFERENCE_SCOPE}
    calls = [openinference.map_span(SpanReader(span), ()) for span in spans]
    assert all(isinstance(call, LlmCall) for call in calls)
    return calls  # type: ignore[return-value]  # every one checked above


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_a_streamed_answer_re_sent_in_chunks_is_one_model_turn() -> None:
    # The chat re-sends the streamed answer as it came: "Let me check Lis", "bon's forecast.", then the call.
    last = _calls()[-1]
    logged = corpus.load(CAPTURE).llm_log[-1]["request"]["contents"]
    assert [content["role"] for content in logged[-4:]] == ["model", "model", "model", "user"]
    answer = last.input_messages[-2]
    assert answer.role == "model"
    assert answer.text == "Let me check Lisbon's forecast."
    assert [(part.name, part.arguments) for part in answer.tool_calls] == [("get_weather", {"city": "Lisbon"})]
    assert [message.role for message in last.input_messages] == [
        "system", "user", "model", "tool", "tool", "model", "tool", "model", "user", "model", "tool"]


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
    # The ground truth reads the answer re-sent in chunks too: the streamed call's result is compared.
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
