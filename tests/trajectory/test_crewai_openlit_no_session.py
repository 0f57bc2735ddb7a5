"""OpenLIT's CrewAI instrumentation, read from its capture (`crewai_openlit_no-session`).

A sequential crew of two agents (`trajectory/mappers/openlit_crewai.py`): the kickoff's `invoke_workflow` span
is the crew, each task's `invoke_agent <role>` span an agent's run, and the spans of the Flow CrewAI runs each
agent's loop as (`invoke_workflow AgentExecutor`, `invoke_agent <method>`) neither.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, ToolExecution
from evalkit.trajectory.span import Span

CAPTURE = "crewai_openlit_no-session"
# The methods of CrewAI's AgentExecutor flow this run went through (each an `invoke_agent <method>` span).
FLOW_METHODS = {"generate_plan", "check_todos_available", "initialize_reasoning", "check_max_iterations",
                "call_llm_native_tools", "execute_native_tool", "check_native_todo_completion",
                "increment_and_continue", "continue_iteration", "finalize", "call_llm_and_parse",
                "route_by_answer_type"}


def _kickoff_spans() -> list[Span]:
    """The kickoff's trace, the session the service builds (each `create_agent` span is a trace of its own)."""
    spans = capture_spans(CAPTURE)
    (root,) = [s for s in spans if s.name.startswith("invoke_workflow ") and not s.parent_span_id]
    return [s for s in spans if s.trace_id == root.trace_id]


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(_kickoff_spans())
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _span(name: str) -> Span:
    return next(s for s in _kickoff_spans() if s.name == name)


def test_the_crew_is_the_agent_and_each_task_agent_a_subagent() -> None:
    document = _document()
    assert document["agent"]["name"] == "trip-crew"  # CrewAI's default crew name ("crew") names nothing
    assert [step["message"] for step in document["steps"]] == [
        "Delegated to subagent Weather researcher", "Delegated to subagent Travel writer"]
    researcher, writer = document["subagent_trajectories"]
    assert (researcher["agent"]["name"], writer["agent"]["name"]) == ("Weather researcher", "Travel writer")
    assert [len(s.get("tool_calls") or ()) for s in researcher["steps"] if s["source"] == "agent"] == [2, 1, 0]
    assert [s["source"] for s in writer["steps"]] == ["system", "user", "agent"]
    # Each subagent's result is its task's output, as the crew was handed it.
    assert document["steps"][1]["observation"]["results"][0]["content"] == (
        "Pack sunscreen and walk the miradouros: Lisbon is sunny, 24°C, and the air is clean.")


def test_the_crews_token_summary_is_not_counted_again() -> None:
    """The kickoff span restates CrewOutput's token usage (every call of the crew): the calls count it."""
    crew = _span("invoke_workflow crew")
    assert crew.attributes["gen_ai.usage.input_tokens"] == 1878
    reader = SpanReader(crew)
    run = openlit.map_span(reader, ())
    assert isinstance(run, AgentRun) and run.name == "trip-crew"
    assert run.output_text == "Pack sunscreen and walk the miradouros: Lisbon is sunny, 24°C, and the air is clean."
    assert reader.unused() == set()
    named = replace(crew, attributes={**crew.attributes, "gen_ai.workflow.name": "Trip planners"})
    assert openlit.map_span(SpanReader(named), ()).name == "Trip planners"  # type: ignore[union-attr]
    # 431 + 512 + 547 + 388 prompt tokens, the four calls'.
    assert _document()["final_metrics"]["total_prompt_tokens"] == 1878


def test_crewais_agent_executor_flow_is_no_agent() -> None:
    """CrewAI runs each agent's loop as a Flow: its kickoff and methods are spans of no agent, and no steps."""
    flow_spans = [s for s in _kickoff_spans()
                  if s.name == "invoke_workflow AgentExecutor" or s.name.removeprefix("invoke_agent ") in FLOW_METHODS]
    assert len(flow_spans) == 36  # two AgentExecutor runs, 34 method calls
    for span in flow_spans:
        reader = SpanReader(span)
        assert openlit.map_span(reader, ()) is None, span.name
        assert reader.unused() == set(), span.name
    document = _document()
    assert [t["agent"]["name"] for t in document["subagent_trajectories"]] == ["Weather researcher", "Travel writer"]
    assert all(not t.get("subagent_trajectories") for t in document["subagent_trajectories"])
    assert "warnings" not in document["extra"]  # no placeholder trajectory of an agent that did nothing


def test_an_agents_backstory_is_no_system_step_of_its_own() -> None:
    """The task span's `gen_ai.system_instructions` is the agent's backstory, a line of the system prompt."""
    task = _span("invoke_agent Weather researcher")
    assert "A meteorologist who checks before answering." in task.attributes["gen_ai.system_instructions"]
    run = openlit.map_span(SpanReader(task), ())
    assert isinstance(run, AgentRun) and run.name == "Weather researcher" and run.system_instructions == []
    researcher = _document()["subagent_trajectories"][0]
    assert [s["message"] for s in researcher["steps"] if s["source"] == "system"] == [
        "You are Weather researcher. A meteorologist who checks before answering.\n"
        "Your personal goal is: Find the current weather and air quality in cities"]


def test_tools_answer_their_calls_and_the_raising_one_is_flagged() -> None:
    researcher = _document()["subagent_trajectories"][0]
    first, retry = [s for s in researcher["steps"] if s.get("tool_calls")]
    results = first["observation"]["results"]
    assert [r["content"] for r in results] == ["sunny, 24°C", "Error executing tool: air-quality service timed out"]
    assert results[1]["extra"]["is_error"] is True and "is_error" not in results[0]["extra"]
    assert retry["observation"]["results"][0]["content"] == "good (AQI 32)"
    for span in _kickoff_spans():
        if span.name.startswith("execute_tool "):
            reader = SpanReader(span)
            execution = openlit.map_span(reader, ())
            assert isinstance(execution, ToolExecution) and execution.emitter == openlit.NAME
            assert reader.unused() == set(), span.name


def test_only_the_http_client_spans_are_left_unmapped() -> None:
    assert _document()["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
