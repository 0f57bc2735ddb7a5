"""AG2 1.x's `TelemetryMiddleware` (the `ag2_native` capture; trajectory/mappers/ag2.py).

Each turn is an `invoke_agent` trace with a `chat` span per call and an `execute_tool` span per tool; after
every call the agent's `UsageEvent` is written again as a `record_usage model_call` span carrying that call's
tokens. The scope, `opentelemetry.instrumentation.ag2`, is AG2's, not an OpenLLMetry instrumentation's.
"""

from __future__ import annotations

from dataclasses import replace

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import ag2, openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "ag2_native"


def _session() -> str:
    session = corpus.load(CAPTURE).session_id
    assert session is not None
    return session


def _spans_of_type(span_type: str) -> list[Span]:
    return [span for span in capture_spans(CAPTURE) if span.attributes.get(ag2.SPAN_TYPE) == span_type]


def test_a_usage_span_restates_its_call_and_is_no_step() -> None:
    usage_spans = _spans_of_type(ag2.USAGE_SPAN_TYPE)
    chat_spans = _spans_of_type("llm")
    assert len(usage_spans) == len(chat_spans) == 4
    for usage, chat in zip(usage_spans, chat_spans, strict=True):
        # The same tokens as the call before it: a second report, not a call.
        assert [usage.attributes[k] for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")] == [
            chat.attributes[k] for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")]
        reader = SpanReader(usage)
        assert ag2.map_span(reader, ()) is None
        assert reader.unused() == {"gen_ai.conversation.id"}  # the session, read by the builder


def test_each_call_is_one_step_with_its_tokens_counted_once() -> None:
    capture = corpus.load(CAPTURE)
    truth = corpus.GroundTruth.of(capture.llm_log)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=_session()).document()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 4
    assert [s["metrics"]["prompt_tokens"] for s in steps] == [c.input_tokens for c in truth.calls]
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)
    assert corpus.compare(document, truth) == []


def test_the_scope_is_ag2s_not_openllmetrys_and_nothing_is_left_unmapped() -> None:
    spans = capture_spans(CAPTURE)
    assert {span.scope_name for span in spans} == {ag2.SCOPE}
    assert not any(openllmetry.detect(span) for span in spans)
    document = trajectory_from_spans(spans, session_id=_session()).document()
    assert document["extra"]["emitters"] == [ag2.NAME, "otel-genai"]
    assert {s["extra"]["emitter"] for s in corpus.llm_steps(document)} == {ag2.NAME}
    assert document["extra"]["unmapped_attributes"] == []


def test_the_two_turns_are_one_session_and_the_raising_tool_is_flagged_with_what_the_model_was_shown() -> None:
    capture = corpus.load(CAPTURE)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=_session()).document()
    assert document["agent"]["name"] == "weather_agent"
    # Turn two re-sends turn one: each question once.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Weather in Paris, and the time in Atlantis?", "And the time in Paris?"]
    weather, time = corpus.llm_steps(document)[0]["observation"]["results"]
    assert "is_error" not in weather["extra"]
    assert time["extra"]["is_error"] is True
    # AG2 sends the model the tool's traceback; the span records only the exception, the next call's input the text.
    shown = corpus.GroundTruth.of(capture.llm_log).tool_results[time["source_call_id"]]
    assert shown.startswith("Traceback") and time["content"] == shown


def test_a_calls_thinking_tokens_are_its_reasoning_tokens() -> None:
    chat = _spans_of_type("llm")[0]
    thinking = replace(chat, attributes={**chat.attributes, "gen_ai.usage.thinking_tokens": 7})
    reader = SpanReader(thinking)
    call = ag2.map_span(reader, ())
    assert isinstance(call, LlmCall) and call.usage.reasoning_tokens == 7
    assert "gen_ai.usage.thinking_tokens" not in reader.unused()
