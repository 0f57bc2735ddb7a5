"""langgraph-swarm's `create_swarm` under OpenInference (the `langgraph_openinference_swarm` capture).

Two `create_agent` agents hand the conversation to each other with `create_handoff_tool`: a tool returning
`Command(goto=<agent>)`, langgraph-supervisor's mechanism (`trajectory/mappers/langgraph_openinference.py` reads
both). The triage agent hands over to the booking agent, which calls two tools in parallel (one raising once, its
error text sent to the model by a `@wrap_tool_call` middleware), retries and answers. Nothing hands back: the
swarm's checkpointer keeps the booking agent active, so the second turn (another trace, streamed) starts with it:
the builder carries that run on as the booking agent's trajectory (`build._resumed_receivers`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_truth, results_by_call

from tests.captures import corpus

CAPTURE = "langgraph_openinference_swarm"
SESSION = "lg-oi-swarm-1"


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


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_the_handoff_call_starts_the_booking_agent_and_the_triage_agent_does_nothing_after() -> None:
    """The triage agent (the swarm's default active agent) asks the first question's only call, the handoff; its
    result is what the model was shown and references the booking agent's run. No step of the booking agent's
    (its instructions, its work re-sent to it in turn two) is the triage agent's."""
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
    """The second turn's run (another trace, no handoff in it) is the booking agent's, still active: its question
    and calls follow the booking agent's first-turn steps in its trajectory, each of its calls once, in order;
    each question is asked once in the session."""
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
    question = corpus.message_text(steps[3]["message"])
    assert question == _questions()[1]
    users = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]
             if s["source"] == "user"]
    assert users == _questions()
    assert not booking.get("subagent_trajectories")  # the second turn's run is no subagent of its own


def test_the_raising_tool_is_flagged_with_the_error_text_the_model_was_shown() -> None:
    """book_hotel raised (its TOOL span errored, no output); the middleware sent the model its error text, read
    from the next call's input. get_weather, beside it, and book_hotel's retry are no failures; the handoff's
    `ParentCommand` leaving the triage agent's graph is no error step."""
    document = _document()
    truth = capture_truth(CAPTURE)
    parallel, retry = [s for s in _booking_agent(document)["steps"] if s.get("tool_calls")][:2]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["book_hotel", "get_weather"]
    results = results_by_call(parallel)
    failed, weather = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert not weather["extra"].get("is_error")
    assert corpus.message_text(weather["content"]) == truth.tool_results[parallel["tool_calls"][1]["tool_call_id"]]
    (retried,) = results_by_call(retry).values()
    assert not retried["extra"].get("is_error")
    assert not [s for t in corpus.all_trajectories(document) for s in t["steps"]
                if (s.get("extra") or {}).get("run_error") or "error" in (s.get("extra") or {})]
