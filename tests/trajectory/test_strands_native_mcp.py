"""Strands Agents using an MCP server's tools (`MCPClient` over stdio) beside a local `@tool`, traced by Strands' own
spans (the `strands_native_mcp` capture).

Strands makes an MCP tool's `execute_tool` span as a local tool's: the result it records is the MCP result's content
blocks (`[{"text": …}]`), not the `structuredContent` / `isError` / `metadata` envelope its agent keeps (which only the
next call's `gen_ai.tool.message` history shows), and an `isError` result is `gen_ai.tool.status: error`. mcp 2 traces
each request itself: the client's `MCP send <method> [<tool>]` spans (`mcp-python-sdk`, under the global provider
Strands sets) and, the trace context sent in `_meta`, the server process's `<method> [<tool>]` spans under them; a
`tools/call` server span is an `execute_tool` of its own, the same execution as the Strands span above it. Connecting
(`server/discover`, `tools/list`) happens outside any agent span: traces of their own, with no session id.

What is Strands' own: the model is sent each tool's input schema as its registry normalizes it (`normalize_tool_spec`),
while the tool span records it as the tool holds it; an MCP server's schema has no property descriptions, so the model
was sent "Property <name>" for each (`trajectory/mappers/strands.py`, `_schema_as_sent`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "strands_native_mcp"
SESSION = "strands-mcp-bookshop-1"
MCP_SCOPE = "mcp-python-sdk"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _sent_tools() -> dict[str, dict[str, Any]]:
    """The tools the agent's first request sent its model (every request sent the same), by name."""
    tools = corpus.load(CAPTURE).llm_log[0]["request"]["tools"]
    return {tool["function"]["name"]: tool for tool in tools}


def test_each_tool_is_defined_as_the_model_was_sent_it() -> None:
    sent = _sent_tools()
    # The MCP tools' properties: the server gave no description, Strands' registry sent one.
    assert sent["find_book"]["function"]["parameters"]["properties"]["title"]["description"] == "Property title"
    definitions = {d["function"]["name"]: d for d in _document()["agent"]["tool_definitions"]}
    assert definitions == sent


def _tool_span(name: str) -> Span:
    return next(s for s in capture_spans(CAPTURE) if s.scope_name == strands.SCOPE and s.name == f"execute_tool {name}")


def _definition_of(span: Span, schema: dict[str, Any]) -> dict[str, Any] | None:
    changed = replace(span, attributes={**span.attributes, "gen_ai.tool.json_schema": json.dumps(schema)})
    tool = strands.map_span(SpanReader(changed), ())
    assert isinstance(tool, ToolExecution)
    return tool.definition


@pytest.mark.parametrize(("recorded", "sent"), [
    # An optional argument (pydantic's `anyOf` with null): typed by its composition, so no default type.
    ({"properties": {"isbn": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}},
     {"type": "object", "properties": {"isbn": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                                                "description": "Property isbn"}}, "required": []}),
    # A nested object normalized as a schema; a property that is no schema replaced; a `$ref` left as it is.
    ({"type": "object", "properties": {"address": {"type": "object", "properties": {"city": {}}},
                                       "notes": True, "book": {"$ref": "#/$defs/Book"}}},
     {"type": "object", "required": [], "properties": {
         "address": {"type": "object", "properties": {"city": {"type": "string", "description": "Property city"}},
                     "required": []},
         "notes": {"type": "string", "description": "Property notes"}, "book": {"$ref": "#/$defs/Book"}}}),
])
def test_a_recorded_schema_is_read_as_strands_normalizes_it(recorded: dict[str, Any], sent: dict[str, Any]) -> None:
    definition = _definition_of(_tool_span("stock_level"), recorded)
    assert definition is not None and definition["function"]["parameters"] == sent


def test_a_schema_strands_would_not_send_defines_nothing() -> None:
    """Nested deeper than the registry's limit (64), a tool's spec fails validation and is sent to no model."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    for _ in range(70):
        schema = {"type": "object", "properties": {"inner": schema}}
    assert _definition_of(_tool_span("stock_level"), schema) is None


def test_mcp_tools_are_ordinary_calls_with_the_text_the_model_was_sent() -> None:
    truth = capture_truth(CAPTURE)
    document = _document()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(truth.calls) == 6
    # No MCP protocol work as a step: every step but the system prompt and the two questions is an LLM call's.
    assert [s["source"] for s in document["steps"] if not s.get("llm_call_count")] == ["system", "user", "user"]
    results = {call_id: result for step in steps for call_id, result in results_by_call(step).items()}
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    # The server's isError result (the inventory timed out): its call flagged, the others not.
    failed = [call_id for call_id, result in results.items() if result.get("extra", {}).get("is_error")]
    assert failed == ["call_1_0"]
    assert results["call_1_0"]["content"] == "Error executing tool stock_level: inventory service timed out"


def test_the_trace_reaches_the_server_and_connecting_is_no_session() -> None:
    spans = capture_spans(CAPTURE)
    by_id = {s.span_id: s for s in spans}
    mcp = [s for s in spans if s.scope_name == MCP_SCOPE]
    calls = [s for s in mcp if s.attributes.get("mcp.method.name") == "tools/call"]
    server_calls = [s for s in calls if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert len(server_calls) == 6  # find_book x2, stock_level x3 in turn one, stock_level in turn two
    for server in server_calls:
        client = by_id[server.parent_span_id]  # the client's span, from the `_meta` trace context
        assert client.name == f"MCP send tools/call {server.attributes['gen_ai.tool.name']}"
        assert by_id[client.parent_span_id].name == f"execute_tool {server.attributes['gen_ai.tool.name']}"
    # Connecting: their own traces, no session id, no GenAI operation.
    connecting = [s for s in mcp if s.attributes.get("mcp.method.name") in ("server/discover", "tools/list")]
    assert len(connecting) == 4
    assert not any("session.id" in s.attributes or "gen_ai.operation.name" in s.attributes for s in connecting)
    assert {s.trace_id for s in connecting}.isdisjoint(s.trace_id for s in spans if s.scope_name == strands.SCOPE)
