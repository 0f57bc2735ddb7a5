"""LangChain's Deep Agents under OpenInference (the `deepagents_openinference` capture).

`create_deep_agent` (model `openai:gpt-4o`, Deep Agents' default Responses API path; a checkpointer thread over two
turns, the second streamed) plans with `write_todos`, delegates to its `travel-researcher` subagent with `task`,
writes its notes with `write_file` (the virtual filesystem in the graph's state), answers. The subagent runs inside
the `task` tool on a fresh context (the task's description its one user message), calls two tools in parallel, one
raising once (a `@wrap_tool_call` middleware sends the model its error text), and its last answer is the task's
result.

`write_todos` and `task` return a LangGraph `Command(update=…)`, which OpenInference's tracer records as the tool's
output; the model is shown the ToolMessage the update ends with (`trajectory/mappers/langgraph_openinference.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from tests.captures import corpus

CAPTURE = "deepagents_openinference"
SESSION = "deepagents-oi-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(step, call) for step in document["steps"] for call in step.get("tool_calls") or ()]


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_a_tool_returning_a_command_is_its_tool_message() -> None:
    """The tracer records `write_todos`' and `task`'s output as the Command they return (`{"graph", "update",
    "resume", "goto"}`, the todos or the subagent's state beside the message): the result is the ToolMessage the
    update ends with, for the call it names, and no handoff (no `__handoff_destination`)."""
    spans = {span.name: span for span in capture_spans(CAPTURE) if span.name in ("write_todos", "task")}
    assert set(spans) == {"write_todos", "task"}
    # Each the call's `call_id` (the model's `call_…`; its Responses item's own id is `fc_6801…`).
    for name, call_id in (("write_todos", "call_Dp4todos0001"), ("task", "call_Dp4task00001")):
        reader = SpanReader(spans[name])
        assert '"goto"' in str(reader.span.attributes["output.value"])
        execution = openinference.map_span(reader, ())
        assert isinstance(execution, ToolExecution)
        assert isinstance(execution.result, dict) and execution.result["type"] == "tool"
        assert execution.result["data"]["tool_call_id"] == call_id
        assert execution.call_id == call_id
        assert execution.handoff_to is None


def test_the_todo_file_and_task_tools_answer_with_what_the_model_was_shown() -> None:
    """Every main-agent tool call's result is what the model's next call was shown: the todo list's confirmation,
    the subagent's answer, the file written, the conversion."""
    document = _document()
    truth = capture_truth(CAPTURE)
    calls = _calls(document)
    assert [call["function_name"] for _, call in calls] == ["write_todos", "task", "write_file", "convert_currency"]
    for step, call in calls:
        result = results_by_call(step)[call["tool_call_id"]]
        assert corpus.message_text(result["content"]) == truth.tool_results[call["tool_call_id"]]
        assert not result.get("extra", {}).get("is_error")
    (todos,) = results_by_call(calls[0][0]).values()
    assert corpus.message_text(todos["content"]).startswith("Updated todo list to [")


def test_the_main_agent_asks_each_question_once() -> None:
    """Both turns are the main agent's steps; turn two re-sends turn one (and its answer), which is no step again."""
    document = _document()
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "agent", "user",
                                                         "agent", "agent"]
    asked = [entry["request"]["input"][-1]["content"] for entry in corpus.load(CAPTURE).llm_log
             if entry["request"]["input"][-1].get("role") == "user" and entry["seq"] in (0, 7)]
    assert [corpus.message_text(s["message"]) for s in document["steps"] if s["source"] == "user"] == asked
    assert not any(s.get("is_copied_context") for t in corpus.all_trajectories(document) for s in t["steps"])


def test_the_task_call_runs_the_subagent_whose_answer_is_its_result() -> None:
    """The `task` call's result is the subagent's last answer and references its trajectory: the task's description
    its user step under its own instructions, its calls, its answer."""
    document = _document()
    ((step, call),) = [(s, c) for s, c in _calls(document) if c["function_name"] == "task"]
    result = results_by_call(step)[call["tool_call_id"]]
    (ref,) = result["subagent_trajectory_ref"]
    (subagent,) = document["subagent_trajectories"]
    assert subagent["trajectory_id"] == ref["trajectory_id"]
    assert subagent["agent"]["name"] == call["arguments"]["subagent_type"] == "travel-researcher"
    assert [s["source"] for s in subagent["steps"]] == ["system", "user", "agent", "agent", "agent"]
    assert corpus.message_text(subagent["steps"][1]["message"]) == call["arguments"]["description"]
    assert corpus.message_text(subagent["steps"][-1]["message"]) == corpus.message_text(result["content"])


def test_the_raising_tool_is_flagged_with_the_error_text_the_model_was_shown() -> None:
    """search_hotels raised (its TOOL span errored, no output); the middleware sent the model its error text, read
    from the next call's input. get_weather, beside it, and the retry are no failures."""
    truth = capture_truth(CAPTURE)
    (subagent,) = _document()["subagent_trajectories"]
    parallel, retry, _answer = [s for s in subagent["steps"] if s["source"] == "agent"]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["search_hotels", "get_weather"]
    results = results_by_call(parallel)
    failed, weather = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["extra"]["is_error"] is True
    assert corpus.message_text(failed["content"]) == truth.tool_results[parallel["tool_calls"][0]["tool_call_id"]]
    assert not weather["extra"].get("is_error")
    (retried,) = results_by_call(retry).values()
    assert not retried["extra"].get("is_error")
