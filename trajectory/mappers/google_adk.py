"""Google ADK's own tracing (scope `gcp.vertex.agent`): the GenAI semantic conventions, and ADK's ways.

ADK 2.x writes `invoke_workflow` (the run of an app: no agent of its own), `invoke_agent <name>`,
`generate_content <model>` and `execute_tool <name>` spans in the GenAI conventions, read by the
GenAI mapper; message content only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
(`SPAN_ONLY` puts it on the spans). What is ADK's own:

- parallel tool calls answered in one event add an `execute_tool (merged)` span, tool name
  `(merged tools)`, whose call id is the event's: the calls are its siblings, it is none itself;
- `transfer_to_agent` (tool type `TransferToAgentTool`) hands the conversation to the agent named
  in its arguments: a handoff, the receiving `invoke_agent` span its sibling;
- `gcp.vertex.agent.event_id` / `invocation_id` are ADK's bookkeeping ids.

openinference-instrumentation-google-adk (scope `openinference.instrumentation.google_adk`) replaces
ADK's tracers: `invocation [<app>]` (CHAIN, ADK's session id as `session.id`), `agent_run [<name>]`
(AGENT), `call_llm` (LLM) and ADK's `execute_tool` spans made OpenInference TOOL spans. The
OpenInference mapper reads them; ADK still writes its own attributes on them (`gen_ai.*`,
`gcp.vertex.agent.*`), so the same ADK ways are read here (`openinference_tool`): the `(merged)` span,
no TOOL kind of its own, is no tool; `transfer_to_agent` is a handoff; and a tool's `output.value`
is the `FunctionResponse` ADK sent the model, whose `response` is the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "google-adk"
SCOPE = "gcp.vertex.agent"
OPENINFERENCE_SCOPE = "openinference.instrumentation.google_adk"
_MERGED = "(merged tools)"
_TRANSFER_TYPE = "TransferToAgentTool"


def detect(span: Span) -> bool:
    # The OpenInference instrumentation's spans are the OpenInference mapper's, but for the one it
    # gives no kind: ADK's `execute_tool (merged)`, made by its tracer with ADK's attributes alone.
    return span.scope_name == SCOPE or (
        span.scope_name == OPENINFERENCE_SCOPE and "openinference.span.kind" not in span.attributes
    )


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("gcp.vertex.agent.event_id", "gcp.vertex.agent.invocation_id", "gen_ai.workflow.name")
    if reader.span.scope_name == OPENINFERENCE_SCOPE:  # the `(merged)` span, made by the instrumentation's tracer
        consume_openinference(reader)
        reader.consume("user.id")  # OpenInference's context attributes, on every span of its tracer
    if reader.text("gen_ai.tool.name") == _MERGED:
        reader.consume_prefix("gen_ai.")
        return None
    operation = otel_genai.map_span(reader, logs)
    if isinstance(operation, ToolExecution):
        _transfer(operation, reader)
    return operation


def _transfer(execution: ToolExecution, reader: SpanReader) -> None:
    """`transfer_to_agent` hands the conversation to the agent its arguments name. With ADK's content capture off
    its span records no arguments: the agent ADK runs next, the first run after it ("")."""
    if reader.text("gen_ai.tool.type") == _TRANSFER_TYPE:
        target = execution.arguments.get("agent_name") if isinstance(execution.arguments, dict) else None
        execution.handoff_to = target if isinstance(target, str) and target else ""


def consume_openinference(reader: SpanReader) -> None:
    """ADK's own attributes on an OpenInference span: its bookkeeping ids and restatements of what the
    OpenInference attributes say (`llm_request` / `llm_response` / `tool_call_args` / `tool_response`,
    the session id), the agent's description (`agent_run`), which no step has a place for, and ADK 2.13's
    workflow name (its `invoke_workflow` span, a CHAIN of the instrumentation's)."""
    reader.consume_prefix("gcp.vertex.agent.")
    reader.consume("gen_ai.agent.description", "gen_ai.workflow.name")


def openinference_tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """An OpenInference TOOL span of ADK's. Its `output.value` is the `FunctionResponse` ADK made of
    the tool's return and sent the model (`responses[0].model_dump_json(exclude_none=True)`,
    `_TraceToolCall`): `{"id", "name", "response"}`; the model was shown `response`."""
    result = execution.result
    if isinstance(result, dict) and "response" in result and set(result) <= {"id", "name", "response"}:
        execution.result = result["response"]
    _transfer(execution, reader)
    return execution
