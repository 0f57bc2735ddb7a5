"""A CrewAI Flow under OpenInference's crewai + openai instrumentations (its capture's spans).

The flow runs code: `@start` `triage` asks the model directly (`LLM.call`), `@router` `route` picks the next method
from its answer, `@listen` `research` kicks off a `@CrewBase` crew (`ResearchCrew`) or `advise` asks the model again
(streamed). Its kickoff and method spans are bookkeeping around that work; the crew is a subagent, named as CrewAI
named it (`<name>.kickoff`, its span).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import crewai, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "crewai_openinference_flow"
SESSION = "crew-flow-1"


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def _crew_span() -> Span:
    (span,) = [s for s in capture_spans(CAPTURE) if "crew_key" in s.attributes and s.name.endswith(".kickoff")]
    return span


def test_a_crew_run_is_named_as_crewai_named_the_crew() -> None:
    span = _crew_span()
    run = openinference.map_span(SpanReader(span), ())
    assert isinstance(run, AgentRun)
    assert (span.name, run.name) == ("ResearchCrew.kickoff", "ResearchCrew")  # a CrewBase crew: its class's name
    # A crew left with CrewAI's default name: OpenInference names its span for its id, which names no crew.
    unnamed = replace(span, name=f"Crew_{span.attributes['crew_id']}.kickoff")
    assert openinference.map_span(SpanReader(unnamed), ()).name is None  # type: ignore[union-attr]


def test_the_flows_spans_are_bookkeeping_read_and_no_steps() -> None:
    flow_spans = [s for s in capture_spans(CAPTURE) if crewai.is_flow_span(SpanReader(s))]
    # Per kickoff: the kickoff, triage, route, and research or advise.
    assert sorted(s.name.rpartition(".")[2] for s in flow_spans) == [
        "advise", "kickoff", "kickoff", "research", "route", "route", "triage", "triage"]
    for span in flow_spans:
        reader = SpanReader(span)
        assert openinference.map_span(reader, ()) is None
        assert reader.unused() == set(), span.name
    assert _document()["extra"]["unmapped_attributes"] == []  # the task span's `task_name` (CrewBase's) too


def test_the_flow_is_its_calls_and_the_crew_a_subagent_of_the_call_routing_to_it() -> None:
    document = _document()
    assert document["agent"]["name"] == "trip-flow"  # the flow is unnamed (its spans `Flow_<id>`): the service's
    log = corpus.load(CAPTURE).llm_log
    first_request, second_request = (entry["request"]["messages"][1]["content"] for entry in (log[0], log[4]))
    # Turn 1: the triage call, the crew its answer routed to; turn 2: the triage call, then the streamed advice.
    assert [(s["source"], s.get("llm_call_count")) for s in document["steps"]] == [
        ("system", None), ("user", None), ("agent", 1), ("user", None), ("agent", 1), ("system", None),
        ("user", None), ("agent", 1)]
    steps = document["steps"]
    assert [steps[1]["message"], steps[3]["message"]] == [first_request, second_request]  # each request once
    (crew,) = document["subagent_trajectories"]
    (routed,) = steps[2]["observation"]["results"]
    assert [ref["trajectory_id"] for ref in routed["subagent_trajectory_ref"]] == [crew["trajectory_id"]]
    assert crew["trajectory_id"].startswith("ResearchCrew:") and crew["agent"]["name"] == "ResearchCrew"
    advice = steps[-1]
    assert (advice["metrics"]["prompt_tokens"], advice["metrics"]["completion_tokens"]) == (96, 13)  # streamed
    # The crew's one task: its agent a subagent, its prompt once, its answer the crew's and what the call was shown.
    (researcher,) = crew["subagent_trajectories"]
    assert researcher["agent"]["name"] == "Weather researcher"
    prompts = [s["message"] for s in researcher["steps"] if s["source"] == "user"]
    assert len(prompts) == 1 and prompts[0].startswith(f"\nCurrent Task: {first_request}")
    assert routed["content"] == _llm_steps(researcher)[-1]["message"]


def test_the_researchers_parallel_tools_answer_their_calls_and_the_failure_is_flagged() -> None:
    (crew,) = _document()["subagent_trajectories"]
    (researcher,) = crew["subagent_trajectories"]
    both, again, _answer = _llm_steps(researcher)
    results = {r["source_call_id"]: r for r in both["observation"]["results"]}
    assert [(c["function_name"], results[c["tool_call_id"]]["content"]) for c in both["tool_calls"]] == [
        ("get_weather", "sunny, 21°C"), ("convert_currency", "Error executing tool: exchange-rate service timed out")]
    failed = results[both["tool_calls"][1]["tool_call_id"]]["extra"]
    assert failed["is_error"] is True and failed["error"]["message"] == "exchange-rate service timed out"
    assert [r["content"] for r in again["observation"]["results"]] == ["200 EUR = 32,480 JPY"]


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
