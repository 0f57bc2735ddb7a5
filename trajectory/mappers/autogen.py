"""AutoGen's own tracing (autogen-core's `_telemetry`, scope `autogen-core`): the GenAI conventions, AutoGen's ways.

AgentChat writes `create_agent <name>`, `invoke_agent <name>` (one per `run`) and `execute_tool <name>`
spans, read by the GenAI mapper. It records no LLM call (its model clients are traced by an
instrumentation of the provider's SDK, `opentelemetry-instrumentation-openai-v2` for instance), and its
tool spans name the tool and the call id only: arguments and result are found on the calls (the model's
tool call, the next call's input). What is AutoGen's own:

- `gen_ai.system` is "autogen" on every span: the framework, not the model's provider;
- its span helpers record a failure themselves (`record_exception`) inside `start_as_current_span`,
  which records the same exception again as it leaves: the second `exception` event is no second error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "autogen"
SCOPE = "autogen-core"


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("gen_ai.system")
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if operation.error is not None and len(operation.error.exceptions) > 1:
        operation.error.exceptions = _once_each(operation.error.exceptions)
    return operation


def _once_each(exceptions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exceptions, a repeat of the one before it (same type and message) left out: it is the SDK's record."""
    kept: list[dict[str, Any]] = []
    for exception in exceptions:
        if not kept or _identity(kept[-1]) != _identity(exception):
            kept.append(exception)
    return kept


def _identity(exception: dict[str, Any]) -> tuple[Any, Any]:
    return exception.get("type"), exception.get("message")
