"""MCP's own spans under the OTel MCP conventions (`trajectory/mappers/mcp_semconv.py`), on real captures.

mcp 2 traces each request itself (scope `mcp-python-sdk`): the client's `MCP send <method> [<tool>]` spans and the
server process's `<method> [<tool>]` spans under them, whichever framework runs the agent. Their keys
(`mcp.method.name`, `mcp.protocol.version`, `jsonrpc.request.id`) are read, so no session reports them as not
understood; connecting, listing and the client's side of a call are no step; a server's `tools/call` span is still
a GenAI tool execution, the same execution as the framework's tool span above it (`build._Context.same_execution`).
"""

from __future__ import annotations

from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.build import build_trajectory, map_one_span
from evalkit.trajectory.mappers import mcp_semconv, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import STATUS_ERROR, Span
from tests.captures import corpus

# The three agent frameworks' MCP captures: each client span under the framework's tool span, the server's under it.
FRAMEWORK_CAPTURES = ("strands_native_mcp", "google-adk_native_mcp", "openai-agents_openinference_mcp")
# The Claude Agent SDK's in-process server traced by mcp 2 too (no client span: the CLI is the client).
CAPTURES = (*FRAMEWORK_CAPTURES, "claude-agent-sdk_openlit")
SERVER, CLIENT = 2, 3  # OTLP SpanKind


def _document(name: str) -> dict[str, Any]:
    return capture_document(name, corpus.load(name).session_id)


def _mcp_spans(name: str) -> list[Span]:
    return [s for s in capture_spans(name) if mcp_semconv.METHOD in s.attributes]


def _span_ids_in(node: Any) -> set[str]:
    """Every span a document's steps, results and subagents name (`extra.span_id`, `extra.error_from_span`)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("span_id", "error_from_span") and isinstance(value, str):
                found.add(value)
            else:
                found |= _span_ids_in(value)
    elif isinstance(node, list):
        for value in node:
            found |= _span_ids_in(value)
    return found


def _is_protocol(span: Span) -> bool:
    return "gen_ai.operation.name" not in span.attributes


@pytest.mark.parametrize("name", CAPTURES)
def test_the_mcp_keys_are_read(name: str) -> None:
    mcp = _mcp_spans(name)
    assert mcp and {s.scope_name for s in mcp} == {"mcp-python-sdk"}
    keys = {key for span in mcp for key in span.attributes}
    assert {"mcp.method.name", "mcp.protocol.version", "jsonrpc.request.id"} <= keys
    document = _document(name)
    assert keys.isdisjoint(document["extra"]["unmapped_attributes"]), document["extra"]["unmapped_attributes"]
    assert mcp_semconv.NAME in document["extra"]["emitters"]


@pytest.mark.parametrize("name", CAPTURES)
def test_no_protocol_span_is_a_step(name: str) -> None:
    protocol = [s for s in _mcp_spans(name) if _is_protocol(s)]
    methods = {s.attributes[mcp_semconv.METHOD] for s in protocol}
    assert "tools/list" in methods and methods & {"initialize", "server/discover"}
    if name in FRAMEWORK_CAPTURES:  # the client's side of each call too
        assert "tools/call" in methods and {s.kind for s in protocol} == {SERVER, CLIENT}
    assert all(map_one_span(span) is None for span in protocol)
    assert _span_ids_in(_document(name)).isdisjoint(s.span_id for s in protocol)


@pytest.mark.parametrize("name", FRAMEWORK_CAPTURES)
def test_the_servers_tool_call_is_the_same_execution_as_the_frameworks(name: str) -> None:
    by_id = {s.span_id: s for s in capture_spans(name)}
    servers = [s for s in _mcp_spans(name) if not _is_protocol(s)]
    assert servers and all(s.kind == SERVER and s.attributes[mcp_semconv.METHOD] == "tools/call" for s in servers)
    document = _document(name)
    results = {r["extra"]["span_id"]: r for r in _results(document)}
    named = _span_ids_in(document)
    failed = 0
    for server in servers:
        tool = server.attributes["gen_ai.tool.name"]
        execution = map_one_span(server)  # mapped as before: a GenAI tool execution of the tool it names
        assert isinstance(execution, ToolExecution) and execution.emitter == otel_genai.NAME
        assert execution.name == tool
        client = by_id[server.parent_span_id]
        assert client.kind == CLIENT and client.name == f"MCP send tools/call {tool}"
        # No step or result of its own: the result is the framework's span's, the span holding the client's.
        assert server.span_id not in results and by_id[client.parent_span_id].span_id in results
        result = results[client.parent_span_id]
        if server.attributes.get("error.type") == "tool_error":  # an `isError` result: that call's result failed
            failed += 1
            assert server.status_code == STATUS_ERROR and result["extra"]["is_error"] is True
            # Where the framework's span did not say so (openai-agents' MCP tool), the server's span did.
            assert result["extra"].get("error_from_span", server.span_id) == server.span_id
        else:
            assert server.span_id not in named
    assert failed == 1


def _results(document: dict[str, Any]) -> list[dict[str, Any]]:
    steps = [*document["steps"], *(s for sub in document.get("subagent_trajectories") or () for s in sub["steps"])]
    return [r for step in steps for r in (step.get("observation") or {}).get("results") or ()]


def _span(name: str, kind: int, attributes: dict[str, Any], span_id: str = "0000000000000001") -> Span:
    return Span(trace_id="ab" * 16, span_id=span_id, parent_span_id="", name=name, kind=kind,
                start_time_unix_nano=1_000, end_time_unix_nano=2_000, status_code=STATUS_ERROR, status_message="",
                attributes=attributes, scope_name="any-mcp-instrumentation")


def test_a_failed_request_is_read_whole_and_no_step() -> None:
    # A client's tool call the server refused (a JSON-RPC error), with the transport keys the conventions name.
    client = _span("tools/call get_weather", CLIENT, {
        "mcp.method.name": "tools/call", "jsonrpc.request.id": "7", "gen_ai.tool.name": "get_weather",
        "error.type": "-32602", "rpc.response.status_code": "-32602", "mcp.session.id": "191c4850af6c49e0",
        "network.transport": "tcp", "network.protocol.name": "http", "server.address": "localhost",
        "server.port": 8000})
    assert map_one_span(client) is None
    built = build_trajectory([client])
    assert built.unmapped_attributes == [] and mcp_semconv.NAME in built.emitters


def test_a_frameworks_tool_span_carrying_the_keys_stays_the_frameworks() -> None:
    # The conventions let an MCP instrumentation add its keys to a framework's own tool span instead of a span of its
    # own: that span's tool and error are still its mapper's, and it maps as it did without them.
    framework = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                 "gen_ai.tool.call.id": "call_1", "error.type": "tool_error"}
    mcp_keys = {"mcp.method.name": "tools/call", "mcp.session.id": "191c4850af6c49e0", "jsonrpc.request.id": "7"}
    alone, merged = (map_one_span(_span("execute_tool get_weather", 1, attributes))
                     for attributes in (framework, {**framework, **mcp_keys}))
    assert isinstance(alone, ToolExecution) and isinstance(merged, ToolExecution)
    assert (merged.name, merged.call_id, merged.error, merged.emitter) == (alone.name, alone.call_id, alone.error,
                                                                            alone.emitter)
    # Nor are they taken as an MCP request's where the framework's span says no operation: it is no MCP span of its
    # own (INTERNAL), so what reads its tool and error is the framework's mapper, not this one.
    reader = SpanReader(_span("get_weather", 1, {**mcp_keys, "gen_ai.tool.name": "get_weather", "error.type": "x"}))
    assert mcp_semconv.map_span(reader, ()) is None
    assert reader.used == set(mcp_keys)
