"""OpenLIT's LangGraph and LangChain instrumentations (the `langgraph_openlit` capture's trace exports).

A prebuilt ReAct agent (`create_react_agent`, named `travel_assistant`), two turns of one thread, the second
streamed; its parallel tools, one raising once (ToolNode's error text sent to the model). What each span of
OpenLIT's is: `trajectory/mappers/openlit_langgraph.py`.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openlit, openlit_langgraph, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "langgraph_openlit"
SESSION = "lg-openlit-trip-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _mapped(scope: str, prefix: str) -> list[tuple[SpanReader, Operation | None]]:
    """The spans of one of OpenLIT's scopes whose name starts with `prefix`, each read by OpenLIT's mapper."""
    found = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == scope and span.name.startswith(prefix):
            reader = SpanReader(span)
            found.append((reader, openlit.map_span(reader, ())))
    assert found, (scope, prefix)
    return found


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE)) == []


def test_the_graph_is_the_agent_and_its_nodes_are_no_agents() -> None:
    """LangGraph's node spans (`invoke_agent agent`: create_react_agent's model node) and the LangChain handler's
    chain spans are no runs: one agent, named after the graph, and no subagent per model call."""
    runs = _mapped(openlit_langgraph.LANGGRAPH_SCOPE, "invoke_workflow travel_assistant")
    assert len(runs) == 3  # the invoked turn, and the streamed one wrapped twice
    for reader, run in runs:
        assert isinstance(run, AgentRun) and run.name == "travel_assistant"
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    nodes = _mapped(openlit_langgraph.LANGGRAPH_SCOPE, "invoke_agent ")
    chains = [*_mapped(openlit_langgraph.LANGCHAIN_SCOPE, "invoke_agent "),
              *_mapped(openlit_langgraph.LANGCHAIN_SCOPE, "invoke_workflow ")]
    assert len(nodes) == 5 and len(chains) == 6
    for reader, operation in (*nodes, *chains):
        assert operation is None, reader.span.name
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()

    document = _document()
    assert document["agent"]["name"] == "travel_assistant"
    assert not document.get("subagent_trajectories")
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    assert [s.get("llm_call_count") for s in document["steps"] if s["source"] == "agent"] == [1] * 5


def test_tool_runs_answer_their_calls_with_what_the_model_was_shown() -> None:
    """`execute_tool` spans: arguments and the ToolMessage as Python `str()`s, read as values; the call id the
    ToolMessage's; the raising tool's run id no call's."""
    truth = capture_truth(CAPTURE)
    for reader, execution in _mapped(openlit_langgraph.LANGCHAIN_SCOPE, "execute_tool "):
        assert isinstance(execution, ToolExecution)
        assert isinstance(execution.arguments, dict) and "input" not in execution.arguments
        if execution.error is None:
            assert execution.call_id is not None
            assert execution.result["content"] == truth.tool_results[execution.call_id]
        else:  # raised: no ToolMessage, and the span's `gen_ai.tool.call.id` is LangChain's run id
            assert execution.call_id is None and execution.result is None
            assert reader.span.attributes["gen_ai.tool.call.id"] not in truth.tool_results
        assert reader.unused() == set()

    document = _document()
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0]
    calls = [(c["tool_call_id"], c["function_name"], c["arguments"]) for s in document["steps"]
             for c in s.get("tool_calls") or ()]
    assert calls == [(c["id"], c["name"], c["arguments"]) for call in truth.calls for c in call.tool_calls]
    answered = {call_id: r["content"] for s in document["steps"] for call_id, r in results_by_call(s).items()}
    assert answered == {call_id: truth.tool_results[call_id] for call_id, _, _ in calls}


def test_the_raising_tool_shows_the_error_text_it_was_answered_with() -> None:
    """The conversion raised: its span has no output, and the error text ToolNode sent the model is only in the
    next call's input, with no call id, after the weather result re-sent with none either: the re-sent result is
    the weather call's, not the failed call's."""
    first = results_by_call(_document()["steps"][2])
    assert first["call_0_0"]["content"] == "light rain, 18°C"
    failed = first["call_0_1"]
    assert failed["content"] == capture_truth(CAPTURE).tool_results["call_0_1"]
    assert failed["content"].startswith("Error: TimeoutError('exchange-rate service timed out')")
    assert failed["extra"]["is_error"] is True and failed["extra"]["content_from"] == "input history"
    assert "is_error" not in first["call_0_0"].get("extra", {})


def test_answers_openlit_emptied_are_no_steps() -> None:
    """OpenLIT writes an answer made of tool calls, in a later call's input, as an assistant message with empty
    text: not a step of its own (a copied, empty one)."""
    calls: list[tuple[Span, LlmCall]] = []
    for reader, call in _mapped(openlit_langgraph.LANGCHAIN_SCOPE, "chat "):
        assert isinstance(call, LlmCall)
        calls.append((reader.span, call))
    span, second = calls[1]
    recorded = otel_genai.llm_call(SpanReader(span), ())
    assert [m.role for m in recorded.input_messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [m.role for m in second.input_messages] == ["system", "user", "tool", "tool"]
    assert not [s for s in _document()["steps"] if s.get("is_copied_context")]
