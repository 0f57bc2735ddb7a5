"""OpenLLMetry's LlamaIndex instrumentation on an AgentWorkflow, read from its capture
(`llamaindex_openllmetry_agent-workflow`).

`travel_agent` hands off (LlamaIndex's `handoff` tool) to `booking_agent`, which calls two tools in parallel, one
raising once, then answers; a second turn continues the workflow's Context (and its Memory), streamed, with
`booking_agent` still the current agent. Each turn is one `AgentWorkflow.workflow` trace whose steps are all
`AgentWorkflow.task` spans side by side under it: no span per agent, so no agent run (see
`trajectory/mappers/openllmetry_llamaindex.py`); each call_tool step is its tool's execution.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "llamaindex_openllmetry_agent-workflow"
SESSION = "li-ll-workflow-1"
SCOPE = "opentelemetry.instrumentation.llamaindex"
HANDOFF_SHOWN = ("Agent booking_agent is now handling the request due to the following reason: The user wants a "
                 "hotel booked..\nPlease continue with the current request.")


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _results(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [result for step in document["steps"] for result in (step.get("observation") or {}).get("results") or ()]


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
    assert [(e.call_id, e.name, e.arguments) for e in executions] == [
        ("call_0_0", "handoff", {"to_agent": "booking_agent", "reason": "The user wants a hotel booked."}),
        ("call_1_0", "book_hotel", {"city": "Oslo", "nights": 2}),
        ("call_1_1", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}),
        ("call_2_0", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}),
        ("call_4_0", "book_hotel", {"city": "Oslo", "nights": 3}),
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


def test_the_handoff_is_visible_and_the_second_agent_takes_over_with_its_instructions() -> None:
    """The travel agent's handoff call answered by what the booking agent was shown; the booking agent's instructions
    a system step where it takes over, before its parallel calls; turn 2, the same agent continuing, adds none."""
    steps = _document()["steps"]
    assert [(s["source"], len(s.get("tool_calls") or ())) for s in steps] == [
        ("system", 0), ("user", 0), ("agent", 1), ("system", 0), ("agent", 2), ("agent", 1), ("agent", 0),
        ("user", 0), ("agent", 1), ("agent", 0)]
    assert steps[0]["message"] == "You are a travel assistant. Hand bookings to booking_agent."
    assert steps[2]["tool_calls"][0]["function_name"] == "handoff"
    assert steps[3]["message"] == "You book hotels. Use tools."
    assert [s["message"] for s in steps if s["source"] == "user"] == [
        "Book me a hotel in Oslo for 2 nights, and how many NOK is one EUR?", "Make it 3 nights instead."]


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
    llm_steps = [step for step in document["steps"] if step.get("llm_call_count") == 1]
    assert len({step["extra"]["trace_id"] for step in llm_steps}) == 2
    assert [step["metrics"]["completion_tokens"] for step in llm_steps[-2:]] == [7, 12]  # streamed, include_usage
    assert document["extra"]["unmapped_attributes"] == []
