"""langgraph-supervisor's `create_supervisor` under OpenInference (the `langgraph_openinference_create-supervisor`
capture).

The supervisor (`travel_supervisor`, the legacy `create_react_agent` inside `create_supervisor`) hands over with
`transfer_to_<worker>` tools returning `Command(goto=<worker>)`: each worker (a `create_react_agent`) runs as the
next node of the outer graph, beside the supervisor, on the whole shared history, and the library appends a
made-up `transfer_back_to_travel_supervisor` pair when it is done. Two turns in one thread, the second streamed;
the booking worker calls two tools in parallel, one raising once (ToolNode's error text is its result).

OpenInference's LangChain tracer marks AGENT any run whose name contains "agent" (the model node `agent`, the
handoff tool, the node running a worker and its `call_agent` wrapper): `trajectory/mappers/langgraph_openinference.py`
reads LangGraph's own metadata instead, and the builder takes the conversation back from a worker whose run ended
(`build._Context._take_back`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_truth, results_by_call

from tests.captures import corpus

CAPTURE = "langgraph_openinference_create-supervisor"
SESSION = "lg-oi-create-supervisor-1"
HANDOFFS = {"transfer_to_booking_agent": "booking_agent", "transfer_to_budget_agent": "budget_agent"}


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _subagents(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {sub["trajectory_id"]: sub for sub in document.get("subagent_trajectories") or ()}


def _answers_under(instructions: str) -> list[str]:
    """What the model answered, call by call, to the calls sent under these instructions (one agent's calls)."""
    return [entry["response"]["text"] for entry in corpus.load(CAPTURE).llm_log
            if entry["request"]["messages"][0]["content"] == instructions]


def test_the_session_is_the_conversation_that_happened() -> None:
    """Each worker tool span answers its call: the model node `agent` (AGENT by its name) is no agent run of its
    own that would leave the `tools` node beside it without the call it answers."""
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_the_supervisor_is_the_agent_and_asks_each_question_once() -> None:
    """The agent is the supervisor, named as `create_supervisor`'s `supervisor_name` names its graph (a CHAIN that
    has no `lc_agent_name`), not the service; both turns are its own steps, each question once."""
    document = _document()
    assert document["agent"]["name"] == "travel_supervisor"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    instructions = corpus.message_text(document["steps"][0]["message"])
    assert [corpus.message_text(s["message"]) for s in document["steps"] if s.get("llm_call_count")] == \
        _answers_under(instructions)
    questions = [entry["request"]["messages"][-1]["content"] for entry in corpus.load(CAPTURE).llm_log
                 if entry["request"]["messages"][-1]["role"] == "user"]
    assert len(questions) == 2
    users = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]
             if s["source"] == "user"]
    assert users == questions


def test_each_handoff_call_is_answered_by_the_worker_it_started() -> None:
    """`transfer_to_<worker>` is a tool call of the supervisor's step (its span is AGENT by its name): its result is
    what the model was shown, and the worker's run, a sibling of the supervisor's graph, is the subagent it
    started. No subagent for the node running the worker nor its `call_agent` wrapper, none per model call."""
    document = _document()
    truth = capture_truth(CAPTURE)
    subagents = _subagents(document)
    handoffs = [(step, call) for step in document["steps"] for call in step.get("tool_calls") or ()]
    assert [call["function_name"] for _, call in handoffs] == list(HANDOFFS)
    for step, call in handoffs:
        result = results_by_call(step)[call["tool_call_id"]]
        assert corpus.message_text(result["content"]) == truth.tool_results[call["tool_call_id"]]
        assert not result.get("extra", {}).get("is_error")
        (ref,) = result["subagent_trajectory_ref"]
        worker = subagents[ref["trajectory_id"]]
        assert worker["agent"]["name"] == HANDOFFS[call["function_name"]]
        # The worker's own steps: its instructions, then each of its calls; the shared history it was handed
        # (the question, the handoff call and its result) is the supervisor's.
        assert worker["steps"][0]["source"] == "system"
        assert [s["source"] for s in worker["steps"][1:]] == ["agent"] * (len(worker["steps"]) - 1)
        answers = _answers_under(corpus.message_text(worker["steps"][0]["message"]))
        assert [corpus.message_text(s["message"]) for s in worker["steps"][1:]] == answers
        assert all(s.get("llm_call_count") == 1 for s in worker["steps"][1:])
    assert sorted(sub["agent"]["name"] for sub in subagents.values()) == ["booking_agent", "budget_agent"]
    assert not any(sub.get("subagent_trajectories") for sub in subagents.values())


def test_the_worker_answer_is_not_copied_into_the_supervisor() -> None:
    """The supervisor's graph runs again on the history the worker left: the worker's answer is the worker's step,
    not a copied step of the supervisor's (nor of the budget agent's, handed that history in turn two)."""
    document = _document()
    copied = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]
              if s.get("is_copied_context")]
    assert copied == []
    booking = next(sub for sub in _subagents(document).values() if sub["agent"]["name"] == "booking_agent")
    worker_answer = corpus.message_text(booking["steps"][-1]["message"])
    assert worker_answer not in [corpus.message_text(s["message"]) for s in document["steps"]]


def test_the_transfer_back_is_no_call_of_anyone() -> None:
    """langgraph-supervisor's made-up `transfer_back_to_travel_supervisor` call and its result (no model made it,
    no tool ran it) are no step: the worker's run ending is the hand-back."""
    document = _document()
    calls = [c["function_name"] for t in corpus.all_trajectories(document) for s in t["steps"]
             for c in s.get("tool_calls") or ()]
    assert not [name for name in calls if name.startswith("transfer_back_to_")]
    texts = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]]
    assert "Transferring back to travel_supervisor" not in texts


def test_a_handoff_leaving_the_supervisor_graph_is_no_failure() -> None:
    """The supervisor's graph run ends by raising the handoff's `ParentCommand` to the outer graph, recorded as an
    exception of a run the tracer ends OK: no error step for it."""
    document = _document()
    assert not [s for t in corpus.all_trajectories(document) for s in t["steps"]
                if (s.get("extra") or {}).get("run_error") or "error" in (s.get("extra") or {})]


def test_the_raising_tool_is_flagged_with_the_error_text_the_model_was_shown() -> None:
    """book_hotel raised (its TOOL span errored, no output); ToolNode sent the model its error text, read from the
    next call's input. get_weather, beside it, and book_hotel's retry are no failures."""
    truth = capture_truth(CAPTURE)
    booking = next(sub for sub in _subagents(_document()).values() if sub["agent"]["name"] == "booking_agent")
    parallel, retry, answer = [s for s in booking["steps"] if s["source"] == "agent"]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["book_hotel", "get_weather"]
    results = results_by_call(parallel)
    failed, weather = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert corpus.message_text(failed["content"]).startswith("Error: TimeoutError(")
    assert not weather["extra"].get("is_error")
    assert corpus.message_text(weather["content"]) == truth.tool_results[parallel["tool_calls"][1]["tool_call_id"]]
    (retried,) = results_by_call(retry).values()
    assert not retried["extra"].get("is_error")
    assert corpus.message_text(retried["content"]) == truth.tool_results[retry["tool_calls"][0]["tool_call_id"]]
    assert not answer.get("tool_calls")
