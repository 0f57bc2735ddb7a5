"""OpenInference's llama-index instrumentation on an AgentWorkflow, read from its capture
(`llamaindex_openinference_agent-workflow`).

`travel_agent` looks up the weather, then hands off (LlamaIndex's `handoff` tool) to `booking_agent`, which books a
hotel and answers. One trace: every step of both agents an `AgentWorkflow.<step>` CHAIN span beside the others under
`AgentWorkflow.run`, the agent named only in the reprs of the events the steps got and returned
(`trajectory/mappers/llamaindex.py`); the handoff's `FunctionTool.acall` span a handoff, and the steps naming
`booking_agent` after it its run: a subagent the handoff call started.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import llamaindex, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "llamaindex_openinference_agent-workflow"
SESSION = "li-oi-workflow-1"
HANDOFF_SHOWN = ("Agent booking_agent is now handling the request due to the following reason: The user wants a "
                 "hotel booked..\nPlease continue with the current request.")


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls(trajectory: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(step["source"], [call["function_name"] for call in step.get("tool_calls") or ()])
            for step in trajectory["steps"]]


def test_the_handoff_tool_hands_off_to_the_agent_its_arguments_name() -> None:
    executions = [openinference.map_span(SpanReader(span), [])
                  for span in _spans() if span.name == "FunctionTool.acall"]
    assert all(isinstance(execution, ToolExecution) for execution in executions)
    assert [(e.name, e.handoff_to) for e in executions if isinstance(e, ToolExecution)] == [
        ("get_weather", None), ("handoff", "booking_agent"), ("book_hotel", None)]


def test_each_step_names_the_agent_its_events_name() -> None:
    """The run's step spans, each with the `current_agent_name` of the event it returned, else got: none for the
    first step (its AgentInput's repr cut short), the call_tool steps (a ToolCall in, a ToolCallResult out) or the
    aggregate step whose output was cut short; `booking_agent` from the aggregate step after the handoff on."""
    spans = _spans()
    agents = llamaindex.step_agents(spans)
    [run] = [span for span in spans if span.name == "AgentWorkflow.run"]
    steps = [span for span in spans if span.parent_span_id == run.span_id]
    assert set(agents) == {(span.trace_id, span.span_id) for span in steps}
    travel, booking = "travel_agent", "booking_agent"
    assert [(span.name.removeprefix("AgentWorkflow."), agents[(span.trace_id, span.span_id)]) for span in steps] == [
        ("init_run", None), ("setup_agent", travel), ("run_agent_step", travel), ("parse_agent_output", travel),
        ("call_tool", None), ("aggregate_tool_results", None),
        ("setup_agent", travel), ("run_agent_step", travel), ("parse_agent_output", travel), ("call_tool", None),
        ("aggregate_tool_results", booking), ("setup_agent", booking), ("run_agent_step", booking),
        ("parse_agent_output", booking), ("call_tool", None),
        ("aggregate_tool_results", booking), ("setup_agent", booking), ("run_agent_step", booking),
        ("parse_agent_output", booking),
    ]


def test_the_agent_handed_to_is_a_subagent_the_handoff_call_started() -> None:
    """The travel agent's steps (its weather call, its handoff) in the session's trajectory; the booking agent's
    (its instructions, its booking, its answer) in its own, referenced by the handoff call's result, which stays
    what the booking agent was shown."""
    document = _document()
    assert _calls(document) == [("system", []), ("user", []), ("agent", ["get_weather"]), ("agent", ["handoff"])]
    assert document["steps"][0]["message"] == "You are a travel assistant. Hand bookings to booking_agent."
    [booking] = document["subagent_trajectories"]
    assert booking["agent"]["name"] == "booking_agent"
    assert _calls(booking) == [("system", []), ("agent", ["book_hotel"]), ("agent", [])]
    assert booking["steps"][0]["message"] == "You book hotels."
    assert booking["steps"][-1]["message"] == ("Oslo is rainy (9°C); I booked you 2 nights at the Harbour Inn "
                                               "(ref H-42).")
    [handoff] = document["steps"][3]["observation"]["results"]
    assert handoff["content"] == HANDOFF_SHOWN
    assert handoff["subagent_trajectory_ref"] == [{"trajectory_id": booking["trajectory_id"], "session_id": SESSION}]
    assert handoff["extra"]["handoff_to"] == "booking_agent"
    # The question is the travel agent's to answer; the booking agent carries on its conversation.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "What's the weather in Oslo? And book me a hotel there for 2 nights."]
    assert not [s for s in booking["steps"] if s["source"] == "user"]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    assert document["agent"]["name"] == "travel-desk"  # the workflow's, no one agent's: the service's name
    assert len(corpus.llm_steps(document)) == 4
