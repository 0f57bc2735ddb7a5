"""A hierarchical CrewAI crew under OpenLLMetry's crewai + openai instrumentations (its capture's spans).

The manager CrewAI makes from `manager_llm` hands work to coworkers through CrewAI's own delegation tools, which call
the coworker's `Agent.execute_task`: OpenLLMetry wraps that in a `<role>.agent` span, and wraps no tool, so the
coworker's run is an agent span right under the manager's, beside the manager's calls, with no tool span between.
That run is a subagent the delegation call before it started (`build._call_starting`: the step's only call no tool
span answered), its answer what the manager was shown for the call (the call's tool message in the manager's next
call). The capture of the same crew under OpenInference is `crewai_openinference_hierarchical`.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "crewai_openllmetry_hierarchical"
SESSION = "crew-ollm-hierarchical-1"


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _document() -> dict[str, Any]:
    # No session id given: the session is the association property Traceloop wrote on every span.
    result = trajectory_from_spans(_spans())
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def test_a_coworkers_agent_span_is_under_the_managers_with_no_tool_span_between() -> None:
    """The shape the trajectory is built from: each delegation leaves only the coworker's `<role>.agent` span."""
    spans = _spans()
    by_id = {span.span_id: span for span in spans}
    runs = []
    for span in spans:
        if span.name.endswith(".agent"):
            reader = SpanReader(span)
            run = openllmetry.map_span(reader, [])
            assert isinstance(run, AgentRun)
            assert reader.unused() == set(), span.name
            runs.append((run.name, by_id[span.parent_span_id].name))
    assert runs == [("Crew Manager", "Plan a day in Paris: check the weather and what 200 EUR is in JPY..task"),
                    ("Weather researcher", "Crew Manager.agent"),
                    ("Crew Manager", "What one item should I pack for that day?.task"),
                    ("Travel writer", "Crew Manager.agent")]


def test_each_delegation_call_started_its_coworkers_run_a_subagent() -> None:
    document = _document()
    assert (document["agent"]["name"], document["session_id"]) == ("trip-crew", SESSION)
    first, second = document["subagent_trajectories"]  # each kickoff's task, carried out by the manager
    delegations = []
    for manager in (first, second):
        assert manager["agent"]["name"] == "Crew Manager"
        # Only the manager's own calls: its delegation, then its answer; the coworker's calls are not its steps.
        delegating, answer = _llm_steps(manager)
        assert [s for s in manager["steps"] if s.get("llm_call_count") == 0] == []
        assert not answer.get("tool_calls")
        (call,) = delegating["tool_calls"]
        (result,) = delegating["observation"]["results"]
        assert result["source_call_id"] == call["tool_call_id"]
        (coworker,) = manager["subagent_trajectories"]
        assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [coworker["trajectory_id"]]
        delegations.append((call["function_name"], call["arguments"]["coworker"], coworker, result["content"]))
    (delegate, researcher_named, researcher, researched), (ask, writer_named, writer, tip) = delegations
    assert (delegate, researcher_named, researcher["agent"]["name"]) == (
        "delegate_work_to_coworker", "Weather researcher", "Weather researcher")
    assert (ask, writer_named, writer["agent"]["name"]) == ("ask_question_to_coworker", "Travel writer",
                                                            "Travel writer")
    # The coworker's prompt is its own, once; what the manager was shown for the call comes from its answer.
    for coworker, shown in ((researcher, researched), (writer, tip)):
        prompts = [s["message"] for s in coworker["steps"] if s["source"] == "user"]
        assert len(prompts) == 1 and prompts[0].startswith("\nCurrent Task: ")
        assert shown in _llm_steps(coworker)[-1]["message"]
    assert [len(_llm_steps(t)) for t in (first, researcher, second, writer)] == [2, 3, 2, 1]
    assert [t["function"]["name"] for t in researcher["agent"]["tool_definitions"]] == ["get_weather",
                                                                                        "convert_currency"]


def test_the_researchers_parallel_tools_answer_their_calls() -> None:
    """From the next call's input (no span runs a tool), each result on its call; the failure is the text the model
    was shown (CrewAI caught the exception: no span records it, so nothing flags it)."""
    manager = _document()["subagent_trajectories"][0]
    (researcher,) = manager["subagent_trajectories"]
    both, again, _answer = _llm_steps(researcher)
    results = {r["source_call_id"]: r["content"] for r in both["observation"]["results"]}
    assert [(c["function_name"], results[c["tool_call_id"]]) for c in both["tool_calls"]] == [
        ("get_weather", "sunny, 21°C"), ("convert_currency", "Error executing tool: exchange-rate service timed out")]
    assert [r["content"] for r in again["observation"]["results"]] == ["200 EUR = 32,480 JPY"]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    assert document["extra"]["unmapped_attributes"] == []
    # The writer's call was streamed: its tokens as the model reported them.
    writer = document["subagent_trajectories"][1]["subagent_trajectories"][0]
    (answer,) = _llm_steps(writer)
    assert (answer["metrics"]["prompt_tokens"], answer["metrics"]["completion_tokens"]) == (402, 24)
