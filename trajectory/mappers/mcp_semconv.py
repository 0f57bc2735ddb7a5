"""The OpenTelemetry MCP semantic conventions' spans (`mcp.method.name`): MCP's own requests, no step of their own.

An MCP instrumentation traces each JSON-RPC message: the client's span of each request or notification it sends
(kind CLIENT) and, the trace context sent in `params._meta`, the server's span of handling it under it (kind SERVER),
whatever framework runs the agent. The MCP Python SDK does so itself since mcp 2 (scope `mcp-python-sdk`: client spans
`MCP send <method> [<tool>]`, server spans `<method> [<tool>]`). Their keys are the conventions': `mcp.method.name`
(required), `mcp.protocol.version`, `mcp.session.id`, `mcp.resource.uri`, `jsonrpc.request.id`, a failed request's
`rpc.response.status_code`, the transport's `network.*`, `server.*`, `client.*`.

- connecting, listing and notifying (`initialize`, `server/discover`, `tools/list`, `notifications/…`) is protocol
  bookkeeping: no step, and so is the client's span of a tool call, under the framework's span of that execution;
- a server's `tools/call` span carries `gen_ai.operation.name` `execute_tool` and `gen_ai.tool.name` (the conventions
  make it a GenAI tool span), an `isError` result `error.type` `tool_error`: the GenAI mapper reads it as a tool
  execution, and the builder finds it the same execution as the framework's tool span above it
  (`build._Context.same_execution`): its failure flags that call's result, it adds no step.

Here the conventions' keys are read, so that a session using MCP does not report them as not understood, and nothing
is mapped: what makes a step of an MCP span is left to the mapper that reads its GenAI keys, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "mcp-semconv"
METHOD = "mcp.method.name"
# What the conventions record of the request itself, on the client's and the server's span: nothing a step holds.
PROTOCOL_KEYS = frozenset({
    METHOD,
    "mcp.protocol.version",
    "mcp.session.id",
    "mcp.resource.uri",
    "jsonrpc.request.id",
    "jsonrpc.protocol.version",
    "rpc.response.status_code",
    "network.protocol.name",
    "network.protocol.version",
    "network.transport",
    "server.address",
    "server.port",
    "client.address",
    "client.port",
})
# On a request that is no tool execution (no `gen_ai.operation.name`), what it named and how it failed are that
# request's too. Read only on the MCP instrumentation's own spans (CLIENT, SERVER): an instrumentation may instead add
# its keys to a framework's tool span (the conventions allow it), whose error and tool are that framework mapper's.
_REQUEST_KEYS = frozenset({"error.type", "gen_ai.tool.name", "gen_ai.prompt.name"})
_SERVER, _CLIENT = 2, 3  # OTLP SpanKind
_OWN_KINDS = (_SERVER, _CLIENT)


def detect(span: Span) -> bool:
    # The one key the conventions require on every MCP span: a single lookup, whatever the scope.
    return METHOD in span.attributes


def is_server_tool_call(span: Span) -> bool:
    """Whether the span is a server's handling of a `tools/call` request (the tool run for a client)."""
    return span.kind == _SERVER and span.attributes.get(METHOD) == "tools/call"


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    attributes = reader.attributes
    reader.used.update(PROTOCOL_KEYS.intersection(attributes))
    if "gen_ai.operation.name" not in attributes and reader.span.kind in _OWN_KINDS:
        reader.used.update(_REQUEST_KEYS.intersection(attributes))
    return None
