"""Pydantic AI (and Logfire): OTel GenAI spans plus their own extras.

Root `invoke_agent` spans carry `gen_ai.aggregated_usage.*` (the sum of the run's
calls; never counted again), `pydantic_ai.all_messages`, `final_result`; chat spans
carry `gen_ai.usage.details.*`, `model_request_parameters`, `pydantic_ai.cache.*` and
Logfire's `logfire.*`. Thinking parts are `{"type": "thinking"}`; tool results come back
in `role: "user"` messages (instrumentation version 5) or `role: "tool"` (version 6).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.messages import prompt_text
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "pydantic-ai"
_EXTRAS = (
    "gen_ai.aggregated_usage.",
    "pydantic_ai.",
    "logfire.",
    "gen_ai.usage.details.",
    "model_request_parameters",
    "gen_ai.agent.call.id",
)


def detect(span: Span) -> bool:
    if span.scope_name in ("pydantic-ai", "pydantic_ai") or span.scope_name.startswith("logfire"):
        return True
    return any(key.startswith(_EXTRAS) for key in span.attributes) and otel_genai.detect(span)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    operation = otel_genai.map_span(reader, logs)
    if operation is not None:
        operation.emitter = NAME
    if isinstance(operation, ToolExecution) and isinstance(operation.result, dict | list):
        # pydantic-ai records a tool's non-str return as `tool_return_ta.dump_json(...)` (compact JSON,
        # capabilities/instrumentation.py), the text its chat adapters show the model
        # (`model_response_str()`); decoded and re-rendered, it would gain spaces the model never saw.
        recorded = reader.attributes.get("gen_ai.tool.call.result")
        if isinstance(recorded, str):
            operation.result = recorded
    # Aggregates and Logfire bookkeeping: read on purpose and not used.
    reader.consume_prefix(
        "gen_ai.aggregated_usage.", "logfire.", "pydantic_ai.cache.", "gen_ai.usage.details."
    )
    reader.consume("model_request_parameters", "gen_ai.agent.call.id", "agent_name", "model_name")
    if isinstance(operation, AgentRun):
        final = reader.get("final_result")
        if final is not None:
            operation.output_text = final if isinstance(final, str) else str(parse_json(final))
        operation.model = operation.model or reader.text("model_name")
        # The run's whole conversation, what it was asked included: a call's span records its messages
        # only once the model answers, so when the first call raised (a provider's 500, a refused
        # connection) this is the one place the prompt is.
        if operation.input_text is None:
            conversation = reader.get("pydantic_ai.all_messages")
            operation.input_text = None if conversation is None else prompt_text(conversation)
        reader.consume("pydantic_ai.all_messages")
    return operation
