"""A Strands Agents Swarm traced by Strands' own spans (the `strands_native_swarm` capture).

Each swarm run's root is an `invoke_swarm` span (the session id and the task on it), its agents' `invoke_agent`
spans under it one after another: turn one the triage agent hands off (`handoff_to_agent`) and the weather
specialist works, turn two the triage agent answers itself. Read by `trajectory/mappers/strands_multiagent.py`,
the swarm is the trajectory: each task a user step, each agent's run a subagent it delegated to.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import strands, strands_multiagent
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span, SpanEvent

CAPTURE = "strands_native_swarm"
SESSION = "strands-swarm-trip-1"
TASKS = ["I'm in Lyon tomorrow. Should I pack an umbrella?", "What should I wear there?"]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _swarm_spans() -> list[Span]:
    spans = [s for s in capture_spans(CAPTURE) if s.name == "invoke_swarm"]
    spans.sort(key=lambda s: s.start_time_unix_nano)
    assert len(spans) == 2  # one a turn
    return spans


def test_the_swarm_is_the_trajectory_and_each_agent_run_a_subagent_it_delegated_to() -> None:
    document = _document()
    assert document["agent"]["name"] == "swarm"
    steps = [(s["source"], s["message"]) for s in document["steps"]]
    assert steps == [("user", TASKS[0]), ("system", "Delegated to subagent triage"),
                     ("system", "Delegated to subagent weather_specialist"),
                     ("user", TASKS[1]), ("system", "Delegated to subagent triage")]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == ["triage", "weather_specialist", "triage"]
    # Each delegation refers to its run and answers with that agent's last answer.
    delegated = [s["observation"]["results"][0] for s in document["steps"] if s["source"] == "system"]
    assert [r["subagent_trajectory_ref"][0]["trajectory_id"] for r in delegated] == [
        s["trajectory_id"] for s in subagents]
    assert [r["content"] for r in delegated] == [
        "The weather specialist will take it from here.",
        "Lyon is cloudy at 14°C today, with showers tomorrow: pack an umbrella.",
        "Layers and a light waterproof jacket."]

    # The handoff is the triage agent's call, answered by what the swarm's tool told it; no subagent hangs on it
    # (the specialist ran after the triage agent finished, for the swarm).
    triage, specialist, _ = subagents
    (handoff,) = [c for s in triage["steps"] for c in s.get("tool_calls") or ()]
    assert (handoff["function_name"], handoff["arguments"]["agent_name"]) == ("handoff_to_agent", "weather_specialist")
    (handed,) = [r for s in triage["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    assert handed["source_call_id"] == handoff["tool_call_id"] and "subagent_trajectory_ref" not in handed
    assert handed["content"].startswith("Handing off to weather_specialist:")
    # The specialist's own work in its own trajectory: the swarm's context message, the parallel calls (one
    # raising, flagged) and the call again.
    assert specialist["steps"][1]["message"].startswith("Context:\nHandoff Message: The user wants the weather")
    results = [r for s in specialist["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    assert [(r["content"], bool(r.get("extra", {}).get("is_error"))) for r in results] == [
        ("cloudy, 14°C", False), ("Error: TimeoutError - forecast service timed out", True), ("showers, 11°C", False)]


def _run(span: Span) -> AgentRun:
    reader = SpanReader(span)
    run = strands.map_span(reader, ())
    assert isinstance(run, AgentRun)
    assert reader.unused() == set()  # the session id is the builder's, the rest read
    return run


def test_the_task_is_read_in_each_form_strands_records_it() -> None:
    spans = _swarm_spans()
    # Default conventions: the `gen_ai.user.message` event, the task as it was given.
    assert [(_run(s).name, _run(s).input_text) for s in spans] == [("swarm", TASKS[0]), ("swarm", TASKS[1])]
    span = spans[0]
    messages = '[{"role": "user", "parts": [{"type": "text", "content": "What should I wear there?"}]}]'
    # `gen_ai_latest_experimental`: a details event; with `gen_ai_span_attributes_only`, the span's attribute.
    details = replace(span, events=[SpanEvent("gen_ai.client.inference.operation.details",
                                              span.start_time_unix_nano, {"gen_ai.input.messages": messages})])
    on_span = replace(span, events=[], attributes={**span.attributes, "gen_ai.input.messages": messages})
    assert _run(details).input_text == _run(on_span).input_text == TASKS[1]
    # A task given as content blocks is written as their JSON: its text blocks, one a line.
    blocks = replace(span, events=[SpanEvent("gen_ai.user.message", span.start_time_unix_nano,
                                             {"content": '[{"text": "Lyon tomorrow."}, {"text": "Umbrella?"}]'})])
    assert _run(blocks).input_text == "Lyon tomorrow.\nUmbrella?"


def test_a_graph_run_is_read_alike_and_other_strands_spans_are_not_orchestrators() -> None:
    graph = replace(_swarm_spans()[0], name="invoke_graph",
                    attributes={**_swarm_spans()[0].attributes, "gen_ai.operation.name": "invoke_graph"})
    assert _run(graph).name == "graph"
    agent = next(s for s in capture_spans(CAPTURE) if s.name.startswith("invoke_agent"))
    assert strands_multiagent.orchestrator_run(SpanReader(agent), strands.NAME) is None
