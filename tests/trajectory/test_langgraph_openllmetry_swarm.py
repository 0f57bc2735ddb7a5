"""langgraph-swarm's `create_swarm` under OpenLLMetry (the `langgraph_openllmetry_swarm` capture).

The scenario of `langgraph_openinference_swarm`, traced by OpenLLMetry's LangChain instrumentation: the triage agent
hands the conversation to the booking agent with `create_handoff_tool` (a tool returning `Command(goto=<agent>,
graph=PARENT)`); the booking agent calls two tools in parallel (one raising once, its error text sent to the model by
a `@wrap_tool_call` middleware), retries and answers; the second turn (another trace, streamed) starts with the booking
agent the swarm's checkpointer kept active. OpenLLMetry records the handoff's destination as the tool run's
association property and its Command as the tool's output, and ends the triage agent's `invoke_agent` span in ERROR
on the `ParentCommand` the Command leaves its graph with: `trajectory/mappers/openllmetry_langgraph.py` reads them by
the rules OpenInference's tracer shares (`trajectory/mappers/langgraph_handoffs.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, ToolExecution
from evalkit.trajectory.span import STATUS_ERROR, Span, SpanEvent
from tests.captures import corpus

CAPTURE = "langgraph_openllmetry_swarm"
SESSION = "lg-ll-swarm-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls_under(instructions: str) -> list[dict[str, Any]]:
    """The fake LLM's log of the calls sent under these instructions: one agent's calls, in order."""
    return [entry for entry in corpus.load(CAPTURE).llm_log
            if entry["request"]["messages"][0]["content"] == instructions]


def _questions() -> list[str]:
    return [entry["request"]["messages"][-1]["content"] for entry in corpus.load(CAPTURE).llm_log
            if entry["request"]["messages"][-1]["role"] == "user"]


def _booking_agent(document: dict[str, Any]) -> dict[str, Any]:
    (booking,) = document["subagent_trajectories"]
    assert booking["agent"]["name"] == "booking_agent"
    return booking


def _span(name: str) -> Span:
    (span,) = [span for span in capture_spans(CAPTURE) if span.name == name]
    return span


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_the_handoff_call_starts_the_booking_agent_and_the_triage_agent_does_nothing_after() -> None:
    """The triage agent (the swarm's default active agent) asks the first question's only call, the handoff; its
    result is what the model was shown (the ToolMessage the Command's update ends with, not the Command) and
    references the booking agent's run. No step of the booking agent's (its instructions, its calls) is the triage
    agent's."""
    document = _document()
    truth = capture_truth(CAPTURE)
    assert document["agent"]["name"] == "triage_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent"]
    instructions = corpus.message_text(document["steps"][0]["message"])
    assert len(_calls_under(instructions)) == 1
    (handoff,) = document["steps"][2]["tool_calls"]
    assert handoff["function_name"] == "transfer_to_booking_agent"
    result = results_by_call(document["steps"][2])[handoff["tool_call_id"]]
    assert corpus.message_text(result["content"]) == truth.tool_results[handoff["tool_call_id"]]
    (ref,) = result["subagent_trajectory_ref"]
    assert ref["trajectory_id"] == _booking_agent(document)["trajectory_id"]
    assert not [s for t in corpus.all_trajectories(document) for s in t["steps"] if s.get("is_copied_context")]


def test_turn_two_goes_on_with_the_booking_agent_the_swarm_kept_active() -> None:
    """The booking agent's trajectory is its instructions, then all its calls in order, the second turn's (another
    trace, no handoff in it) after its question; each question is asked once in the session."""
    document = _document()
    booking = _booking_agent(document)
    assert booking["steps"][0]["source"] == "system"
    calls = _calls_under(corpus.message_text(booking["steps"][0]["message"]))
    steps = booking["steps"][1:]
    assert [s["source"] for s in steps] == ["agent", "agent", "agent", "user", "agent", "agent"]
    assert all(s.get("llm_call_count") == 1 for s in steps if s["source"] == "agent")
    assert [corpus.message_text(s["message"]) for s in steps if s["source"] == "agent"] == \
        [entry["response"]["text"] for entry in calls]
    assert [[c["function_name"] for c in s.get("tool_calls") or ()] for s in steps if s["source"] == "agent"] == \
        [[c["name"] for c in entry["response"].get("tool_calls") or ()] for entry in calls]
    assert corpus.message_text(steps[3]["message"]) == _questions()[1]
    users = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]
             if s["source"] == "user"]
    assert users == _questions()
    assert not booking.get("subagent_trajectories")


def test_the_raising_tool_is_flagged_and_the_handoff_is_no_failure() -> None:
    """book_hotel raised (its span errored); the model was shown the middleware's text. get_weather and the retry
    are no failures, nor is the triage agent's run, whose span OpenLLMetry ended in ERROR on the handoff's
    `ParentCommand`: no error step."""
    document = _document()
    truth = capture_truth(CAPTURE)
    parallel, retry = [s for s in _booking_agent(document)["steps"] if s.get("tool_calls")][:2]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["book_hotel", "get_weather"]
    results = results_by_call(parallel)
    failed, weather = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert not weather["extra"].get("is_error")
    (retried,) = results_by_call(retry).values()
    assert not retried["extra"].get("is_error")
    assert not [s for t in corpus.all_trajectories(document) for s in t["steps"]
                if (s.get("extra") or {}).get("run_error") or "error" in (s.get("extra") or {})]


def test_an_agent_run_failing_otherwise_keeps_its_error() -> None:
    """Only the `ParentCommand` is no failure: the same run ending in ERROR on another exception failed."""
    span = _span("invoke_agent triage_agent")
    assert span.status_code == STATUS_ERROR and [e.attributes["exception.type"] for e in span.events] == [
        "langgraph.errors.ParentCommand"]
    handed_off = openllmetry.map_span(SpanReader(span), ())
    assert isinstance(handed_off, AgentRun) and handed_off.error is None
    raised = replace(span, events=[SpanEvent(event.name, event.time_unix_nano,
                                             {**event.attributes, "exception.type": "TimeoutError"})
                                   for event in span.events])
    failed = openllmetry.map_span(SpanReader(raised), ())
    assert isinstance(failed, AgentRun) and failed.error is not None
    assert [exception["type"] for exception in failed.error.exceptions] == ["TimeoutError"]


def test_the_handoff_tool_names_its_agent_and_a_plain_tool_none() -> None:
    """The handoff's destination is its run's metadata (`__handoff_destination`, an association property): the
    `execute_tool` span of `transfer_to_booking_agent` is a handoff to booking_agent, answering its call; a tool
    whose run names no destination is none."""
    handoff = openllmetry.map_span(SpanReader(_span("execute_tool transfer_to_booking_agent")), ())
    assert isinstance(handoff, ToolExecution)
    assert (handoff.handoff_to, handoff.call_id) == ("booking_agent", "call_0_0")
    weather = openllmetry.map_span(SpanReader(_span("execute_tool get_weather")), ())
    assert isinstance(weather, ToolExecution) and weather.handoff_to is None


def test_what_the_command_leaves_on_its_spans_is_read() -> None:
    """The `goto` spans (the Command's destination node) and the `ParentCommand` the Command leaves the triage
    agent's node and tools node with (exception event, `error.type`) are read, none left unmapped; book_hotel's
    exception, a failure, is read on its step."""
    unmapped = _document()["extra"]["unmapped_attributes"]
    assert not [key for key in unmapped if key.startswith(("langgraph.command.", "event exception"))]
    assert "error.type" not in unmapped
