"""An MCP server's span of a tool call whose client sent it no trace context: the framework's tool span it reports.

An MCP server traced under the OTel MCP conventions (mcp 2's own tracing, read by `mappers/mcp_semconv.py`) spans its
handling of each `tools/call` request (kind SERVER, `tools/call <tool>`) under the client's span of the request, the
trace context the client sends in `params._meta`: under the framework's tool span of the model's call, which the
builder finds it the same execution as (`build._Context.same_execution`). A client that sends none leaves the server's
span in a trace of the server's own. The Claude Agent SDK's in-process server (`create_sdk_mcp_server`) is called by
the Claude Code CLI, which nothing in the app traces, so mcp's spans of it land under OpenLIT's `create_agent` span
(the client connecting) for the client's whole life, beside the turns' traces, whose `execute_tool
mcp__<server>__<tool>` spans (from the SDK's hooks) hold the model's call id, arguments and result. The server's span
holds none of them (a server never sees the model's call; mcp records no arguments or result): made a step of its own,
it is each MCP call again, with an id made up and an empty result.

Such a span is the work of the tool span that was running its tool when the server handled it: of the session's tool
spans (no MCP span itself) whose time holds the server's, naming the same tool, the first not already reported by
another (a client sends parallel calls of one tool in order). The builder puts it under that span, as the client's
trace context would have (`build._SessionTree`). A session where no tool span holds it (the server traced alone) keeps
it a tool execution of its own.

A client may name an MCP tool to the model under a prefix of its own (Claude Code `mcp__<server>__<tool>`, CrewAI's
and LangChain's adapters `<server>_<tool>`); the server names it as it defines it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evalkit.trajectory.mappers import mcp_semconv
from evalkit.trajectory.operations import ToolExecution

SpanKey = tuple[str, str]


def names_tool(called: str, execution: ToolExecution) -> bool:
    """Whether `called`, a tool's name as the model called it, names the tool `execution` ran: the same name, or for
    an MCP server's span of the call, the server's name for the tool under a client's prefix."""
    tool = execution.name
    if not tool:
        return False
    return called == tool or (mcp_semconv.is_server_tool_call(execution.span) and called.endswith(f"_{tool}"))


def reported_executions(tools: Sequence[tuple[SpanKey, ToolExecution]],
                        under_tool: Callable[[SpanKey], bool]) -> dict[SpanKey, SpanKey]:
    """Each MCP server's span of a tool call under no tool span (`under_tool`), by (trace id, span id): the key of
    the tool span it reports. Only those some tool span holds."""
    servers = [(key, execution) for key, execution in tools
               if execution.call_id is None and mcp_semconv.is_server_tool_call(execution.span)]
    servers = [(key, execution) for key, execution in servers if not under_tool(key)]
    if not servers:
        return {}
    framework = sorted(((key, execution) for key, execution in tools
                        if execution.name and mcp_semconv.METHOD not in execution.span.attributes),
                       key=lambda item: item[1].span.start_time_unix_nano)
    reported: dict[SpanKey, SpanKey] = {}
    taken: set[SpanKey] = set()
    for key, server in sorted(servers, key=lambda item: item[1].span.start_time_unix_nano):
        span = server.span
        holder = next((tool_key for tool_key, tool in framework
                       if tool_key not in taken and tool.span.start_time_unix_nano <= span.start_time_unix_nano
                       and span.end_time_unix_nano <= tool.span.end_time_unix_nano
                       and names_tool(str(tool.name), server)), None)
        if holder is not None:
            reported[key] = holder
            taken.add(holder)
    return reported
