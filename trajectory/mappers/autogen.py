"""AutoGen's own tracing (autogen-core's `_telemetry`, scope `autogen-core`): the GenAI conventions, AutoGen's ways.

AgentChat writes `create_agent <name>`, `invoke_agent <name>` (one per `run`) and `execute_tool <name>`
spans, read by the GenAI mapper. It records no LLM call (its model clients are traced by an
instrumentation of the provider's SDK, `opentelemetry-instrumentation-openai-v2` for instance), and its
tool spans name the tool and the call id only: arguments and result are found on the calls (the model's
tool call, the next call's input). What is AutoGen's own: `gen_ai.system` is "autogen" on every span,
the framework, not the model's provider. (Its span helpers record a failure themselves inside
`start_as_current_span`, which records it again: a rule shared with other frameworks, in `errors`.)
"""

from __future__ import annotations

from collections.abc import Sequence

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
    return operation
