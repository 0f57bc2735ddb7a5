"""The builder's shortcuts give what the slow paths gave: unvalidated models, remembered detection."""

from __future__ import annotations

import pytest
from span_fixtures import load_pb, load_simple

from evalkit.trajectory.atif import Metrics, Observation, ObservationResult, Step, ToolCall, unchecked
from evalkit.trajectory.mappers.registry import Detector, detect
from evalkit.trajectory.span import Span, SpanEvent


def _step_values() -> dict[str, object]:
    call = {"tool_call_id": "c1", "function_name": "search", "arguments": {"q": "x"}, "extra": None}
    return {
        "step_id": 3,
        "timestamp": "2026-01-01T00:00:00Z",
        "source": "agent",
        "message": "hi",
        "model_name": "gpt-4o",
        "tool_calls": [ToolCall(**call)],  # type: ignore[arg-type]
        "observation": Observation(results=[ObservationResult(source_call_id="c1", content="found")]),
        "metrics": Metrics(prompt_tokens=10, completion_tokens=2, extra={"price_source": "reported"}),
        "llm_call_count": 1,
        "extra": {"span_id": "ab"},
    }


def test_unchecked_models_dump_as_validated_ones() -> None:
    validated = Step(**_step_values())  # type: ignore[arg-type]
    fast = unchecked(Step, **_step_values())
    assert fast == validated
    assert fast.model_dump(mode="json", exclude_none=True) == validated.model_dump(mode="json", exclude_none=True)
    # Same key order in the served JSON, not only equal dicts.
    assert fast.model_dump_json(exclude_none=True) == validated.model_dump_json(exclude_none=True)
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.reasoning_content is None  # unset fields get the model's defaults


def test_unchecked_does_not_share_state_between_instances() -> None:
    first = unchecked(Metrics, prompt_tokens=1)
    second = unchecked(Metrics, prompt_tokens=2)
    first.extra = {"a": 1}
    assert second.extra is None
    assert unchecked(Metrics).prompt_tokens is None


@pytest.mark.parametrize(
    "spans",
    [
        load_pb("pydantic-ai_offline_v5.pb"),
        load_simple("openllmetry-openai-0.62.4_offline_spans.json"),
        load_simple("openllmetry-openai-0.53.4_legacy-indexed_offline_spans.json"),
        load_simple("openinference__js-openinference-genai-fixture__openinference_client_span_tool_calls.json"),
    ],
)
def test_remembered_detection_matches_detection(spans: list[Span]) -> None:
    detector = Detector()
    for span in [*spans, *spans]:  # the second pass answers from memory
        assert detector(span) == detect(span)


def _span(name: str, attributes: dict[str, object], scope: str = "", events: tuple[SpanEvent, ...] = ()) -> Span:
    return Span(
        trace_id="t", span_id=name, parent_span_id="", name=name, kind=1, start_time_unix_nano=0,
        end_time_unix_nano=1, status_code=0, status_message="", attributes=attributes, resource_attributes={},
        scope_name=scope, scope_version="", events=events, links=(), truncated={}, session_id="",
    )


def test_each_thing_detection_reads_is_part_of_the_shape() -> None:
    detector = Detector()
    plain = _span("chat", {"x": 1})
    assert detector(plain) == []
    # Same keys, and each differs in one thing a detector reads: scope, "ai." name, event names.
    assert [e.name for e in detector(_span("chat", {"x": 1}, scope="pydantic-ai"))] == ["pydantic-ai"]
    assert detector(_span("ai.generateText", {"ai.x": 1})) != detector(_span("chat", {"ai.x": 1}))
    event = SpanEvent(name="gen_ai.user.message", time_unix_nano=0, attributes={})
    assert [e.name for e in detector(_span("chat", {"x": 1}, events=(event,)))] == ["otel-genai"]
    assert detector(plain) == []


def test_memory_is_bounded() -> None:
    detector = Detector(limit=3)
    for index in range(10):
        detector(_span("chat", {f"k{index}": 1}))
    assert len(detector.found) <= 3
