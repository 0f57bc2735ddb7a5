"""OpenLLMetry's LlamaIndex instrumentation on an AgentWorkflow, read from its capture
(`llamaindex_openllmetry_agent-workflow`).

`travel_agent` hands off (LlamaIndex's `handoff` tool) to `booking_agent`, which calls two tools in parallel, one
raising once, then answers; a second turn continues the workflow's Context (and its Memory), streamed, with
`booking_agent` still the current agent. Each turn is one `AgentWorkflow.workflow` trace whose steps are all
`AgentWorkflow.task` spans side by side under it: no span per agent (see
`trajectory/mappers/openllmetry_llamaindex.py`); each call_tool step is its tool's execution, the `handoff` step a
handoff, and the steps naming `booking_agent` after it (turn 2's too) its run: a subagent the handoff call started.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.mappers import openllmetry, openllmetry_llamaindex
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "llamaindex_openllmetry_agent-workflow"
SESSION = "li-ll-workflow-1"
SCOPE = "opentelemetry.instrumentation.llamaindex"
HANDOFF_SHOWN = ("Agent booking_agent is now handling the request due to the following reason: The user wants a "
                 "hotel booked..\nPlease continue with the current request.")


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _results(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [result for trajectory in corpus.all_trajectories(document) for step in trajectory["steps"]
            for result in (step.get("observation") or {}).get("results") or ()]


def test_each_call_tool_step_is_its_tools_execution_the_handoff_too() -> None:
    """Every call_tool step (both agents', the handoff's among them) by its ToolCallResult's call id, read whole."""
    executions = []
    for span in _spans():
        if span.scope_name == SCOPE and "tool.name" in span.attributes:
            reader = SpanReader(span)
            execution = openllmetry.map_span(reader, [])
            assert isinstance(execution, ToolExecution), span.name
            assert reader.unused() == set(), span.name
            executions.append(execution)
    assert [(e.call_id, e.name, e.arguments, e.handoff_to) for e in executions] == [
        ("call_0_0", "handoff", {"to_agent": "booking_agent", "reason": "The user wants a hotel booked."},
         "booking_agent"),
        ("call_1_0", "book_hotel", {"city": "Oslo", "nights": 2}, None),
        ("call_1_1", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}, None),
        ("call_2_0", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}, None),
        ("call_4_0", "book_hotel", {"city": "Oslo", "nights": 3}, None),
    ]


def test_each_step_names_the_agent_its_output_names() -> None:
    """The workflow's task spans, each with the `current_agent_name` of the event it returned: none for a call_tool
    step (a ToolCallResult), for an aggregate step still waiting for its calls' results, or for the streamed turn's
    run_agent_step (its output not recorded); `booking_agent` from the aggregate step after the handoff on."""
    spans = _spans()
    agents = openllmetry_llamaindex.step_agents(spans)
    steps = [span for span in spans if span.name == "AgentWorkflow.task"]
    assert set(agents) == {(span.trace_id, span.span_id) for span in steps}
    travel, booking = "travel_agent", "booking_agent"
    assert [agents[(span.trace_id, span.span_id)] for span in steps] == [
        travel, travel, travel, None, None,  # init, setup, run_agent_step, parse_agent_output, call_tool (handoff)
        booking, booking, booking, None, None, None, None, None,  # aggregate, setup, step, parse, 2 calls, 2 waiting
        booking, booking, booking, None, None, booking, booking, booking, booking,  # ... the answer, the StopEvent
        booking, booking, None, None, None, booking, booking, None, booking,  # turn 2, streamed
    ]


def test_results_are_on_their_calls_and_the_raised_tool_is_flagged() -> None:
    results = _results(_document())
    assert [(r["source_call_id"], r["content"]) for r in results] == [
        ("call_0_0", HANDOFF_SHOWN),
        ("call_1_0", "Booked 2 nights at the Harbour Inn, Oslo (ref H-42)."),
        ("call_1_1", "the rate service timed out for EUR/NOK; try again"),
        ("call_2_0", "1 EUR = 11.52 NOK"),
        ("call_4_0", "Booked 3 nights at the Harbour Inn, Oslo (ref H-43)."),
    ]
    assert [r["source_call_id"] for r in results if r["extra"].get("is_error")] == ["call_1_1"]
    assert results[2]["extra"]["error"] == {"status": "error", "from": "llama_index.ToolOutput"}


def test_the_agent_handed_to_is_a_subagent_the_handoff_call_started() -> None:
    """The travel agent's trajectory ends with its handoff call, whose result (what the booking agent was shown)
    references the booking agent's: its instructions, its calls and answer, and turn 2 (the same agent continuing
    the workflow's Context, no new handoff), the question it was asked there its user step."""
    document = _document()
    assert [(s["source"], [c["function_name"] for c in s.get("tool_calls") or ()]) for s in document["steps"]] == [
        ("system", []), ("user", []), ("agent", ["handoff"])]
    assert document["steps"][0]["message"] == "You are a travel assistant. Hand bookings to booking_agent."
    [booking] = document["subagent_trajectories"]
    assert booking["agent"]["name"] == "booking_agent"
    assert not booking.get("subagent_trajectories")
    [handoff] = document["steps"][2]["observation"]["results"]
    assert handoff["content"] == HANDOFF_SHOWN
    assert handoff["subagent_trajectory_ref"] == [{"trajectory_id": booking["trajectory_id"], "session_id": SESSION}]
    assert [(s["source"], [c["function_name"] for c in s.get("tool_calls") or ()]) for s in booking["steps"]] == [
        ("system", []), ("agent", ["book_hotel", "get_exchange_rate"]), ("agent", ["get_exchange_rate"]),
        ("agent", []), ("user", []), ("agent", ["book_hotel"]), ("agent", [])]
    assert booking["steps"][0]["message"] == "You book hotels. Use tools."
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Book me a hotel in Oslo for 2 nights, and how many NOK is one EUR?"]
    assert [s["message"] for s in booking["steps"] if s["source"] == "user"] == ["Make it 3 nights instead."]
    # Both turns' calls: the receiving run goes on into the second trace.
    assert len({s["extra"]["trace_id"] for s in booking["steps"] if s.get("llm_call_count") == 1}) == 2


def test_the_workflow_is_no_one_agents_run() -> None:
    """The AgentWorkflow span's output names the agent that answered last (`booking_agent`), not the root agent it
    started with: no agent run, so the session is not named after the agent handed to but after the service
    (`travel-desk`, the Traceloop app name), as a crew is."""
    first, streamed = [span for span in _spans() if span.name == "AgentWorkflow.workflow"]
    output = json.loads(first.attributes["traceloop.entity.output"])
    assert output["result"]["current_agent_name"] == "booking_agent"
    assert openllmetry.map_span(SpanReader(first), []) is None
    assert "traceloop.entity.output" not in streamed.attributes  # the streamed turn's records none
    assert _document()["agent"]["name"] == "travel-desk"


def test_the_session_is_the_conversation_that_happened() -> None:
    """Both traces one session; each question once though turn 2 re-sends turn 1; the streamed turn's tokens."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    llm_steps = corpus.llm_steps(document)
    assert len({step["extra"]["trace_id"] for step in llm_steps}) == 2
    assert [step["metrics"]["completion_tokens"] for step in llm_steps[-2:]] == [7, 12]  # streamed, include_usage
    assert document["extra"]["unmapped_attributes"] == []
