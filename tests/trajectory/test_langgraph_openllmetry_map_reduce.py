"""A LangGraph map-reduce graph under OpenLLMetry (the `langgraph_openllmetry_map-reduce` capture).

The graph, scenario and scripted replies of `langgraph_openinference_map-reduce`, traced by OpenLLMetry's LangChain
instrumentation instead: `trip_researcher`'s `plan` node asks the model for subtopics, a conditional edge `Send`s each
to the `research` node (branches run at once, each its own conversation with the model, tools offered), `combine` asks
the model to combine the findings. A checkpointer thread over two turns, the second streamed. The weather branch calls
two tools in parallel, one raising a `ToolException` once (its text sent back), and calls it again.

Read before: the instrumentation records each branch as any node's run (an `execute_task research` span, a task no
operation was made of), so the branches' calls were the graph's own steps, interleaved in the order the calls started
(the weather branch's retry and answer after the other branches' answers, one system step for all three). Now each
branch is a subagent named after its node, by the rule OpenInference's record of the same run is read with
(`langgraph_branches`), from what OpenLLMetry records of LangGraph's metadata (`openllmetry_langgraph.branch`).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openllmetry, openllmetry_langgraph
from evalkit.trajectory.mappers.reader import SpanReader
from tests.captures import corpus, questions

CAPTURE = "langgraph_openllmetry_map-reduce"
SESSION = "lg-ll-map-reduce-1"
OPENINFERENCE_CAPTURE = ("langgraph_openinference_map-reduce", "lg-oi-map-reduce-1")
_PUSH_TRIGGER = "traceloop.association.properties.langgraph_triggers"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


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
    branch, each referencing the branch's trajectory: the research node's instructions, the subtopic it was asked, its
    calls, its answer the result's content."""
    document = _document()
    requests = [entry["request"] for entry in corpus.load(CAPTURE).llm_log]
    research_calls = [r for r in requests if r["messages"][0]["content"].startswith("You research one subtopic")]
    main = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s["llm_call_count"] for s in main] == [1, 1, 1, 1]
    planned = [s for s in main if s.get("observation")]
    assert len(planned) == 2
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
    # Each branch asked its subtopic once, in its own trajectory, in the order the planner's answer listed them.
    subtopics = [subtopic for step in planned for subtopic in json.loads(corpus.message_text(step["message"]))]
    assert subtopics == ["weather", "food", "getting around", "indoor sights", "rainy-day food"]
    assert [text.split("\n")[0] for text in asked] == [f"Subtopic: {subtopic}" for subtopic in subtopics]
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
    assert not sunset["extra"].get("is_error")
    assert [c["function_name"] for c in retry["tool_calls"]] == ["get_forecast"]
    (retried,) = results_by_call(retry).values()
    assert corpus.message_text(retried["content"]) == "Lisbon on Saturday: sunny, 27C"
    assert not answer.get("tool_calls") and corpus.message_text(answer["message"]).startswith("Saturday in Lisbon")


def test_the_streamed_turns_branches_count_their_tokens() -> None:
    """Turn 2 streamed every call: each branch's step has the tokens its streamed call reported, in its trajectory."""
    log = corpus.load(CAPTURE).llm_log
    streamed = {entry["response"]["text"]: entry["response"]["usage"] for entry in log
                if entry["stream"] and entry["request"]["messages"][0]["content"].startswith("You research")}
    assert len(streamed) == 2
    steps = [s for sub in _subagents(_document()).values() for s in sub["steps"]
             if s["source"] == "agent" and corpus.message_text(s["message"]) in streamed]
    assert {corpus.message_text(s["message"]): {"input_tokens": s["metrics"]["prompt_tokens"],
                                                "output_tokens": s["metrics"]["completion_tokens"]}
            for s in steps} == streamed


def _shape(trajectory: dict[str, Any], subagents: dict[str, dict[str, Any]]) -> list[Any]:
    """What a person reads of a trajectory, ids aside: each step's source, text, calls and tokens, each result's text,
    error flag and the branch it references (its agent's name and shape)."""
    shape: list[Any] = []
    for step in trajectory["steps"]:
        results = []
        for result in (step.get("observation") or {}).get("results") or ():
            refs = result.get("subagent_trajectory_ref") or ()
            branches = [(subagents[r["trajectory_id"]]["agent"]["name"],
                         _shape(subagents[r["trajectory_id"]], subagents)) for r in refs]
            results.append((corpus.message_text(result["content"]), bool((result.get("extra") or {}).get("is_error")),
                            branches))
        metrics = step.get("metrics") or {}
        shape.append((step["source"], corpus.message_text(step["message"]),
                      [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()],
                      metrics.get("prompt_tokens"), metrics.get("completion_tokens"), results))
    return shape


def test_the_trajectory_is_the_one_openinference_s_record_of_the_same_run_gives() -> None:
    """Two LangChain tracers, one graph, one script: the same steps, branches and results, whichever recorded it."""
    documents = [_document(), capture_document(*OPENINFERENCE_CAPTURE)]
    llmetry, inference = (_shape(d, _subagents(d)) for d in documents)
    assert llmetry == inference


def test_a_tool_nodes_send_is_no_branch() -> None:
    """`create_agent`'s ToolNode dispatches each tool call by a `Send` too, and Deep Agents' `task` tool runs its
    subagent inside it: OpenLLMetry records those runs as pushed `execute_task` spans of the `tools` node, no branch."""
    for capture in ("deepagents_openllmetry", "langchain_openllmetry", "langgraph_openllmetry_swarm",
                    "langgraph_openllmetry_interrupt", "langgraph_openllmetry_subgraph"):
        pushed = [span for span in capture_spans(capture) if span.name.startswith("execute_task")
                  and "__pregel_push" in list(span.attributes.get(_PUSH_TRIGGER) or ())]
        assert pushed
        assert [openllmetry_langgraph.branch(SpanReader(span), openllmetry.NAME) for span in pushed] == [None] * len(
            pushed)
    branches = [openllmetry_langgraph.branch(SpanReader(span), openllmetry.NAME) for span in capture_spans(CAPTURE)
                if span.name.startswith("execute_task")]
    assert [run.name for run in branches if run is not None] == ["research"] * 5
