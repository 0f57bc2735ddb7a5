"""OpenLLMetry's LlamaIndex instrumentation, read from its capture (`llamaindex_openllmetry`).

A FunctionAgent over two tools, two turns (two traces) of one session; each LLM call an `openai.chat` span of the
openai instrumentation, everything else a `<class>.workflow` / `<class>.task` span of the LlamaIndex one
(`trajectory/mappers/openllmetry_llamaindex.py`): the agent's `call_tool` step names the tool and records
LlamaIndex's ToolCallResult (call id, ToolOutput with `is_error`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "llamaindex_openllmetry"
SESSION = "li-ll-trip-1"
SCOPE = "opentelemetry.instrumentation.llamaindex"


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _tool_steps() -> list[Span]:
    return [span for span in _spans() if span.scope_name == SCOPE and "tool.name" in span.attributes]


def test_the_call_tool_step_is_the_tools_execution() -> None:
    """Its call id and result from the step's ToolCallResult, read whole; the tool function's own task is no step."""
    executions = []
    for span in _tool_steps():
        reader = SpanReader(span)
        execution = openllmetry.map_span(reader, [])
        assert isinstance(execution, ToolExecution), span.name
        assert reader.unused() == set(), span.name
        executions.append(execution)
    assert [(e.call_id, e.name, e.arguments) for e in executions] == [
        ("call_0_0", "get_weather", {"city": "Oslo"}),
        ("call_0_1", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}),
        ("call_1_0", "get_exchange_rate", {"base": "EUR", "quote": "NOK"}),
        ("call_3_0", "get_weather", {"city": "Bergen"}),
    ]
    assert [e.result["is_error"] for e in executions] == [False, True, False, False]  # LlamaIndex's ToolOutput
    functions = [span for span in _spans() if span.name == "FunctionTool.task"]
    assert len(functions) == 3  # the raising call's was never ended, so never exported
    assert all(openllmetry.map_span(SpanReader(span), []) is None for span in functions)


def test_each_result_is_its_step_and_the_raised_tool_is_flagged() -> None:
    """Before, no span was a tool's execution: every result came from the next call's input history, and the
    exchange-rate call that raised was not flagged."""
    steps = {span.span_id: span for span in _tool_steps()}
    results = [result for step in _document()["steps"] for result in (step.get("observation") or {}).get("results")
               or ()]
    assert [r["source_call_id"] for r in results] == ["call_0_0", "call_0_1", "call_1_0", "call_3_0"]
    assert all(r["extra"]["span_id"] in steps for r in results)
    failed = [r for r in results if r["extra"].get("is_error")]
    assert [(r["source_call_id"], r["content"], r["extra"]["error"]) for r in failed] == [
        ("call_0_1", "the rate service timed out for EUR/NOK; try again",
         {"status": "error", "from": "llama_index.ToolOutput"})]


def test_the_agent_is_named_by_its_run() -> None:
    """The `FunctionAgent.workflow` span is the agent's run, named by its AgentOutput's `current_agent_name` (before:
    the service's name, `travel-agent`, the Traceloop app name)."""
    first, streamed = [span for span in _spans() if span.name == "FunctionAgent.workflow"]
    reader = SpanReader(first)
    run = openllmetry.map_span(reader, [])
    assert isinstance(run, AgentRun)
    assert (run.name, run.output_text) == ("travel_agent", "Oslo is rainy at 9°C, and 1 EUR buys 11.52 NOK.")
    assert reader.unused() == set()
    # The streamed turn's run records no output (no `traceloop.entity.output`): no agent's run of its own, its
    # steps the session agent's all the same.
    assert "traceloop.entity.output" not in streamed.attributes
    assert openllmetry.map_span(SpanReader(streamed), []) is None
    assert first.resource_attributes["service.name"] == "travel-agent"
    assert _document()["agent"]["name"] == "travel_agent"


def test_a_multi_agent_workflow_is_no_one_agents_run() -> None:
    """An AgentWorkflow's output names the agent that answered last, not the one it started with: no agent run."""
    span = next(span for span in _spans() if span.name == "FunctionAgent.workflow")
    assert openllmetry.map_span(SpanReader(replace(span, name="AgentWorkflow.workflow")), []) is None
    plain = replace(span, attributes={**span.attributes, "traceloop.entity.output": '{"result": "done"}'})
    assert openllmetry.map_span(SpanReader(plain), []) is None  # a workflow whose result is no agent's output


def test_the_session_is_the_conversation_that_happened() -> None:
    """Both turns one session, each question once though turn 2 re-sends turn 1, the streamed turn's tokens."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    users = [step["message"] for step in document["steps"] if step["source"] == "user"]
    assert users == ["What's the weather in Oslo, and how many NOK is one EUR?", "And the weather in Bergen?"]
    assert len({step["extra"]["trace_id"] for step in document["steps"] if step.get("llm_call_count") == 1}) == 2
