"""Google ADK with an MCP server's tools (`McpToolset` over stdio) beside a function tool, under ADK's own tracing (the
`google-adk_native_mcp` capture).

An MCP tool's `execute_tool` span is a function tool's, `gen_ai.tool.type` `McpTool`: ADK answers the model the whole
`CallToolResult` it got (`content`, `structuredContent`, `isError`, as LiteLlm sends it: JSON in the tool message), so
that is the result. An `isError` result ends the span ERROR with `error.type` `MCP_TOOL_ERROR`, which ADK also writes
as the status description; what went wrong is the result's text (`trajectory/mappers/google_adk.py`,
`_mcp_error_text`). mcp 2 traces each request itself: the client's `MCP send <method> [<tool>]` spans
(`mcp-python-sdk`, under the global provider) and, ADK sending the trace context in `_meta`, the server process's
`<method> [<tool>]` spans under them; a `tools/call` server span is an `execute_tool` of its own, the same execution
as ADK's span above it. Connecting (`initialize`, `tools/list`) happens inside the agent's run: no step either.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import google_adk
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "google-adk_native_mcp"
SESSION = "adk-mcp-travel-1"
MCP_SCOPE = "mcp-python-sdk"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _results() -> dict[str, dict[str, Any]]:
    steps = corpus.llm_steps(_document())
    return {call_id: result for step in steps for call_id, result in results_by_call(step).items()}


def _sent_result(call_id: str) -> dict[str, Any]:
    """The tool message the model was sent for a call, parsed (LiteLlm sends ADK's result as JSON)."""
    for entry in corpus.load(CAPTURE).llm_log:
        for message in entry["request"]["messages"]:
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                parsed: dict[str, Any] = json.loads(message["content"])
                return parsed
    raise LookupError(call_id)


def test_the_mcp_error_is_flagged_with_what_the_server_said() -> None:
    results = _results()
    failed = {call_id: result["extra"]["error"] for call_id, result in results.items()
              if result.get("extra", {}).get("is_error")}
    sent = _sent_result("call_0_0")
    assert sent["isError"] is True
    # The message the server wrote for the timed-out weather service, which the model read; ADK's type beside it.
    assert failed == {"call_0_0": {"status": "error", "type": "MCP_TOOL_ERROR",
                                   "message": sent["content"][0]["text"]}}
    assert failed["call_0_0"]["message"] == "Error executing tool get_weather: weather service timed out for Oslo"


def _failed_tool_span() -> Span:
    return next(s for s in capture_spans(CAPTURE)
                if s.scope_name == google_adk.SCOPE and s.attributes.get("error.type") == "MCP_TOOL_ERROR")


def _error_of(result: dict[str, Any] | None) -> dict[str, Any]:
    span = _failed_tool_span()
    attributes = {k: v for k, v in span.attributes.items() if k != "gen_ai.tool.call.result"}
    if result is not None:
        attributes["gen_ai.tool.call.result"] = json.dumps(result)
    tool = google_adk.map_span(SpanReader(replace(span, attributes=attributes)), ())
    assert isinstance(tool, ToolExecution) and tool.error is not None
    return tool.error.as_extra()


@pytest.mark.parametrize(("result", "message"), [
    # Several text blocks: the server's whole message.
    ({"content": [{"type": "text", "text": "timed out"}, {"type": "image", "data": "", "mimeType": "image/png"},
                  {"type": "text", "text": "retry in 5 s"}], "isError": True}, "timed out\nretry in 5 s"),
    # mcp 2's own key name, in a dump ADK did not make (ADK's check reads both spellings).
    ({"content": [{"type": "text", "text": "no weather station in Tromsø"}], "is_error": True},
     "no weather station in Tromsø"),
])
def test_an_mcp_error_result_gives_its_text_as_the_message(result: dict[str, Any], message: str) -> None:
    assert _error_of(result) == {"status": "error", "type": "MCP_TOOL_ERROR", "message": message}


@pytest.mark.parametrize("result", [
    None,  # content capture off: ADK records no result, only the error's type
    {"content": [{"type": "image", "data": "", "mimeType": "image/png"}], "isError": True},  # no text to read
])
def test_an_mcp_error_with_no_text_keeps_adks_type(result: dict[str, Any] | None) -> None:
    assert _error_of(result) == {"status": "error", "type": "MCP_TOOL_ERROR", "message": "MCP_TOOL_ERROR"}


def test_mcp_tools_are_ordinary_calls_with_what_the_model_was_sent() -> None:
    truth = capture_truth(CAPTURE)
    document = _document()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 5
    # No MCP protocol work (initialize, tools/list, the server's spans) as a step: only the system prompt and the two
    # questions are no LLM call's.
    assert [s["source"] for s in document["steps"] if not s.get("llm_call_count")] == ["system", "user", "user"]
    results = _results()
    # Each result what the model was sent: the MCP tools' whole CallToolResult, the function tool's `{"result": …}`.
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    assert json.loads(results["call_0_1"]["content"]) == _sent_result("call_0_1") == {
        "content": [{"type": "text", "text": "cloudy, 11°C"}], "structuredContent": {"result": "cloudy, 11°C"},
        "isError": False}
    assert [c["function_name"] for s in steps for c in s.get("tool_calls") or ()] == [
        "get_weather", "get_weather", "convert_currency", "get_weather", "find_flights"]


def test_the_trace_reaches_the_server_and_connecting_is_inside_the_run() -> None:
    spans = capture_spans(CAPTURE)
    by_id = {s.span_id: s for s in spans}
    mcp = [s for s in spans if s.scope_name == MCP_SCOPE]
    server_calls = [s for s in mcp if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert len(server_calls) == 4  # get_weather x3 in turn one, find_flights in turn two
    for server in server_calls:
        tool = server.attributes["gen_ai.tool.name"]
        client = by_id[server.parent_span_id]  # the client's span, from the `_meta` trace context ADK injected
        assert client.name == f"MCP send tools/call {tool}"
        assert by_id[client.parent_span_id].name == f"execute_tool {tool}"
    # Connecting and listing the tools: the client's spans under each turn's agent run, the server's under them.
    setup = [s for s in mcp if s.name.startswith("MCP send ") and s.attributes["mcp.method.name"] != "tools/call"]
    assert sorted(s.name for s in setup) == ["MCP send initialize", "MCP send tools/list", "MCP send tools/list"]
    assert {by_id[s.parent_span_id].name for s in setup} == {"invoke_agent travel_desk"}
    # The one server span no request's context reached (the `initialized` notification): a trace of its own, no
    # session id and no GenAI operation.
    (notified,) = [s for s in mcp if s.parent_span_id not in by_id]
    assert notified.name == "notifications/initialized" and not notified.parent_span_id
    assert not any(k.startswith("gen_ai.") for k in notified.attributes)
    assert notified.trace_id not in {s.trace_id for s in spans if s.scope_name == google_adk.SCOPE}
