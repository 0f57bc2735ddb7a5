"""The Anthropic SDK's own tracing and OpenLLMetry's anthropic instrumentation on extended thinking, read from their
capture (`anthropic-sdk_openllmetry_thinking`): a hand-written tool loop on claude-opus-4-5 with
`thinking={"type": "enabled", "budget_tokens": 2048}` and `output_config={"effort": "medium"}`, every answer a signed
thinking block first, re-sent in the next request; two parallel tool uses, one raising once and asked again; two
turns of one session, the second streamed. Every call is reported by both (the SDK's span kept).

Before the fix, no step had a `reasoning_effort` (the SDK records the effort as the GenAI conventions'
`gen_ai.request.reasoning.level`, left in `extra.request` as `reasoning.level`), and the thinking configuration
(`anthropic.thinking.type`, `anthropic.thinking.budget_tokens`) was unmapped.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import anthropic_sdk_tracing, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "anthropic-sdk_openllmetry_thinking"
SESSION = "anthropic-thinking-weather-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sdk_call_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if span.scope_name == anthropic_sdk_tracing.SCOPE]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def test_each_step_thinks_its_own_calls_thinking_and_nothing_else() -> None:
    """Each call one step whose `reasoning_content` is that call's thinking, never its message, and the thinking
    re-sent in every later request neither a step nor copied context."""
    document = _document()
    log = _log()
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    steps = corpus.llm_steps(document)
    assert [s.get("reasoning_content") for s in steps] == [entry["response"]["reasoning"] for entry in log]
    assert len({s["reasoning_content"] for s in steps}) == 5
    assert [s["message"] for s in steps] == [entry["response"]["text"] for entry in log]
    # The thinking tokens are part of the output tokens, and shown beside them.
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"]["reasoning_tokens"]) for s in steps] == [
        (entry["response"]["usage"]["output_tokens"], entry["response"]["usage"]["reasoning_tokens"]) for entry in log]


def test_each_step_s_effort_is_the_one_its_request_set() -> None:
    document = _document()
    steps = corpus.llm_steps(document)
    requested = [entry["request"]["output_config"]["effort"] for entry in _log()]
    assert requested == ["medium"] * 5
    assert [step.get("reasoning_effort") for step in steps] == requested
    # Read once: not again among the request's other parameters.
    assert all("reasoning.level" not in step["extra"]["request"] for step in steps)


def test_the_thinking_configuration_is_a_request_parameter_of_its_step() -> None:
    document = _document()
    steps = corpus.llm_steps(document)
    assert [step["extra"]["request"].get("thinking") for step in steps] == [
        entry["request"]["thinking"] for entry in _log()]
    assert not [key for key in document["extra"]["unmapped_attributes"] if key.startswith("anthropic.thinking.")]


def test_the_effort_is_read_from_any_emitter_that_records_it_by_the_conventions_name() -> None:
    """`gen_ai.request.reasoning.level` is the GenAI conventions' attribute: read whoever writes it, while the
    thinking configuration is the SDK's own (read on its scope only)."""
    span = _sdk_call_spans()[0]
    other = replace(span, scope_name="some.genai.instrumentation")
    call = otel_genai.map_span(SpanReader(other), ())
    assert isinstance(call, LlmCall)
    assert call.reasoning_effort == "medium"
    assert "thinking" not in call.extra["request"]


def test_the_raising_tool_is_flagged_and_its_retry_answered() -> None:
    """The application's `execute_tool` spans: the run that raised flags its result (the error text the model was
    shown), the retry answers the next call."""
    steps = corpus.llm_steps(_document())
    first = steps[0]["observation"]["results"]
    assert [(r["source_call_id"], r["content"]) for r in first] == [
        ("toolu_0_0", "sunny, 24°C"), ("toolu_0_1", "Error: the weather service timed out for Porto")]
    assert first[1]["extra"]["is_error"] is True and "is_error" not in first[0]["extra"]
    assert [(r["source_call_id"], r["content"]) for r in steps[1]["observation"]["results"]] == [
        ("toolu_1_0", "cloudy, 19°C")]
