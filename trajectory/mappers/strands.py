"""Strands Agents' own tracing (scope `strands.telemetry.tracer`): OTel GenAI plus its own ways.

With its default conventions the messages are span events (`gen_ai.user.message`,
`gen_ai.choice`, …) whose content is Bedrock Converse blocks (`text`, `toolUse`, `toolResult`),
which `otel_genai` and `messages` read. What is Strands' own: a tool span's arguments are the
content of its `gen_ai.tool.message` event and its result the `gen_ai.choice` event's message
(result blocks, `[{"text": …}]`); `gen_ai.tool.status` says whether the tool failed. With
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` the current attributes carry all of it.
Its `execute_event_loop_cycle` spans restate the cycle's messages: no operation.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import ErrorInfo, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "strands"
SCOPE = "strands.telemetry.tracer"
# "error" on a tool span whose tool failed; the session list reads it too (trajectory/tables.py).
TOOL_STATUS = "gen_ai.tool.status"
# Bookkeeping: when the event loop saw the span start and end, its cycle ids, time to first token.
_BOOKKEEPING = ("gen_ai.event.start_time", "gen_ai.event.end_time", "gen_ai.server.time_to_first_token",
                "event_loop.cycle_id", "event_loop.parent_cycle_id", "gen_ai.tool.json_schema")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def _tool_from_events(reader: SpanReader, tool: ToolExecution) -> None:
    for event in reader.span.events:
        if event.name == "gen_ai.tool.message":
            reader.read_events(event.name)
            if tool.arguments is None:
                tool.arguments = parse_arguments(event.attributes.get("content"))
            tool.call_id = tool.call_id or _text(event.attributes.get("id"))
        elif event.name == "gen_ai.choice":
            reader.read_events(event.name)
            if tool.result is None:
                tool.result = parse_json(event.attributes.get("message"))


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    operation = otel_genai.map_span(reader, logs)
    reader.consume(*_BOOKKEEPING)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, ToolExecution):
        _tool_from_events(reader, operation)
        if reader.text(TOOL_STATUS) == "error" and operation.error is None:
            operation.error = ErrorInfo(status_message="gen_ai.tool.status: error")
    return operation
