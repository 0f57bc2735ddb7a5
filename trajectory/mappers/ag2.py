"""AG2 1.x's own tracing (`TelemetryMiddleware`, scope `opentelemetry.instrumentation.ag2`): GenAI, AG2's ways.

The middleware on an AG2 `Agent` writes `invoke_agent <agent>` per turn, `chat <model>` per LLM call
(OpenAI-style messages in `gen_ai.input.messages` / `gen_ai.output.messages`) and `execute_tool <tool>`
per tool (arguments, result, call id), read by the GenAI mapper. What is AG2's own:

- every span says what it is in `ag2.span.type` (`agent`, `llm`, `tool`, …) as well as in
  `gen_ai.operation.name`: bookkeeping;
- it subscribes to the turn's `UsageEvent`s and writes each as a `record_usage <kind>` span under the
  turn (`ag2.span.type` `usage`), the tokens in `gen_ai.usage.*` with a response model and no operation
  name. The agent sends one of kind `model_call` after every LLM call, with that call's usage: a second
  report of the `chat` span's tokens (AG2's own trace reader counts tokens from these spans and so never
  from the `chat` spans), not a call. Read as one, every call was a step twice and its tokens and cost
  counted twice. No operation for any kind: the others (a subtask's rollup, compaction, aggregation) are
  spend outside the conversation's calls, and the session list, which counts calls with an operation
  name, counts none of them either;
- a call's reasoning tokens are `gen_ai.usage.thinking_tokens`;
- `ag2.tool.call.result.truncated` says the tool span's result was cut at the middleware's
  `max_tool_result_chars` (the next call's input is cut the same way: the span records no more).

The scope looks like an OpenLLMetry instrumentation's (`opentelemetry.instrumentation.<library>`) but is
AG2's: `openllmetry` leaves it here.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "ag2"
SCOPE = "opentelemetry.instrumentation.ag2"  # ag2/_telemetry_consts.py `OTEL_INSTRUMENTING_MODULE`
SPAN_TYPE = "ag2.span.type"
USAGE_SPAN_TYPE = "usage"
_THINKING_TOKENS = "gen_ai.usage.thinking_tokens"
# A `record_usage` span's own keys beside the GenAI usage ones: the event's kind, its attribution label,
# the provider's total.
_USAGE_KEYS = ("ag2.usage.kind", "ag2.usage.label", "ag2.usage.total_tokens", "gen_ai.response.model",
               "gen_ai.provider.name")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    span_type = reader.text(SPAN_TYPE)
    reader.consume(SPAN_TYPE, "ag2.tool.call.result.truncated")
    if span_type == USAGE_SPAN_TYPE:
        reader.consume(*_USAGE_KEYS)
        reader.consume_prefix("gen_ai.usage.")
        return None
    thinking = reader.integer(_THINKING_TOKENS)
    reader.consume(_THINKING_TOKENS)
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, LlmCall) and thinking is not None and operation.usage.reasoning_tokens is None:
        operation.usage.reasoning_tokens = thinking
    return operation
