"""LangChain's Deep Agents under OpenLLMetry's LangChain instrumentation (the `deepagents_openllmetry` capture).

The run of `deepagents_openinference` (`create_deep_agent` on the Responses API, `write_todos`, the `task` subagent
with parallel tools one raising once, `write_file`, two turns the second streamed), traced by
opentelemetry-instrumentation-langchain 0.62.4. What its spans record their own way
(`trajectory/mappers/openllmetry_langchain.py`): each Responses function call block of a message also as a text part
holding the block's JSON, a system prompt of content blocks as several system instruction parts, a span per agent
middleware hook. `write_todos` and `task` return a LangGraph `Command(update=…)`, recorded as the tool's output
(`langgraph_handoffs.tool`, shared with OpenInference's reading). Recorded with the two ids the Responses API gives a
function call (the item's `fc_…`, the `call_id` `call_…`): the instrumentation names calls and results by the
`call_id`, the item id only in the restated block's JSON.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory import from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "deepagents_openllmetry"
SESSION = "deepagents-ll-1"
OPENINFERENCE_CAPTURE = "deepagents_openinference"  # the same scripted run, traced by OpenInference
OPENINFERENCE_SESSION = "deepagents-oi-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(step, call) for step in document["steps"] for call in step.get("tool_calls") or ()]


def _chat_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.name == "ChatOpenAI.chat"),
                  key=lambda span: span.start_time_unix_nano)


def _call_ids(seq: int) -> list[str]:
    """The call_ids (`call_…`) of the function calls the model answered call `seq` with; each call's item has an id of
    its own too (`fc_…`), as the Responses API gives them."""
    return [call["id"] for call in corpus.load(CAPTURE).llm_log[seq]["response"]["tool_calls"]]


def _llm_call(span: Span) -> LlmCall:
    call = openllmetry.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_a_function_call_block_restated_as_text_is_no_text_of_the_message() -> None:
    """The instrumentation writes each Responses `function_call` block of a message's content as a text part holding
    its JSON, beside the message's tool call: the answer is its tool calls alone, in the answer and in the history
    re-sent after it. The block holds the call's two ids, its item's `id` (`fc_…`) and its `call_id`: the call's."""
    truth = capture_truth(CAPTURE)
    spans = _chat_spans()
    assert [json.loads(span.attributes["gen_ai.output.messages"])[0]["parts"][0]["type"] for span in spans][:2] == [
        "text", "text"]  # as recorded: the block's JSON first
    first = json.loads(spans[0].attributes["gen_ai.output.messages"])[0]["parts"]
    block = json.loads(first[0]["content"])
    (model_call,) = corpus.load(CAPTURE).llm_log[0]["response"]["tool_calls"]
    assert (block["id"], block["call_id"]) == (model_call["item_id"], model_call["id"])
    assert first[1]["id"] == model_call["id"] != model_call["item_id"]  # the tool_call part: the call_id
    for span, expected in zip(spans, truth.calls, strict=True):
        (answer,) = _llm_call(span).output_messages
        assert answer.text == expected.text
        assert [(part.call_id, part.name) for part in answer.tool_calls] == [
            (call["id"], call["name"]) for call in expected.tool_calls]
    last_input = _llm_call(spans[-1]).input_messages
    assert [message.text for message in last_input if message.role == "assistant" and message.tool_calls] == [
        "", "", "", ""]  # write_todos, task, write_file, convert_currency: calls only
    assert [part.call_id for message in last_input for part in message.tool_calls] == [
        *_call_ids(0), *_call_ids(1), *_call_ids(5), *_call_ids(7)]


def test_the_system_prompt_of_content_blocks_is_one_system_step() -> None:
    """Deep Agents' system prompt goes out as one system message of two blocks (the caller's prompt, then
    TodoListMiddleware's `write_todos` section), recorded as two system instruction parts: one system step."""
    first_request = corpus.load(CAPTURE).llm_log[0]["request"]
    (system_message,) = [item for item in first_request["input"] if item.get("role") == "system"]
    blocks = [block["text"] for block in system_message["content"]]
    assert len(blocks) == 2
    assert len(json.loads(_chat_spans()[0].attributes["gen_ai.system_instructions"])) == 2  # as recorded
    document = _document()
    system_steps = [step for step in document["steps"] if step["source"] == "system"]
    assert [corpus.message_text(step["message"]) for step in system_steps] == ["\n".join(blocks)]


def test_a_tool_returning_a_command_is_its_tool_message() -> None:
    """The instrumentation records `write_todos`' and `task`'s output as the Command they return (`{"graph",
    "update", "resume", "goto"}`, its update's messages as LangChain's `dumpd` writes them): the result is the
    ToolMessage the update ends with, for the call it names, and no handoff."""
    spans = {span.attributes.get("gen_ai.tool.name"): span for span in capture_spans(CAPTURE)
             if span.attributes.get("gen_ai.tool.name") in ("write_todos", "task")}
    for name, (call_id,) in (("write_todos", _call_ids(0)), ("task", _call_ids(1))):
        reader = SpanReader(spans[name])
        assert '"goto"' in str(reader.span.attributes["traceloop.entity.output"])
        execution = openllmetry.map_span(reader, ())
        assert isinstance(execution, ToolExecution)
        assert isinstance(execution.result, dict) and execution.result["id"][-1] == "ToolMessage"
        assert execution.result["kwargs"]["tool_call_id"] == call_id
        assert execution.call_id == call_id
        assert execution.handoff_to is None


def test_the_todo_file_and_task_tools_answer_with_what_the_model_was_shown() -> None:
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


def _conversation(trajectory: dict[str, Any]) -> list[Any]:
    """What a person reads of a trajectory: each step's source, text, calls and results (by call, in call order),
    whether a result failed, and the subagent run under it, nested."""
    subagents = {sub["trajectory_id"]: sub for sub in trajectory.get("subagent_trajectories") or ()}
    steps: list[Any] = []
    for step in trajectory["steps"]:
        calls = step.get("tool_calls") or ()
        results = results_by_call(step)
        steps.append((step["source"], corpus.message_text(step.get("message")),
                      [(call["function_name"], call["arguments"]) for call in calls],
                      [(corpus.message_text(results[call["tool_call_id"]]["content"]),
                        bool(results[call["tool_call_id"]].get("extra", {}).get("is_error")),
                        [_conversation(subagents[ref["trajectory_id"]])
                         for ref in results[call["tool_call_id"]].get("subagent_trajectory_ref") or ()])
                       for call in calls]))
    return steps


def test_it_is_the_conversation_openinference_records_of_the_same_run() -> None:
    """The same scripted run under OpenInference reads the same, step for step, the main agent named alike: the graph
    was compiled unnamed, OpenInference names it no agent and OpenLLMetry records LangGraph's default name,
    `LangGraph`, no agent's either (the two tests below), so the service names it."""
    ours = _document()
    theirs = capture_document(OPENINFERENCE_CAPTURE, OPENINFERENCE_SESSION)
    assert _conversation(ours) == _conversation(theirs)
    assert ours["agent"]["name"] == theirs["agent"]["name"] == "travel-deep-agent"


def test_an_unnamed_graphs_run_names_no_agent() -> None:
    """OpenLLMetry names the `invoke_agent` span of a graph compiled without a name (the deep agent's: no `name=`)
    after LangGraph's default, `LangGraph`: its run names no agent. The subagent's graph, named by Deep Agents, keeps
    its name."""
    names: dict[str, set[str | None]] = {}
    for span in capture_spans(CAPTURE):
        if span.name.startswith("invoke_agent "):
            run = openllmetry.map_span(SpanReader(span), ())
            assert isinstance(run, AgentRun)
            names.setdefault(span.attributes["gen_ai.agent.name"], set()).add(run.name)
    assert names == {"LangGraph": {None}, "travel-researcher": {"travel-researcher"}}


def test_an_agent_name_the_sessions_spans_repeat_does_not_name_it() -> None:
    """The session's own spans (its traces, as the service groups them: not the `create_agent` traces) still carry
    the unnamed graph's `LangGraph` (on its workflow span too) and the subagent's name: neither names the session's
    agent, which its runs leave unnamed, so the service names it as under OpenInference."""
    spans = capture_spans(CAPTURE)
    traces = {span.trace_id for span in spans
              if span.attributes.get("traceloop.association.properties.session_id") == SESSION}
    session = [span for span in spans if span.trace_id in traces]
    assert {span.attributes.get("gen_ai.agent.name") for span in session} - {None} == {"LangGraph", "travel-researcher"}
    document = from_spans.trajectory_from_spans(session, session_id=SESSION).document()
    assert document["agent"]["name"] == session[0].resource_attributes["service.name"] == "travel-deep-agent"


def test_a_middleware_hook_span_is_bookkeeping_read() -> None:
    """Each agent middleware hook's `execute_task` span (its task record: the middleware, the hook, the status) makes
    no step and leaves nothing unread."""
    hooks = [span for span in capture_spans(CAPTURE)
             if "gen_ai.task.kind" in span.attributes and "traceloop.span.kind" not in span.attributes]
    assert {span.attributes["gen_ai.task.kind"] for span in hooks} >= {"TodoListMiddleware", "FilesystemMiddleware"}
    for span in hooks:
        reader = SpanReader(span)
        assert openllmetry.map_span(reader, ()) is None
        assert not any(key.startswith("gen_ai.task.") for key in reader.unused())
    assert not any(key.startswith("gen_ai.task.") for key in _document()["extra"]["unmapped_attributes"])
