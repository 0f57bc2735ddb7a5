"""LangChain's supervisor pattern under OpenInference (the `langgraph_openinference_supervisor` capture).

A `create_agent` supervisor (`travel_supervisor`, a checkpointer thread over two turns, the second streamed) whose
tools `book_travel` and `check_budget` each invoke a `create_agent` worker (`booking_agent`, `budget_agent`) on the
request the model wrote: the pattern LangChain's docs give in place of `langgraph-supervisor`. The booking agent
calls two tools in parallel, one raising once (a `@wrap_tool_call` middleware sends the model its error text).

No mapping was changed for it: these tests hold what the capture shows to be read right already. The supervisor's
root graph span is a CHAIN and the workers' AGENT spans; each is an agent run by its `metadata.lc_agent_name`
(`openinference._langchain_agent_name`), and a worker's run under the supervisor's TOOL span is the subagent
answering that tool call.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_truth, results_by_call

from tests.captures import corpus

CAPTURE = "langgraph_openinference_supervisor"
SESSION = "lg-oi-supervisor-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _subagents(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {sub["trajectory_id"]: sub for sub in document.get("subagent_trajectories") or ()}


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_the_supervisor_is_the_agent_and_asks_each_question_once() -> None:
    """Both turns are the supervisor's; turn two re-sends turn one, which is no step again."""
    document = _document()
    assert document["agent"]["name"] == "travel_supervisor"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    # The questions: the last messages of the supervisor's calls that end on a user message (its instructions first).
    instructions = corpus.message_text(document["steps"][0]["message"])
    requests = [entry["request"]["messages"] for entry in corpus.load(CAPTURE).llm_log]
    questions = [messages[-1]["content"] for messages in requests
                 if messages[0]["content"] == instructions and messages[-1]["role"] == "user"]
    assert len(questions) == 2
    assert [corpus.message_text(s["message"]) for s in document["steps"] if s["source"] == "user"] == questions
    assert not any(s.get("is_copied_context") for t in corpus.all_trajectories(document) for s in t["steps"])


def test_each_worker_is_a_subagent_answering_the_tool_call_that_ran_it() -> None:
    """`book_travel` and `check_budget` each ran a worker graph: the call's result is what the supervisor's model
    was shown (the worker's last answer) and references the worker's trajectory, which starts from the request the
    supervisor wrote, under the worker's own instructions."""
    document = _document()
    truth = capture_truth(CAPTURE)
    subagents = _subagents(document)
    delegations = [(step, call) for step in document["steps"] for call in step.get("tool_calls") or ()]
    assert [(call["function_name"]) for _, call in delegations] == ["book_travel", "check_budget"]
    workers = []
    for step, call in delegations:
        result = results_by_call(step)[call["tool_call_id"]]
        assert corpus.message_text(result["content"]) == truth.tool_results[call["tool_call_id"]]
        (ref,) = result["subagent_trajectory_ref"]
        worker = subagents[ref["trajectory_id"]]
        assert [s["source"] for s in worker["steps"][:2]] == ["system", "user"]
        assert corpus.message_text(worker["steps"][1]["message"]) == call["arguments"]["request"]
        assert corpus.message_text(worker["steps"][-1]["message"]) == corpus.message_text(result["content"])
        workers.append(worker["agent"]["name"])
    assert workers == ["booking_agent", "budget_agent"]
    assert len(subagents) == 2  # no agent run of its own for a node, a model call or a tool


def test_the_raising_tool_is_flagged_with_the_error_text_the_model_was_shown() -> None:
    """book_hotel raised (its TOOL span errored, no output); the middleware sent the model its error text, read
    from the next call's input. get_weather, beside it, and book_hotel's retry are no failures."""
    truth = capture_truth(CAPTURE)
    (booking,) = [sub for sub in _subagents(_document()).values() if sub["agent"]["name"] == "booking_agent"]
    parallel, retry, answer = [s for s in booking["steps"] if s["source"] == "agent"]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["book_hotel", "get_weather"]
    results = results_by_call(parallel)
    failed, weather = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert corpus.message_text(failed["content"]).startswith("Tool error:")
    assert not weather["extra"].get("is_error")
    (retried,) = results_by_call(retry).values()
    assert not retried["extra"].get("is_error")
    assert corpus.message_text(retried["content"]) == "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42"
    assert not answer.get("tool_calls")
