"""The builder's shortcuts give what the slow paths gave: JSON data as the models dump it, remembered detection."""

from __future__ import annotations

import json
from typing import Any

import pytest
from span_fixtures import load_pb, load_simple

from evalkit.trajectory.atif import Trajectory
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers.registry import Detector, detect
from evalkit.trajectory.overrides import MappingOverrides
from evalkit.trajectory.span import Span, SpanEvent


def _session_span(span_id: str, name: str, attributes: dict[str, Any], parent: str = "", at: int = 0) -> Span:
    start = 1_760_000_000_000_000_000 + at * 1_000_000_000
    return Span(
        trace_id="ab" * 16, span_id=span_id, parent_span_id=parent, name=name, kind=1,
        start_time_unix_nano=start, end_time_unix_nano=start + 500_000_000, status_code=0, status_message="",
        attributes=attributes, resource_attributes={}, scope_name="", scope_version="", events=(), links=(),
        truncated={}, session_id="",
    )


def _chat(span_id: str, parent: str, at: int, calls: list[tuple[str, str]], **more: Any) -> Span:
    parts: list[dict[str, Any]] = [{"type": "text", "content": f"thinking {span_id}"}]
    parts += [{"type": "tool_call", "id": call_id, "name": name, "arguments": {"q": call_id}}
              for call_id, name in calls]
    return _session_span(span_id, "chat", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "go"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        "gen_ai.tool.definitions": json.dumps([{"name": "research", "parameters": {"type": "object"}}]),
        **more,
    }, parent, at)


def _tool(span_id: str, parent: str, at: int, call_id: str, name: str) -> Span:
    return _session_span(span_id, f"execute_tool {name}", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.result": f"result of {call_id}",
    }, parent, at)


def _agent(span_id: str, name: str, parent: str = "", at: int = 0) -> Span:
    return _session_span(span_id, f"invoke_agent {name}", {"gen_ai.operation.name": "invoke_agent",
                                                   "gen_ai.agent.name": name, "session.id": "s1"}, parent, at)


def _sessions() -> list[tuple[list[Span], MappingOverrides | None]]:
    usage = {"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10}
    nested = [
        _agent("a1", "lead"),
        _chat("c1", "a1", 1, [("r1", "research")], **usage),
        _tool("t1", "a1", 2, "r1", "research"),
        _agent("a2", "researcher", "t1", 3),
        _chat("c2", "a2", 4, [("s1", "search")], **usage),
        _tool("t2", "a2", 5, "s1", "search"),
    ]
    # No usage: the step gets its metrics (unpriced) only when priced, after its other fields.
    unpriced = [
        _agent("a1", "lead"), _chat("c1", "a1", 1, [("r1", "research")]), _tool("t1", "a1", 2, "r1", "research")
    ]
    overrides = MappingOverrides(attribute_map={
        "custom.model": "agent.model_name", "custom.tag": "step.extra.tag", "custom.cost_center": "metrics.extra.cc"})
    tagged = [_agent("a1", "lead"), _chat("c1", "a1", 1, [], **usage, **{
        "custom.model": "house-model", "custom.tag": "t", "custom.cost_center": "cc-1"})]
    captured = [
        load_pb("pydantic-ai_offline_v5.pb"),
        load_simple("openllmetry-openai-0.62.4_offline_spans.json"),
        load_simple("openllmetry-openai-0.53.4_legacy-indexed_offline_spans.json"),
        load_simple("openinference__js-openinference-genai-fixture__openinference_client_span_tool_calls.json"),
    ]
    return [(nested, None), (unpriced, None), (tagged, overrides), *((spans, None) for spans in captured)]


@pytest.mark.parametrize("case", range(len(_sessions())))
def test_built_documents_are_what_the_models_serialise(case: int) -> None:
    # The builder writes JSON data directly: its keys must come in the models' field order and unset
    # fields be left out, byte for byte what dumping the validated models gives.
    spans, overrides = _sessions()[case]
    result = trajectory_from_spans(spans, overrides=overrides)
    document = result.document()
    served = json.dumps(document)
    assert json.dumps(Trajectory.model_validate(document).to_json_dict()) == served
    assert result.valid, [str(issue) for issue in result.issues]
    if case == 0:
        assert document["subagent_trajectories"][0]["final_metrics"]["total_prompt_tokens"] == 100
        ref = document["steps"][1]["observation"]["results"][0]
        assert list(ref) == ["source_call_id", "content", "subagent_trajectory_ref", "extra"]
    if case == 1:
        assert list(document["steps"][1])[-3:] == ["metrics", "llm_call_count", "extra"]
    if case == 2:
        assert document["agent"]["model_name"] == "house-model"
        assert document["steps"][1]["metrics"]["extra"]["cc"] == "cc-1"


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


def test_json_read_through_orjson_falls_back_where_it_refuses() -> None:
    from evalkit.trajectory.mappers.reader import loads

    assert loads('{"a": 1, "b": [1.5, "x"], "a": 2}') == {"a": 2, "b": [1.5, "x"]}
    assert loads("[NaN, Infinity]")[1] == float("inf")  # not strict JSON: the standard library reads it
    # The one known difference, documented in `loads`: past 64 bits an integer becomes a float.
    assert loads("[18446744073709551617]") == [18446744073709551617.0]
