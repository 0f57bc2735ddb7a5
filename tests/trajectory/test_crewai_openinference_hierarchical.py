"""A hierarchical CrewAI crew under OpenInference's crewai + openai instrumentations (its capture's spans).

The manager CrewAI makes from `manager_llm` hands work to coworkers through CrewAI's own delegation tools, whose
TOOL span holds the coworker's whole run (its LLM calls and tools; no task span): that run is a subagent the
delegation call started. The tool spans name a tool by its `name` ("Delegate work to coworker"), the model calls it
`delegate_work_to_coworker`: the span's `tool.description` begins with that name.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "crewai_openinference_hierarchical"
SESSION = "crew-hierarchical-1"


def _tool_spans() -> list[Span]:
    spans = [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "TOOL"]
    return sorted(spans, key=lambda s: s.start_time_unix_nano)


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def test_a_crewai_tool_is_named_as_the_model_calls_it_and_a_delegation_names_its_coworker() -> None:
    executions = []
    for span in _tool_spans():
        reader = SpanReader(span)
        execution = openinference.map_span(reader, ())
        assert isinstance(execution, ToolExecution)
        assert reader.unused() == set()
        executions.append(execution)
    assert [(e.span.attributes["tool.name"], e.name, e.runs_agent) for e in executions] == [
        ("Delegate work to coworker", "delegate_work_to_coworker", "Weather researcher"),
        ("get_weather", "get_weather", None),
        ("convert_currency", "convert_currency", None),
        ("convert_currency", "convert_currency", None),
        ("Ask question to coworker", "ask_question_to_coworker", "Travel writer"),
    ]


def test_each_delegation_call_started_its_coworkers_run_a_subagent() -> None:
    document = _document()
    assert document["agent"]["name"] == "trip-crew"
    first, second = document["subagent_trajectories"]  # each kickoff's task, carried out by the manager
    delegations = []
    for manager in (first, second):
        assert manager["agent"]["name"] == "Crew Manager"
        # Only the manager's own calls: its delegation, then its answer; no step for a tool no call asked for.
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
    # The coworker's prompt is its own, once; its answer is what the manager was shown.
    for coworker, shown in ((researcher, researched), (writer, tip)):
        prompts = [s["message"] for s in coworker["steps"] if s["source"] == "user"]
        assert len(prompts) == 1 and prompts[0].startswith("\nCurrent Task: ")
        assert shown in _llm_steps(coworker)[-1]["message"]
    assert [len(_llm_steps(t)) for t in (first, researcher, second, writer)] == [2, 3, 2, 1]


def test_the_researchers_parallel_tools_answer_their_calls_and_the_failure_is_flagged() -> None:
    manager = _document()["subagent_trajectories"][0]
    (researcher,) = manager["subagent_trajectories"]
    both, again, _answer = _llm_steps(researcher)
    results = {r["source_call_id"]: r for r in both["observation"]["results"]}
    assert [(c["function_name"], results[c["tool_call_id"]]["content"]) for c in both["tool_calls"]] == [
        ("get_weather", "sunny, 21°C"), ("convert_currency", "Error executing tool: exchange-rate service timed out")]
    failed = results[both["tool_calls"][1]["tool_call_id"]]["extra"]
    assert failed["is_error"] is True and failed["error"]["message"] == "exchange-rate service timed out"
    assert [r["content"] for r in again["observation"]["results"]] == ["200 EUR = 32,480 JPY"]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    # No step runs a tool under CrewAI's display name, which no call uses.
    names = {c["function_name"] for t in corpus.all_trajectories(document) for s in t["steps"]
             for c in s.get("tool_calls") or ()}
    assert names == {"delegate_work_to_coworker", "ask_question_to_coworker", "get_weather", "convert_currency"}
    assert document["extra"]["unmapped_attributes"] == []
