"""@openai/agents (JavaScript) traced by @arizeai/openinference-instrumentation-openai-agents: its conventions
(its LLM calls' messages trajectory/mappers/openai_agents_js.py, the rest trajectory/mappers/openinference.py's
`_openai_agents_js_*` functions)."""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents-js_openinference"
SCOPE = openinference.OPENAI_AGENTS_JS_SCOPE


def _span(name: str, attributes: dict[str, Any], parent: str = "1000000000000000", scope: str = SCOPE) -> Span:
    return Span(trace_id="6bf92f3577b34da6a3ce929d0e0e4736", span_id="1000000000000001", parent_span_id=parent,
                name=name, kind=1, start_time_unix_nano=1, end_time_unix_nano=2, status_code=1, scope_name=scope,
                attributes={"llm.system": "openai", **attributes})


def _response(scope: str = SCOPE) -> Span:
    calls = {f"llm.output_messages.{i}.message.{key}": value
             for i, city in enumerate(("Oslo", "Paris"))
             for key, value in (("role", "assistant"), ("tool_calls.0.tool_call.id", f"fc_{i}"),
                                ("tool_calls.0.tool_call.function.name", "get_weather"),
                                ("tool_calls.0.tool_call.function.arguments", json.dumps({"city": city})))}
    items = [{"type": "message", "role": "user", "content": "Weather?"},
             {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "Which cities?"}]},
             {"type": "message", "role": "user", "content": "Oslo and Paris."}]
    return _span("response", {
        "openinference.span.kind": "LLM", "llm.provider": "openai", "llm.model_name": "gpt-4o-mini",
        "input.value": json.dumps(items),
        "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Be terse.",
        "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": "Weather?",
        # An `output_text` part of a re-sent answer is dropped: the message has its role only.
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.3.message.role": "user", "llm.input_messages.3.message.content": "Oslo and Paris.",
        "output.value": json.dumps({"id": "resp_1", "instructions": "Be terse.", "output": []}),
        "llm.token_count.prompt": 10, "llm.token_count.completion": 5, **calls,
    }, scope=scope)


def test_an_answers_output_items_are_one_message_and_a_resent_answer_keeps_its_text() -> None:
    call = openinference.map_span(SpanReader(_response()), ())
    assert isinstance(call, LlmCall)
    (answer,) = call.output_messages
    assert [(p.call_id, p.arguments) for p in answer.tool_calls] == [("fc_0", {"city": "Oslo"}),
                                                                     ("fc_1", {"city": "Paris"})]
    assert [(m.role, m.text) for m in call.input_messages] == [
        ("system", "Be terse."), ("user", "Weather?"), ("assistant", "Which cities?"), ("user", "Oslo and Paris.")]
    # Another instrumentation's output messages are its own convention: left as they are (the openai one's, on a
    # span not named for a Response, are a Chat Completion's choices).
    other = openinference.map_span(SpanReader(_response("openinference.instrumentation.openai")), ())
    assert isinstance(other, LlmCall) and len(other.output_messages) == 2


def test_a_handoff_span_is_the_handoff_not_a_tool() -> None:
    handoff = openinference.map_span(SpanReader(_span("handoff to Booking agent", {
        "openinference.span.kind": "TOOL", "tool.name": "handoff_to_Booking agent",
        "input.value": '{"from_agent":"Travel desk"}', "output.value": '{"to_agent":"Booking agent"}'})), ())
    assert isinstance(handoff, ToolExecution)
    assert handoff.handoff_to == "Booking agent" and handoff.name is None


def test_the_workflow_root_does_not_repeat_its_calls_io() -> None:
    io = {"openinference.span.kind": "AGENT", "input.value": '[{"role":"user","content":"Weather?"}]',
          "output.value": "Sunny."}
    for parent in ("", "2000000000000000"):  # the run inside a span of the application's, or not
        root = openinference.map_span(SpanReader(_span("Agent workflow", io, parent=parent)), ())
        assert isinstance(root, AgentRun) and root.input_text is None and root.output_text is None
    agent = openinference.map_span(SpanReader(_span("Travel desk", {**io, "graph.node.id": "Travel desk"})), ())
    assert isinstance(agent, AgentRun) and agent.name == "Travel desk" and agent.output_text == "Sunny."


def _model_calls() -> list[dict[str, Any]]:
    """Every function call the model made, in order, as the fake LLM answered it: `id` its `call_id` (`call_…`),
    `item_id` its item's own id (`fc_…`), the two ids the Responses API gives a function call."""
    return [call for entry in corpus.load(CAPTURE).llm_log for call in entry["response"]["tool_calls"]]


def test_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    built = trajectory_from_spans(capture_spans(CAPTURE))
    document = built.document()
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log), call_ids=True) == []
    assert document["agent"]["name"] == "Travel desk"
    assert document["extra"]["unmapped_attributes"] == []
    # Turn one's answer, re-sent in turn two, is no step of its own; the handoff starts the booking agent.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent"]
    weather, _, _, transfer, _ = _model_calls()
    assert transfer["name"] == "transfer_to_Booking_agent" and weather["name"] == "get_weather"
    handoff = document["steps"][-1]["observation"]["results"][0]
    assert handoff["source_call_id"] == transfer["id"]
    assert handoff["subagent_trajectory_ref"][0]["trajectory_id"].startswith("Booking agent:")
    failed = document["steps"][2]["observation"]["results"][0]
    assert failed["source_call_id"] == weather["id"] and failed["extra"]["is_error"] is True


def test_every_call_and_result_is_under_the_call_id_its_output_names() -> None:
    """The instrumentation writes a function call's `call_id` as its `tool_call.id`, in the answer and in the
    re-sent history alike, and as the `function_call_output`'s `tool_call_id`; the item's `fc_…` is only in the
    items' JSON (each answer's `output.value`; `input.value` where the SDK re-sends an item with its id, within a
    run: the `MemorySession` keeps turn 1's items without it). Every call and result of the trajectory is under the
    `call_id`."""
    model_calls = _model_calls()
    assert all(c["id"].startswith("call_") and c["item_id"].startswith("fc_") for c in model_calls)
    responses = sorted((s for s in capture_spans(CAPTURE) if s.name == "response"),
                       key=lambda s: s.start_time_unix_nano)
    answers = " ".join(str(span.attributes["output.value"]) for span in responses)
    assert all(c["item_id"] in answers for c in model_calls)
    call = openinference.map_span(SpanReader(responses[-1]), ())
    assert isinstance(call, LlmCall)
    asked = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_call"]
    answered = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_result"]
    assert asked == answered == [c["id"] for c in model_calls]
    document = trajectory_from_spans(capture_spans(CAPTURE)).document()
    steps = corpus.llm_steps(document)
    assert [c["tool_call_id"] for s in steps for c in s.get("tool_calls") or ()] == [c["id"] for c in model_calls]
    results = [r["source_call_id"] for s in steps for r in (s.get("observation") or {}).get("results") or ()]
    assert results == [c["id"] for c in model_calls]
