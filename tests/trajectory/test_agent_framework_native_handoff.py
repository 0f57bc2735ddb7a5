"""A Microsoft Agent Framework handoff workflow traced by its own spans (the `agent-framework_native_handoff` capture).

Each `workflow.run` is an `invoke_workflow travel_desk` span, the executors' work `executor.process <agent>` spans
under it (with `message.send` and `edge_group.process` routing spans), an agent's `invoke_agent` span inside its
executor's: turn one the triage agent hands off (`handoff_to_weather_agent`, answered by the orchestration's
middleware, no tool span) and the weather agent works; turn two the user's reply goes back to the weather agent.
Read by `trajectory/mappers/agent_framework.py`: the workflow is the trajectory, each agent run a subagent it
delegated to; the routing spans are bookkeeping.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import agent_framework
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from tests.captures import corpus, questions

CAPTURE = "agent-framework_native_handoff"
SESSION = "agent-framework-handoff-1"
ANSWERS = ["Paris is sunny at 21°C, and it is 14:05 there.", "Lyon is cloudy at 17°C; it is 14:06 there."]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls(trajectory: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """A trajectory's own LLM calls as (text, tool calls)."""
    return [(step["message"], [c["function_name"] for c in step.get("tool_calls") or ()])
            for step in trajectory["steps"] if step.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for step in trajectory["steps"]
            for r in (step.get("observation") or {}).get("results") or ()}


def test_the_workflow_is_the_trajectory_and_each_agent_run_a_subagent_it_delegated_to() -> None:
    document = _document()
    assert document["agent"]["name"] == "travel_desk"
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "Delegated to subagent triage_agent"), ("system", "Delegated to subagent weather_agent"),
        ("system", "Delegated to subagent weather_agent")]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == ["triage_agent", "weather_agent", "weather_agent"]
    delegated = [step["observation"]["results"][0] for step in document["steps"]]
    assert [r["subagent_trajectory_ref"][0]["trajectory_id"] for r in delegated] == [
        s["trajectory_id"] for s in subagents]
    # Each agent's runs answer with its last answer; the triage agent only handed off.
    assert [r.get("content") for r in delegated] == [None, *ANSWERS]
    # Each agent with its own instructions and tools, not the other's.
    triage, weather, weather_again = subagents
    assert triage["steps"][0]["message"] == "You route each question to the right specialist."
    assert weather["steps"][0]["message"] == "You are a terse weather assistant."
    assert [d["function"]["name"] for d in triage["agent"]["tool_definitions"]] == ["handoff_to_weather_agent"]
    assert _calls(triage) == [("", ["handoff_to_weather_agent"])]
    assert _calls(weather) == [("", ["get_weather", "get_local_time"]), ("", ["get_weather"]), (ANSWERS[0], [])]
    # Turn two: the weather agent asked the user's reply, turn one re-sent as copied context.
    assert [s["message"] for s in weather_again["steps"] if s["source"] == "user"][-1] == "And in Lyon?"
    assert _calls(weather_again) == [("", ["get_weather", "get_local_time"]), (ANSWERS[1], [])]
    assert all(s.get("is_copied_context") for s in weather_again["steps"]
               if s["source"] == "agent" and s.get("llm_call_count") != 1)
    # The timed-out call flagged where the weather agent made it, with what the model was shown.
    failed = _results(weather)["call_1_0"]
    assert failed["content"] == "Error: Function failed." and failed["extra"]["is_error"] is True
    assert _results(weather)["call_2_0"]["content"] == "sunny, 21°C"


def test_the_routing_spans_are_bookkeeping_and_no_steps() -> None:
    document = _document()
    assert document["extra"]["unmapped_attributes"] == []
    everywhere = [s for t in [document, *document["subagent_trajectories"]] for s in t["steps"]]
    assert not [s for s in everywhere if s["source"] == "agent" and s.get("llm_call_count") == 0]
    kinds = ("executor.process", "message.send", "edge_group.process", "workflow.build")
    routing = [s for s in capture_spans(CAPTURE) if s.name.split(" ")[0] in kinds]
    assert len(routing) == 23
    for span in routing:
        reader = SpanReader(span)
        assert agent_framework.map_span(reader, ()) is None
        assert reader.unused() == set(), span.name
    runs = [s for s in capture_spans(CAPTURE) if s.name == "invoke_workflow travel_desk"]
    assert len(runs) == 2  # one a turn
    for span in runs:
        run = agent_framework.map_span(SpanReader(span), ())
        assert isinstance(run, AgentRun) and run.name == "travel_desk" and run.app_agent


def test_the_handoff_call_is_answered_by_what_the_middleware_returned() -> None:
    """The orchestration's middleware answers `handoff_to_weather_agent` itself, running no tool and opening no
    `execute_tool` span; the triage agent's `invoke_agent` span records that answer in its response."""
    triage = _document()["subagent_trajectories"][0]
    handoff = _results(triage)["call_0_0"]
    assert handoff["content"] == '{"handoff_to": "weather_agent"}'
    assert handoff["extra"]["from"] == "agent span"
    (agent_span,) = [s for s in capture_spans(CAPTURE) if s.name == "invoke_agent triage_agent"]
    assert handoff["extra"]["span_id"] == agent_span.span_id


def test_the_weather_agent_run_again_shows_turn_ones_question_as_copied_context() -> None:
    """Turn two's weather agent is re-sent turn one (its question, calls, results and answer) before the user's reply:
    that question is history the run re-sends, copied context as the answers after it (ATIF's step "copied from a
    previous trajectory for context", as Harbor's summarisation subagent marks the task it is re-sent), not asked
    again; the reply is the one question the run was asked."""
    log = corpus.load(CAPTURE).llm_log
    (first_question,) = [m["content"] for m in log[1]["request"]["messages"] if m["role"] == "user"]
    # The second run's first call: turn one's question, then its calls, results and answer, then the reply.
    sent = log[4]["request"]["messages"]
    assert [m["role"] for m in sent] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "user"]
    assert (sent[1]["content"], sent[-1]["content"]) == (first_question, "And in Lyon?")
    document = _document()
    _, weather, weather_again = document["subagent_trajectories"]
    assert [(s["message"], s.get("is_copied_context")) for s in weather["steps"] if s["source"] == "user"] == [
        (first_question, None)]
    assert [(s["message"], s.get("is_copied_context")) for s in weather_again["steps"] if s["source"] == "user"] == [
        (first_question, True), ("And in Lyon?", None)]
    # Turn one re-shown whole, in order, each step copied: its question, its calls, its answer.
    assert [s["message"] for s in weather_again["steps"] if s.get("is_copied_context")] == [
        s["message"] for s in weather["steps"] if s["source"] != "system"]
    assert questions.missing_questions(document, log) == []
