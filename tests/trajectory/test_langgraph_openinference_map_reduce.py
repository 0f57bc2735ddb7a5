"""A LangGraph map-reduce graph under OpenInference (the `langgraph_openinference_map-reduce` capture).

`trip_researcher`: a `plan` node asks the model for subtopics, a conditional edge `Send`s each to the `research` node
(branches run at once, each its own conversation with the model, tools offered), `combine` asks the model to combine
the findings after the thread's messages. A checkpointer thread over two turns, the second streamed. The weather
branch calls two tools in parallel, one raising a `ToolException` once (its text sent back), and calls it again.

Read before: the branches' calls were the graph's own steps, interleaved in the order the calls started (the weather
branch's retry and answer after the other branches' answers, one system step for all three), and `combine` showed the
turn's question again before its findings. Now each branch is a subagent named after its node
(`trajectory/mappers/langgraph_branches.py`), and a question the reduce call re-sends before what it asks is not asked
again (`build._Context._asked_again`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import langgraph_branches
from evalkit.trajectory.mappers.langgraph_openinference import OPENINFERENCE_SCOPE
from evalkit.trajectory.mappers.reader import SpanReader
from tests.captures import corpus, questions

CAPTURE = "langgraph_openinference_map-reduce"
SESSION = "lg-oi-map-reduce-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _requests() -> list[dict[str, Any]]:
    return [entry["request"] for entry in corpus.load(CAPTURE).llm_log]


def _subagents(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {sub["trajectory_id"]: sub for sub in document.get("subagent_trajectories") or ()}


def _texts(steps: list[dict[str, Any]], source: str) -> list[str]:
    return [corpus.message_text(s["message"]) for s in steps if s["source"] == source]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []
    assert not any(s.get("is_copied_context") for t in corpus.all_trajectories(document) for s in t["steps"])


def test_each_branch_is_a_subagent_named_after_its_node() -> None:
    """The graph's own steps are its planner's and combine's calls; each planner call's `Send`s are its results, one a
    branch, in the order the branches started, each referencing the branch's trajectory: the research node's
    instructions, the subtopic it was asked, its calls, its answer the result's content."""
    document = _document()
    requests = _requests()
    planner_calls = [r for r in requests if "JSON list of the subtopics" in r["messages"][0]["content"]]
    research_calls = [r for r in requests if r["messages"][0]["content"].startswith("You research one subtopic")]
    main = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s["llm_call_count"] for s in main] == [1, 1, 1, 1]
    planned = [s for s in main if s.get("observation")]
    assert [json.loads(corpus.message_text(s["message"])) for s in planned] == [
        ["weather", "food", "getting around"], ["indoor sights", "rainy-day food"]]
    assert len(planner_calls) == 2 and len(research_calls) == 7  # the weather branch's three, one for each other
    subagents = _subagents(document)
    asked: list[str] = []
    for step in planned:
        for result in step["observation"]["results"]:
            (ref,) = result["subagent_trajectory_ref"]
            branch = subagents[ref["trajectory_id"]]
            assert branch["agent"]["name"] == "research"
            assert [s["source"] for s in branch["steps"][:2]] == ["system", "user"]
            assert corpus.message_text(branch["steps"][0]["message"]) == research_calls[0]["messages"][0]["content"]
            answer = [s for s in branch["steps"] if s["source"] == "agent"][-1]
            assert corpus.message_text(result["content"]) == corpus.message_text(answer["message"])
            asked.extend(_texts(branch["steps"], "user"))
    # Each branch asked its subtopic once, in its own trajectory; the turn-2 branches' question is turn 2's.
    assert [text.split("\n")[0] for text in asked] == [
        "Subtopic: weather", "Subtopic: food", "Subtopic: getting around",
        "Subtopic: indoor sights", "Subtopic: rainy-day food"]
    assert len(subagents) == 5


def test_the_weather_branch_holds_its_tool_loop() -> None:
    """Its parallel calls answered on their ids, get_forecast's raise flagged with the text the model was shown, its
    retry, its answer: in its own trajectory, not between the other branches' steps."""
    truth = capture_truth(CAPTURE)
    (weather,) = [sub for sub in _subagents(_document()).values()
                  if "Subtopic: weather" in _texts(sub["steps"], "user")[0]]
    parallel, retry, answer = [s for s in weather["steps"] if s["source"] == "agent"]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["get_forecast", "get_sunset"]
    failed, sunset = (results_by_call(parallel)[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert corpus.message_text(failed["content"]) == "the forecast service timed out"
    assert not sunset["extra"].get("is_error")
    assert [c["function_name"] for c in retry["tool_calls"]] == ["get_forecast"]
    (retried,) = results_by_call(retry).values()
    assert corpus.message_text(retried["content"]) == "Lisbon on Saturday: sunny, 27C"
    assert not answer.get("tool_calls") and corpus.message_text(answer["message"]).startswith("Saturday in Lisbon")


def test_each_question_of_the_thread_is_asked_once() -> None:
    """`combine` sends the thread's messages, then the findings: the findings are its question, the turn's question
    (which the planner was asked) is not asked again, though the node has a system prompt of its own."""
    document = _document()
    requests = _requests()
    combine_calls = [r for r in requests if r["messages"][0]["content"].startswith("You answer travellers")]
    findings = [r["messages"][-1]["content"] for r in combine_calls]
    assert [f.split("\n")[0] for f in findings] == ["Combine these findings into one answer:"] * 2
    turns = [requests[0]["messages"][-1]["content"], combine_calls[1]["messages"][-2]["content"]]
    assert _texts(document["steps"], "user") == [turns[0], findings[0], turns[1], findings[1]]
    assert _texts(document["steps"], "system") == [requests[0]["messages"][0]["content"],
                                                   combine_calls[0]["messages"][0]["content"]]


def test_the_corpus_counts_a_question_the_reduce_call_re_sends_as_the_planners() -> None:
    """The questions check (tests/captures/questions.py): the combine calls re-send all the planner calls were sent,
    then ask the findings; the turn's question there is the planner's asking, which one user step shows. Taking that
    step away is still a missing question."""
    log = corpus.load(CAPTURE).llm_log
    resent = [(a.seq, a.resent_from) for a in questions.asked_anew(log) if a.resent_from is not None]
    assert resent == [(6, 0), (10, 7)]
    document = copy.deepcopy(_document())
    steps = document["steps"]
    (second_turn,) = [s for s in steps if s["source"] == "user" and s["message"] == "And what if it rains on Saturday?"]
    steps.remove(second_turn)
    assert [p.split(":")[0] for p in questions.missing_questions(document, log)] == ["call 7"]


def test_a_tool_nodes_send_is_no_branch() -> None:
    """`create_agent` and the legacy ToolNode dispatch each tool call by a `Send` too: those runs are tools' runs in
    the agent's trajectory, not branches."""
    for capture in ("langgraph_openinference_supervisor", "langgraph_openinference_create-supervisor",
                    "deepagents_openinference"):
        pushed = [span for span in capture_spans(capture) if span.scope_name == OPENINFERENCE_SCOPE
                  and '"__pregel_push"' in str(span.attributes.get("metadata"))]
        assert pushed
        assert not [span.name for span in pushed
                    if langgraph_branches.is_branch(SpanReader(span), json.loads(span.attributes["metadata"]))]
    branches = [span for span in capture_spans(CAPTURE)
                if langgraph_branches.is_branch(SpanReader(span), json.loads(span.attributes.get("metadata", "{}")))]
    assert [span.name for span in branches] == ["research"] * 5
