"""Vercel AI SDK 7's GenAI-conventions integration (`@ai-sdk/otel`'s `OpenTelemetry`, not `LegacyOpenTelemetry`).

`registerTelemetry(new OpenTelemetry())` writes the GenAI conventions, which `otel_genai` reads: per generateText /
streamText an `invoke_agent <model>` span -> `step <n>` (`gen_ai.operation.name` `agent_step`, the SDK's own
operation) -> `chat <model>` (one LLM call: `gen_ai.input.messages`, `gen_ai.output.messages` with `reasoning`
parts, usage) and `execute_tool <name>` beside it. What is the SDK's own:

- its supplemental attributes (`OpenTelemetry({usage, runtimeContext, providerMetadata, headers, toolChoice})`, all
  off by default) are `ai.*` keys: `ai.usage.outputTokenDetails.reasoningTokens` is the only record of how many
  output tokens were reasoning (the integration writes no `gen_ai.usage.reasoning.output_tokens`), and
  `ai.usage.inputTokenDetails.noCacheTokens` says the input tokens count the cached ones (AI SDK 6+ usage);
  `ai.settings.context.*` is the runtime context it was told to include (the session id among it, read by the
  builder);
- a tool's result is `JSON.stringify(output)`, and its providers send the model an object result stringified the
  same way: compact JSON, kept as recorded rather than decoded and written again with Python's spacing;
- a step span restates its call's usage, and the run span the whole run's output and summed usage: no operation of
  their own beyond the run.

A generateText's spans hold no `ai.operationId`: `vercel_ai` (the `ai.*` spans) never claims them.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "vercel-ai-otel-genai"
_STEP_OPERATION = "agent_step"
# On every execute_tool span the SDK runs (no GenAI convention names it): with the `ai.*` supplemental keys, what
# tells this integration's spans from other GenAI emitters'.
_TOOL_DURATION = "gen_ai.execute_tool.duration"
# The integration's own tracer (`trace.getTracer("gen_ai")`, unless given one): what tells its chat, step and run
# spans without the supplemental keys, as Langfuse's integration (`@langfuse/vercel-ai-sdk`) writes them, from other
# GenAI emitters' (tests/captures/vercel-ai_langfuse).
_TRACER = "gen_ai"
_REASONING_TOKENS = "ai.usage.outputTokenDetails.reasoningTokens"
_NO_CACHE_TOKENS = "ai.usage.inputTokenDetails.noCacheTokens"
# The call's timing (the span's own start and end say how long it took), the provider's response metadata (ids and
# service tier), request headers, the tool choice: bookkeeping, no step's content.
_BOOKKEEPING = (
    _TOOL_DURATION, "gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk",
    "gen_ai.client.operation.time_per_output_chunk", "ai.response.providerMetadata", "ai.prompt.toolChoice",
    "server.address", "server.port",
)
_BOOKKEEPING_PREFIXES = ("ai.usage.", "ai.settings.context.", "ai.request.headers.")
# What a run span restates of its calls: their output as one message, the last finish reason, the provider.
_RUN_RESTATED = ("gen_ai.output.messages", "gen_ai.response.finish_reasons", "gen_ai.provider.name")


def detect(span: Span) -> bool:
    attributes = span.attributes
    return (
        "gen_ai.operation.name" in attributes
        and "ai.operationId" not in attributes
        and (span.scope_name == _TRACER or _TOOL_DURATION in attributes
             or any(key.startswith("ai.") for key in attributes))
    )


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    if reader.text("gen_ai.operation.name") == _STEP_OPERATION:
        reader.consume("gen_ai.operation.name")
        reader.consume_prefix(*_BOOKKEEPING_PREFIXES)
        reader.consume(*_BOOKKEEPING)
        return None
    operation = otel_genai.map_span(reader, logs)
    if isinstance(operation, LlmCall):
        _read_usage(reader, operation)
    elif isinstance(operation, ToolExecution):
        raw = reader.attributes.get("gen_ai.tool.call.result")
        if isinstance(raw, str) and isinstance(operation.result, dict | list):
            operation.result = raw
    elif isinstance(operation, AgentRun):
        reader.consume(*_RUN_RESTATED)
    reader.consume_prefix(*_BOOKKEEPING_PREFIXES)
    reader.consume(*_BOOKKEEPING)
    if operation is not None:
        operation.emitter = NAME
    return operation


def _read_usage(reader: SpanReader, call: LlmCall) -> None:
    """The call's usage with the supplemental breakdown (`usage: true`): its reasoning tokens, and, where the
    uncached input tokens are given, the input tokens known to count the cached ones."""
    if _NO_CACHE_TOKENS in reader.attributes:
        call.usage = otel_genai.read_usage(reader, input_includes_cache=True)
    if call.usage.reasoning_tokens is None:
        call.usage.reasoning_tokens = reader.integer(_REASONING_TOKENS)
