"""OpenLIT's Claude Agent SDK instrumentation (the `claude-agent-sdk_openlit` capture's trace exports).

Its spans are made from the SDK's messages and hooks (`trajectory/mappers/openlit_claude_agent_sdk.py`): a tool's
result is `str()` of what the hook was given, for an MCP tool the Python repr of its content blocks, read back
into the text the model was shown; a failed tool's result is the error the CLI sent the model; the turn's and the
subagent's spans are runs whose summed usage and bookkeeping are read, not counted again. The in-process MCP
server's own `tools/call` spans (mcp 2's, in the `create_agent` trace: the CLI between sends them no trace context)
are the runs of OpenLIT's `execute_tool` spans of their calls (`trajectory/mcp_server_calls.py`), no steps of their own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "claude-agent-sdk_openlit"
SESSION = "2b7e4d19-5c83-4a6f-9e10-8d3c7a25f4b6"
SCOPE = "openlit.instrumentation.claude_agent_sdk"
# The in-process MCP server's span of the failed `get_weather` call (mcp 2's `tools/call get_weather`, `tool_error`),
# in the `create_agent` trace; OpenLIT's `execute_tool mcp__weather__get_weather` span of that call is toolu_0_0's.
SERVER_FAILURE = "987580a184f399a1"


def _shown() -> dict[str, str]:
    """Each tool call's result as the model was shown it (the fake LLM's log)."""
    return corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log).tool_results


def _session_spans() -> list[Span]:
    """The spans of the traces that name the session, as the service puts them in it (the `create_agent` trace, which
    holds the in-process MCP server's spans, names none)."""
    spans = capture_spans(CAPTURE)
    traces = {s.trace_id for s in spans if s.attributes.get("gen_ai.conversation.id") == SESSION}
    return [s for s in spans if s.trace_id in traces]


def _executions() -> dict[str, ToolExecution]:
    found = {}
    for span in capture_spans(CAPTURE):
        if span.scope_name == SCOPE and span.name.startswith("execute_tool "):
            execution = openlit.map_span(SpanReader(span), ())
            assert isinstance(execution, ToolExecution) and execution.call_id is not None
            found[execution.call_id] = execution
    return found


def test_tool_results_are_the_text_the_model_was_shown_not_a_repr_of_content_blocks() -> None:
    shown = _shown()
    executions = _executions()
    assert len(executions) == 5
    for call_id, execution in executions.items():
        assert execution.result == shown[call_id], call_id
    # The `Agent` call's too: the subagent's report in the CLI's hand-back wrapper, as the main agent read it.
    assert executions["toolu_3_0"].result.startswith("[Subagent hand-back]")


def test_a_failed_tool_result_is_the_error_the_cli_sent_the_model() -> None:
    failed = _executions()["toolu_0_0"]
    assert failed.error is not None
    assert failed.result == "weather service timed out for Porto" == _shown()["toolu_0_0"]


def test_a_calls_input_holds_the_results_text() -> None:
    inputs = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == SCOPE and span.name.startswith("chat "):
            call = openlit.map_span(SpanReader(span), ())
            assert isinstance(call, LlmCall)
            inputs.extend((p.call_id, p.text) for m in call.input_messages for p in m.tool_results)
    shown = _shown()
    # Of results yielded as several messages OpenLIT keeps the last's: toolu_0_0's failure is in no call's input.
    assert [call_id for call_id, _ in inputs] == ["toolu_0_1", "toolu_1_0", "toolu_3_0"]
    assert all(text == shown[call_id] for call_id, text in inputs)


def test_the_session_has_each_result_on_its_call_and_the_runs_read() -> None:
    result = trajectory_from_spans(_session_spans(), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    # The turns' and the subagent's summed usage, final text, turns and durations are read, not left unmapped.
    assert [key for key in document["extra"]["unmapped_attributes"] if key.startswith("gen_ai.")] == []
    shown = _shown()
    results = {r["source_call_id"]: r for t in corpus.all_trajectories(document) for s in t["steps"]
               for r in (s.get("observation") or {}).get("results") or ()}
    assert {call_id: corpus.message_text(r["content"]) for call_id, r in results.items()} == shown
    assert results["toolu_0_0"]["extra"]["is_error"] is True
    # The forecaster is a subagent of the Agent call, named after the call's description (all its span says).
    (subagent,) = document["subagent_trajectories"]
    assert results["toolu_3_0"]["subagent_trajectory_ref"][0]["trajectory_id"] == subagent["trajectory_id"]
    assert subagent["agent"]["name"] == "Porto beach forecast"


def _results(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for t in corpus.all_trajectories(document) for s in t["steps"]
            for r in (s.get("observation") or {}).get("results") or ()]


def test_the_mcp_servers_spans_of_the_calls_are_no_steps_of_their_own() -> None:
    # Every span of the capture, the `create_agent` trace with the server's `tools/call` spans too (as where an app puts
    # its session id on every span): each of those is the run of OpenLIT's `execute_tool` span of the same call.
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    calls = [c["tool_call_id"] for t in corpus.all_trajectories(document) for s in t["steps"]
             for c in s.get("tool_calls") or ()]
    assert sorted(calls) == sorted(_shown())
    assert {r["extra"]["emitter"] for r in _results(document)} == {"openlit"}


def test_the_mcp_servers_failure_flags_the_call_it_ran() -> None:
    # Were OpenLIT's span of the failed call silent about it, the server's span of that call (its time inside that
    # span's, the same tool) says so: on toolu_0_0's result, not on the other get_weather call's.
    spans = [replace(span, attributes={k: v for k, v in span.attributes.items() if k != "error.type"},
                     status_code=0, status_message="")
             if span.attributes.get("gen_ai.tool.call.id") == "toolu_0_0" else span
             for span in capture_spans(CAPTURE)]
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    results = {r["source_call_id"]: r for r in _results(document)}
    assert results["toolu_0_0"]["extra"]["is_error"] is True
    assert results["toolu_0_0"]["extra"]["error_from_span"] == SERVER_FAILURE
    assert [call_id for call_id, r in results.items() if r["extra"].get("is_error")] == ["toolu_0_0"]


def test_the_mcp_servers_spans_traced_alone_are_its_tool_runs() -> None:
    # No tool span of the session holds them (the `create_agent` trace alone): what the server ran is all there is.
    spans = [span for span in capture_spans(CAPTURE) if span.scope_name == "mcp-python-sdk"
             or span.attributes.get("gen_ai.operation.name") == "create_agent"]
    document = trajectory_from_spans(spans).document()
    ran = [c["function_name"] for s in document["steps"] for c in s.get("tool_calls") or ()]
    assert ran == ["get_weather", "get_forecast", "get_weather", "get_forecast"]
