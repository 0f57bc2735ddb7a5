"""OpenLLMetry's openai instrumentation on the Responses API with a reasoning model (the
`openai-sdk_openllmetry_reasoning` capture: o4-mini, effort medium, summary auto, a hand-written loop re-sending every
output item, the app's `execute_tool` spans naming each call's `call_id`).

The instrumentation writes a reasoning item's summary as its JSON, and names every function call by its item's id
(`fc_…`) where the results name the `call_id` (`call_…`): `trajectory/mappers/openllmetry_openai.py` reads both back,
and the builder matches a tool span naming the `call_id` to the call by name and arguments
(`build._Context._call_under_another_id`).
"""

from __future__ import annotations

from span_fixtures import capture_spans, capture_truth, results_by_call

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

CAPTURE = "openai-sdk_openllmetry_reasoning"
SESSION = "openai-reasoning-weather-1"


def _calls() -> list[LlmCall]:
    """The instrumentation's `openai.response` spans, each mapped, in call order."""
    spans = sorted((s for s in capture_spans(CAPTURE) if s.name == "openai.response"),
                   key=lambda s: s.start_time_unix_nano)
    calls = []
    for span in spans:
        assert openllmetry.detect(span)
        call = openllmetry.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall)
        calls.append(call)
    return calls


def _document(spans: list[Span]) -> dict:
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _llm_steps(document: dict) -> list[dict]:
    return [s for s in document["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def test_each_call_reasons_in_its_summary_text_not_its_json() -> None:
    """The summary the instrumentation wrote as `[{"text": …, "type": "summary_text"}]` is the text it shows, each
    call's own, never the step's message; its tokens within the output tokens, the effort asked."""
    truth = capture_truth(CAPTURE)
    calls = _calls()
    assert [call.output_messages[0].reasoning for call in calls] == [c.reasoning for c in truth.calls]
    steps = _llm_steps(_document(capture_spans(CAPTURE)))
    assert [s.get("reasoning_content") for s in steps] == [c.reasoning for c in truth.calls]
    assert len({c.reasoning for c in truth.calls}) == len(truth.calls)  # each step its own call's
    for step, call in zip(steps, truth.calls, strict=True):
        assert step.get("message", "") == call.text
        assert step["reasoning_effort"] == "medium"
        assert step["metrics"]["completion_tokens"] == call.output_tokens
        assert step["metrics"]["extra"]["reasoning_tokens"] == call.reasoning_tokens


def test_the_resent_results_name_the_ids_their_calls_were_recorded_under() -> None:
    """Call 2's history: the two parallel calls and the retry under their items' ids (`fc_…`), as the answers that
    made them were recorded; the results sent for them (named by `call_…`) on those ids, in order."""
    calls = _calls()
    history = calls[2].input_messages
    recorded = [p.call_id for m in history for p in m.parts if p.kind == "tool_call"]
    assert recorded == [p.call_id for c in calls[:2] for m in c.output_messages for p in m.parts
                        if p.kind == "tool_call"]
    assert all(call_id and call_id.startswith("fc_") for call_id in recorded)
    results = [(p.call_id, p.text) for m in history for p in m.parts if p.kind == "tool_result"]
    assert results == [(recorded[0], "sunny, 24°C"), (recorded[1], "Error: the weather service timed out for Porto"),
                       (recorded[2], "cloudy, 19°C")]


def test_without_tool_spans_each_result_is_on_its_call_from_the_history() -> None:
    """A loop tracing only the model calls: every result the model was shown, on the call it answers."""
    spans = [s for s in capture_spans(CAPTURE) if s.name == "openai.response" or s.name == "weather-bot turn"]
    document = _document(spans)
    truth = capture_truth(CAPTURE)
    steps = _llm_steps(document)
    assert len(steps) == len(truth.calls) and len(document["steps"]) == 8  # system, 2 questions, 5 calls
    for step, call in zip(steps, truth.calls, strict=True):
        results = results_by_call(step)
        assert len(results) == len(call.tool_calls)
        for tool_call, logged in zip(step.get("tool_calls") or (), call.tool_calls, strict=True):
            assert results[tool_call["tool_call_id"]]["content"] == truth.tool_results[logged["id"]]
    assert "warnings" not in document["extra"]


def test_a_tool_span_naming_the_call_id_answers_the_call_recorded_under_the_item_id() -> None:
    """The app's `execute_tool` spans name each call's `call_id`, the answers the items' ids: each span answers the
    call of its tool and arguments, no step of its own; Porto's timed-out lookup flagged with the error text the
    model was shown."""
    document = _document(capture_spans(CAPTURE))
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0]
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    truth = capture_truth(CAPTURE)
    for step, call in zip(_llm_steps(document), truth.calls, strict=True):
        results = results_by_call(step)
        for tool_call, logged in zip(step.get("tool_calls") or (), call.tool_calls, strict=True):
            result = results[tool_call["tool_call_id"]]
            assert result["extra"]["emitter"] == "otel-genai"  # the tool span's
            assert result["content"] == truth.tool_results[logged["id"]]
    first = results_by_call(_llm_steps(document)[0])
    flagged = [r for r in first.values() if r["extra"].get("is_error")]
    assert [(r["content"], r["extra"]["error"]["type"]) for r in flagged] == [
        ("Error: the weather service timed out for Porto", "WeatherServiceTimeout")]
    assert "warnings" not in document["extra"]
