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
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "google-adk"
SCOPE = "gcp.vertex.agent"
_MERGED = "(merged tools)"
_TRANSFER_TYPE = "TransferToAgentTool"


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("gcp.vertex.agent.event_id", "gcp.vertex.agent.invocation_id", "gen_ai.workflow.name")
    if reader.text("gen_ai.tool.name") == _MERGED:
        reader.consume_prefix("gen_ai.")
        return None
    operation = otel_genai.map_span(reader, logs)
    if isinstance(operation, ToolExecution) and reader.text("gen_ai.tool.type") == _TRANSFER_TYPE:
        target = operation.arguments.get("agent_name") if isinstance(operation.arguments, dict) else None
        if isinstance(target, str) and target:
            operation.handoff_to = target
    return operation
