"""The Google Gen AI SDK's OpenTelemetry instrumentation: the ids it makes up for Gemini's id-less function calls.

Gemini's function calls and responses carry no id (gemini-2.5); opentelemetry-instrumentation-google-genai
writes `<name>_<index of the part>` in their place, the same for every call's first `get_weather` and different
for a call after a text part and its response (`google-genai_otel-genai` capture).
"""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers.otel_genai import GOOGLE_GENAI_SCOPE
from evalkit.trajectory.span import Span
from tests.trajectory.span_fixtures import capture_spans


def test_made_up_ids_are_dropped_and_results_answer_their_calls() -> None:
    result = trajectory_from_spans(capture_spans("google-genai_otel-genai"), session_id="genai-weather-1")
    assert result.valid, [str(issue) for issue in result.issues]
    # The OpenTelemetry project's instrumentation, not OpenLLMetry's (`google_generativeai`).
    assert result.emitters == ["otel-genai"]
    steps = [s for s in result.document()["steps"] if s.get("llm_call_count") == 1]
    answered = [[(call["arguments"]["city"], next(r["content"] for r in step["observation"]["results"]
                                                   if r["source_call_id"] == call["tool_call_id"]))
                 for call in step.get("tool_calls") or ()] for step in steps]
    assert answered == [
        [("Paris", '{"result": "sunny, 21°C"}'), ("Atlantis", '{"error": "unknown city: Atlantis"}')],
        [],
        [("Lisbon", '{"result": "sunny, 24°C"}')],  # `get_weather_1`; its response `get_weather_0`, Paris's id
        [],
    ]
    ids = [call["tool_call_id"] for step in steps for call in step.get("tool_calls") or ()]
    assert len(set(ids)) == 3 and not any(i.startswith("get_weather_") for i in ids)


def test_an_id_the_model_gave_is_kept() -> None:
    call = {"type": "tool_call", "id": "fc-7h2k", "name": "get_weather", "arguments": {"city": "Oslo"}}
    first = Span(trace_id="ab" * 16, span_id="01" * 8, parent_span_id="", name="generate_content gemini-3-flash",
                 kind=3, start_time_unix_nano=1, end_time_unix_nano=2, status_code=0, scope_name=GOOGLE_GENAI_SCOPE,
                 attributes={"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gemini",
                             "gen_ai.request.model": "gemini-3-flash",
                             "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                                 {"type": "text", "content": "Oslo?"}]}]),
                             "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}])})
    second = Span(trace_id="ab" * 16, span_id="02" * 8, parent_span_id="", name="generate_content gemini-3-flash",
                  kind=3, start_time_unix_nano=3, end_time_unix_nano=4, status_code=0, scope_name=GOOGLE_GENAI_SCOPE,
                  attributes={"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gemini",
                              "gen_ai.request.model": "gemini-3-flash",
                              "gen_ai.input.messages": json.dumps([
                                  {"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]},
                                  {"role": "assistant", "parts": [call]},
                                  {"role": "user", "parts": [{"type": "tool_call_response", "id": "fc-7h2k",
                                                              "response": {"result": "rainy"}}]}]),
                              "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                                  {"type": "text", "content": "Rainy."}]}])})
    result = trajectory_from_spans([first, second])
    assert result.valid, [str(issue) for issue in result.issues]
    (step,) = [s for s in result.document()["steps"] if s.get("tool_calls")]
    assert step["tool_calls"][0]["tool_call_id"] == "fc-7h2k"
    assert step["observation"]["results"][0]["source_call_id"] == "fc-7h2k"
