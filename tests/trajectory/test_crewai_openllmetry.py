"""OpenLLMetry's crewai instrumentation, read from its capture (`crewai_openllmetry`)."""

from __future__ import annotations

from dataclasses import replace

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span
from tests.trajectory.span_fixtures import capture_spans


def _spans() -> list[Span]:
    return sorted(capture_spans("crewai_openllmetry"), key=lambda span: span.start_time_unix_nano)


def test_the_workflow_span_is_the_crew_run() -> None:
    """`crewai.workflow` has no traceloop kind and no agent name: the crew, answering its result."""
    span = next(span for span in _spans() if span.name == "crewai.workflow")
    reader = SpanReader(span)
    run = openllmetry.map_span(reader, [])
    assert isinstance(run, AgentRun)
    assert run.name == "trip-crew"  # CrewAI's default crew name ("crew") names nothing: the service's
    assert (run.output_text or "").endswith("Final Answer: Booked Hotel Sol in Lisbon for 2 nights (ref LIS-7).")
    assert reader.unused() == set()
    named = replace(span, attributes={**span.attributes, "crewai.crew.name": "Trip planners"})
    assert openllmetry.map_span(SpanReader(named), []).name == "Trip planners"  # type: ignore[union-attr]


def test_task_and_agent_spans_are_read_whole() -> None:
    for span in _spans():
        if span.name.endswith((".task", ".agent")):
            reader = SpanReader(span)
            openllmetry.map_span(reader, [])
            assert reader.unused() == set(), span.name


def test_each_agent_is_a_subagent_of_the_crew() -> None:
    document = trajectory_from_spans(_spans()).document()
    assert document["agent"]["name"] == "trip-crew"
    assert [step["message"] for step in document["steps"]] == [
        "Delegated to subagent Weather researcher", "Delegated to subagent Hotel booker"]
    researcher, booker = document["subagent_trajectories"]
    assert [t["function"]["name"] for t in researcher["agent"]["tool_definitions"]] == ["get_weather"]
    assert [len(step.get("tool_calls") or ()) for step in researcher["steps"] if step["source"] == "agent"] == [2, 0]
    assert [t["function"]["name"] for t in booker["agent"]["tool_definitions"]] == ["book_hotel"]
    assert document["extra"]["unmapped_attributes"] == []
