"""The builder's shortcuts give what the slow paths gave: JSON data as the models dump it, remembered detection."""

from __future__ import annotations

import json
from dataclasses import replace
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


def _loop_session(trace: str, calls: int, history: int, *, twice: bool = False, system: bool = False,
                  briefing: int = 0, split: bool = False) -> list[Span]:
    """An agent loop whose every call re-sends the task and its last `history` messages (as agents do);
    `twice`: one of them re-sent twice in a call; `system`: a system message in the re-sent history;
    `briefing`: that many user messages after the task (the same in every trace); `split`: each answer
    re-sent as one item per part (the Responses API's input items)."""
    task = {"role": "user", "parts": [{"type": "text", "content": "the task"}]}
    spans = [_agent(f"{trace}-root", "looper")]
    conversation: list[dict[str, Any]] = []
    for i in range(calls):
        notes = [{"role": "user", "content": f"note {n}"} for n in range(briefing)]
        inputs: list[dict[str, Any]] = [task, *notes, *conversation[-history:]]
        if twice and len(inputs) > 2:
            inputs.append(inputs[1])
        if system:
            inputs.insert(1, {"role": "system", "content": "be brief"})
        call_id = f"{trace}-call-{i}"
        output = {"role": "assistant", "parts": [{"type": "text", "content": f"step {i}"},
                                                 {"type": "tool_call", "id": call_id, "name": "search",
                                                  "arguments": {"q": i}}]}
        conversation.extend([{"role": "assistant", "parts": [part]} for part in output["parts"]] if split else [output])
        chat = _session_span(f"{trace}-c{i}", "chat", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 10 * (i + 1), "gen_ai.usage.output_tokens": 5,
            "gen_ai.input.messages": json.dumps(inputs), "gen_ai.output.messages": json.dumps([output]),
        }, f"{trace}-root", 2 * i + 1)
        result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": f"r{i}"}]}
        if i % 3 != 2:  # some results only in the next call's history: no tool span answered them
            spans.append(_tool(f"{trace}-t{i}", f"{trace}-root", 2 * i + 2, call_id, "search"))
        conversation.append(result)
        spans.append(chat)
    return [replace(span, trace_id=trace * 16) for span in spans]


@pytest.mark.parametrize("shape", ["distinct", "twice", "system", "split", "two traces"])
def test_bulk_history_lookup_builds_what_the_per_message_loop_builds(
        shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Calls re-sending 8+ messages look them up in bulk (`MessageMemo.parse_all`, `_Fingerprints.of_inputs`,
    # the distinct-messages shortcut); with the threshold out of reach every message goes the per-message way.
    from evalkit.trajectory import build
    from evalkit.trajectory.mappers import messages

    if shape == "two traces":  # the same task and briefing asked again in a second trace: it starts afresh
        spans = [*_loop_session("ab", 14, 10, briefing=9), *_loop_session("cd", 14, 10, briefing=9)]
    else:
        spans = _loop_session("ab", 14, 10, twice=shape == "twice", system=shape == "system", split=shape == "split")
    bulk = trajectory_from_spans(spans).document()
    assert sum(1 for step in bulk["steps"] if step["source"] == "user") >= 1
    monkeypatch.setattr(build, "_MANY_MESSAGES", 10**9)
    monkeypatch.setattr(messages, "_MANY_MESSAGES", 10**9)
    one_by_one = trajectory_from_spans(spans).document()
    assert json.dumps(bulk) == json.dumps(one_by_one)


def test_json_safe_shortcuts_give_what_the_recursion_gives() -> None:
    from evalkit.attributes import json_safe

    def recursive(value: Any) -> Any:  # json_safe before its shortcuts for scalars and flat dicts
        if isinstance(value, bytes):
            return {"bytes_base64": __import__("base64").b64encode(value).decode("ascii")}
        if isinstance(value, dict):
            return {str(k): recursive(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [recursive(v) for v in value]
        return value

    class Text(str):
        pass

    for value in ["a", 1, 1.5, True, None, b"\x00", {"q": "x", "n": 1, "f": None}, {1: "x", "b": True},
                  {"q": b"\x01"}, {"nested": {"k": [1, (2, b"\x02")]}}, {Text("k"): Text("v")}, [{"a": 1}], ()]:
        safe = json_safe(value)
        assert safe == recursive(value) and type(safe) is type(recursive(value))
        assert json.dumps(safe) == json.dumps(recursive(value))
    flat = {"q": "x"}
    assert json_safe(flat) is not flat  # a copy, as the comprehension made: the document may be changed


def _llm_calls(document: dict[str, Any]) -> int:
    """LLM calls a built trajectory holds, in its subagents too (what GET /sessions/{id} summarised)."""
    own = sum(step.get("llm_call_count") or 0 for step in document["steps"])
    return own + sum(_llm_calls(sub) for sub in document.get("subagent_trajectories") or ())


@pytest.mark.parametrize("case", range(len(_sessions()) + 3))
def test_mapping_summary_is_what_the_built_trajectory_says(case: int) -> None:
    # The session's spans view summarises the mapping without assembling the steps; it must say what
    # the whole build says: its LLM calls (wrapping and repeated reports not counted), emitters, the
    # attributes no mapper read, the mapping version.
    from evalkit.trajectory.build import build_trajectory, summarise_mapping

    wrapped = [_agent("a1", "lead"), _chat("w1", "a1", 1, []), _chat("c1", "w1", 2, [("r1", "research")]),
               _tool("t1", "a1", 3, "r1", "research")]  # a framework's LLM span around the client's
    sessions = [*_sessions(), (_loop_session("ab", 12, 9, split=True), None), (wrapped, None),
                ([*_loop_session("ab", 3, 2), *_loop_session("cd", 3, 2)], MappingOverrides(version="v2"))]
    spans, overrides = sessions[case]
    built = build_trajectory(spans, overrides=overrides)
    summary = summarise_mapping(spans, overrides=overrides)
    assert summary.llm_calls == _llm_calls(built.document) > 0
    if case == len(sessions) - 2:
        assert summary.llm_calls == 1 and any("wrapping" in w for w in built.warnings)
    assert (summary.emitters, summary.unmapped_attributes, summary.mapping_version) == (
        built.emitters, built.unmapped_attributes, built.mapping_version)


def test_mapping_summary_reads_no_re_sent_history(monkeypatch: pytest.MonkeyPatch) -> None:
    # The summary counts calls: whether each had input is all it asks of the inputs, so a call's
    # re-sent history is read only as far as its first message (the build reads it all).
    from evalkit.trajectory.build import build_trajectory, summarise_mapping
    from evalkit.trajectory.mappers.messages import MessageMemo

    spans = _loop_session("ab", 12, 9)
    built = build_trajectory(spans)

    def whole_history(*_args: Any) -> Any:
        raise AssertionError("a re-sent history was decoded for the summary")

    monkeypatch.setattr(MessageMemo, "parse_all", whole_history)
    monkeypatch.setattr(MessageMemo, "decode", whole_history)
    summary = summarise_mapping(spans)
    assert summary.llm_calls == _llm_calls(built.document) == 12
    assert (summary.emitters, summary.unmapped_attributes) == (built.emitters, built.unmapped_attributes)


def test_mapping_summary_reads_whole_inputs_to_tell_two_reports_of_one_call_apart() -> None:
    # Two instrumentations' spans of one parent and model, overlapping, no response id: one call if
    # they were given the same input (count and last message), two otherwise. Their first messages
    # are the same, so reading only those would take two calls for one.
    from evalkit.trajectory.build import build_trajectory, summarise_mapping

    task = {"role": "user", "parts": [{"type": "text", "content": "the task"}]}

    def report(span_id: str, scope: str, inputs: list[dict[str, Any]]) -> Span:
        span = _chat(span_id, "a1", 1, [], **{"gen_ai.input.messages": json.dumps(inputs)})
        return replace(span, scope_name=scope)

    asked_more = [task, {"role": "user", "parts": [{"type": "text", "content": "and more"}]}]
    for second, calls in (([task], 1), (asked_more, 2)):
        spans = [_agent("a1", "lead"), report("c1", "instrumentation.one", [task]),
                 report("c2", "instrumentation.two", second)]
        built = build_trajectory(spans)
        summary = summarise_mapping(spans)
        assert summary.llm_calls == _llm_calls(built.document) == calls
