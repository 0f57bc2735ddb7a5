"""Google ADK's own tracing on a Gemini thinking model (the `google-adk_native_thinking` capture's exports).

`travel_desk` on `gemini-2.5-flash` through ADK's Gemini model, `BuiltInPlanner(ThinkingConfig(include_thoughts=True))`:
turn one asks two forecasts in parallel (Oslo's raises once, ADK's `ReflectAndRetryToolPlugin` answers in its stead),
retries Oslo and answers; turn two, streamed, books a hotel. Gemini's function calls carry no id; ADK's converter
writes `<name>_<index of the part>` in their stead (`trajectory/mappers/otel_genai.py` forgets them), and runs each
tool under an id of its own (`adk-…`). What no mapper can mend (ADK writes a thought part as a text part) is the
capture's KNOWN_GAPS entry (tests/trajectory_service/test_capture_corpus.py).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import google_adk
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "google-adk_native_thinking"
SESSION = "adk-thinking-travel-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls() -> list[LlmCall]:
    """ADK's `generate_content` spans, in the order they ran, as the ADK mapper reads them."""
    spans = sorted((s for s in capture_spans(CAPTURE) if s.name.startswith("generate_content")),
                   key=lambda s: s.start_time_unix_nano)
    calls = []
    for span in spans:
        call = google_adk.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall)
        calls.append(call)
    return calls


def test_each_tool_span_answers_the_call_that_asked_for_it() -> None:
    """Each tool ADK ran is the result of the call that asked for it, as the model was shown it: no tool a step of its
    own, no result taken from a later call's history in its stead (the Oslo call answered by the plugin's reflection,
    flagged, its retry by the forecast)."""
    document = _document()
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 5
    assert not [s for s in document["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 0]
    for step, call in zip(steps, truth.calls, strict=True):
        assert [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["name"], c["arguments"]) for c in call.tool_calls]
        results = {r["source_call_id"]: r for r in (step.get("observation") or {}).get("results") or ()}
        for made, asked in zip(step.get("tool_calls") or (), call.tool_calls, strict=True):
            result = results[made["tool_call_id"]]
            assert "span_id" in result["extra"], result  # the tool's own span, not the next call's input
            assert json.loads(result["content"]) == json.loads(truth.tool_results[asked["id"]])
    flagged = [(c["function_name"], c["arguments"]) for s in steps for c in s.get("tool_calls") or ()
               for r in s["observation"]["results"]
               if r["source_call_id"] == c["tool_call_id"] and r["extra"].get("is_error")]
    assert flagged == [("get_weather", {"city": "Oslo"})]
    retried = steps[1]["observation"]["results"][0]
    assert json.loads(retried["content"]) == {"result": "rainy, 9°C"}


def test_the_ids_adks_converter_made_up_are_forgotten() -> None:
    """ADK writes an id-less function call as `<name>_<index of the part in its content>`: after the thought part,
    the parallel calls are `get_weather_1` and `_2`, and their responses in the next call's input `get_weather_0` and
    `_1`. Read as ids they answer the wrong calls; forgotten, calls and responses pair by name and order. A streamed
    call's id is ADK's own (`adk-…`, its tool span's too), which the next call's input re-sends made up: forgotten
    too (`google_adk._forget_run_ids`), its tool span answering it by name and order."""
    first, second, _, streamed, _ = _calls()
    made_up = json.loads(first.span.attributes["gen_ai.output.messages"])[0]["parts"]
    assert [p.get("id") for p in made_up if p["type"] == "tool_call"] == ["get_weather_1", "get_weather_2"]
    assert [(p.name, p.call_id) for m in first.output_messages for p in m.tool_calls] == [
        ("get_weather", None), ("get_weather", None)]
    answered = [p for m in second.input_messages for p in m.parts if p.kind in ("tool_call", "tool_result")]
    assert [(p.kind, p.name, p.call_id) for p in answered] == [
        ("tool_call", "get_weather", None), ("tool_call", "get_weather", None),
        ("tool_result", "get_weather", None), ("tool_result", "get_weather", None)]
    (booking,) = [p for m in streamed.output_messages for p in m.tool_calls]
    assert (booking.name, booking.call_id) == ("book_hotel", None)


def test_the_thoughts_tokens_are_the_steps_reasoning_tokens_within_its_output() -> None:
    """Gemini counts the thoughts (`thoughtsTokenCount`) beside the answer's tokens; ADK records their sum as the
    output tokens and the thoughts as `gen_ai.usage.reasoning.output_tokens`."""
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(_document())
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"]["reasoning_tokens"]) for s in steps] == [
        (c.output_tokens, c.reasoning_tokens) for c in truth.calls]
