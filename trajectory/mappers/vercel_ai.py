"""Vercel AI SDK (`ai` npm package, v4-v6 built-in telemetry and v7's LegacyOpenTelemetry): `ai.*` spans.

`ai.generateText` / `ai.streamText` (one per call: an agent run whose usage sums its steps)
-> `ai.generateText.doGenerate` / `ai.streamText.doStream` (one per LLM call) -> `ai.toolCall`.
v4 writes `args` and `result`, v5+ `input` and `output: {type, value}`; v4 usage is
promptTokens/completionTokens, v5+ inputTokens/outputTokens with cache details.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import vercel_ai_media
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import (
    openai_tool_definition,
    parse_arguments,
    parse_messages,
    render,
)
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "vercel-ai"
_CALL_SUFFIXES = (".doGenerate", ".doStream")
_RUNS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")


def detect(span: Span) -> bool:
    return "ai.operationId" in span.attributes or (
        span.name.startswith("ai.") and any(key.startswith("ai.") for key in span.attributes)
    )


def _operation(reader: SpanReader) -> str:
    return reader.text("ai.operationId") or reader.span.name.split(" ")[0]


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    operation = _operation(reader)
    reader.consume("operation.name", "resource.name", "ai.telemetry.functionId", "ai.operationId")
    reader.consume_prefix("ai.telemetry.metadata.", "ai.settings.", "ai.request.headers.")
    if operation == "ai.toolCall":
        return _tool(reader)
    if operation.endswith(_CALL_SUFFIXES):
        return _llm_call(reader)
    if operation in _RUNS:
        return _run(reader)
    # Embeddings and reranking are not conversation steps; their usage is not chat usage.
    reader.consume_prefix("ai.usage.", "gen_ai.usage.")
    return None


def _usage(reader: SpanReader, provider: str | None) -> Any:
    no_cache = reader.integer("ai.usage.inputTokenDetails.noCacheTokens")
    cache_read = reader.integer("ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens")
    cache_write = reader.integer("ai.usage.inputTokenDetails.cacheWriteTokens")
    input_tokens = reader.integer(
        "ai.usage.inputTokens",
        "ai.usage.promptTokens",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
    )
    includes: bool | None = None
    if no_cache is not None:
        # v6 splits the prompt: the parts add up to the whole.
        input_tokens = no_cache + (cache_read or 0) + (cache_write or 0)
        includes = True
    elif provider and provider.startswith("anthropic"):
        # Before v6 the Anthropic provider reported input_tokens as Anthropic does: without cache tokens.
        includes = False
    reader.consume("ai.usage.totalTokens", "ai.usage.outputTokenDetails.textTokens")
    return normalised_usage(
        input_tokens,
        reader.integer(
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ),
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=reader.integer("ai.usage.reasoningTokens", "ai.usage.outputTokenDetails.reasoningTokens"),
        input_includes_cache=includes,
    )


def _llm_call(reader: SpanReader) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=NAME)
    call.provider = reader.text("ai.model.provider", "gen_ai.system")
    call.model = reader.text(
        "ai.response.model", "gen_ai.response.model", "ai.model.id", "gen_ai.request.model"
    )
    call.request_model = reader.text("ai.model.id", "gen_ai.request.model")
    # Roles come lower-cased, and system messages' plain strings as text, from parse_messages; an image in a message
    # and a tool's result made of content (`toModelOutput`) as media parts (vercel_ai_media).
    call.input_messages = vercel_ai_media.prompt_messages(reader.get("ai.prompt.messages"), reader.memo)
    output = Message("assistant")
    reasoning = reader.text("ai.response.reasoning")
    if reasoning:
        output.parts.append(Part("reasoning", text=reasoning))
    text = reader.text("ai.response.text")
    if text is None:
        decoded = reader.get("ai.response.object")
        text = render(decoded) if decoded is not None else None
    if text:
        output.parts.append(Part("text", text=text))
    for raw in parse_json(reader.get("ai.response.toolCalls")) or []:
        if isinstance(raw, dict):
            output.parts.append(
                Part(
                    "tool_call",
                    call_id=raw.get("toolCallId"),
                    name=raw.get("toolName"),
                    arguments=parse_arguments(raw.get("args", raw.get("input"))),
                )
            )
    call.output_messages = [output]
    call.usage = _usage(reader, call.provider)
    for raw_tool in reader.get("ai.prompt.tools") or []:
        definition = openai_tool_definition(raw_tool)
        if definition is not None:
            call.tool_definitions.append(definition)
    reader.consume(
        "ai.prompt.toolChoice", "ai.prompt.format", "ai.response.msToFirstChunk", "ai.response.msToFinish"
    )
    reader.consume("ai.response.avgCompletionTokensPerSecond", "ai.response.avgOutputTokensPerSecond")
    # A streamed call's timing events restate the msToFirstChunk / msToFinish / avgOutputTokensPerSecond
    # attributes (@ai-sdk/otel's LegacyOpenTelemetry.onStepEnd; streamObject's step sets the first as
    # `ai.stream.msToFirstChunk`).
    reader.read_events("ai.stream.firstChunk", "ai.stream.finish")
    reader.consume("ai.stream.msToFirstChunk")
    reader.consume(
        "ai.response.timestamp", "ai.response.providerMetadata", "ai.response.id", "gen_ai.response.id"
    )
    finish = reader.text("ai.response.finishReason")
    reasons = reader.get("gen_ai.response.finish_reasons")
    call.finish_reasons = [finish] if finish else [str(r) for r in reasons or []]
    request = {key: value for key, value in reader.prefixed("gen_ai.request.").items() if key != "model"}
    if request:
        call.extra["request"] = request
    call.error = span_error(reader)
    return call


def _as_sent(raw: Any) -> Any:
    """A tool's result as the model was shown it.

    The SDK writes the result with `JSON.stringify`, and its providers send a JSON result to the
    model the same way: compact. The recorded text is kept as it is rather than decoded and written
    again by Python (`{"a": 1}` where the model saw `{"a":1}`).
    """
    result = parse_json(raw)
    if isinstance(result, dict) and set(result) <= {"type", "value"} and "value" in result:
        value = result["value"]  # v5+ {type: "text" | "json", value}
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(result, dict | list) and isinstance(raw, str):
        return raw
    return result


def _tool(reader: SpanReader) -> ToolExecution:
    result = _as_sent(reader.get("ai.toolCall.result", "ai.toolCall.output"))
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=reader.text("ai.toolCall.name"),
        call_id=reader.text("ai.toolCall.id"),
        arguments=parse_arguments(reader.get("ai.toolCall.args", "ai.toolCall.input")),
        result=result,
        error=span_error(reader),
    )


def _run(reader: SpanReader) -> AgentRun:
    prompt = parse_json(reader.get("ai.prompt"))
    system: list[str] = []
    input_text = None
    if isinstance(prompt, dict):
        # `system` is the call's instructions as given (AI SDK 7's `Instructions`): a string, or, the way a
        # provider option such as Anthropic's `cacheControl` is set on them, a system message
        # `{role: "system", content, providerOptions}` or a list of them.
        given = prompt.get("system")
        for entry in given if isinstance(given, list) else [given]:
            content = entry.get("content") if isinstance(entry, dict) else entry
            if isinstance(content, str) and content:
                system.append(content)
        if prompt.get("prompt") is not None:
            input_text = render(prompt["prompt"])
        elif isinstance(prompt.get("messages"), list):
            users = [m for m in parse_messages(prompt["messages"]) if m.role == "user"]
            input_text = users[-1].text if users else None
    output_text = reader.text("ai.response.text")
    # The run's usage is the sum of its doGenerate calls, counted there.
    reader.consume_prefix("ai.usage.", "gen_ai.usage.", "ai.response.", "ai.model.", "ai.prompt")
    return AgentRun(
        span=reader.span,
        emitter=NAME,
        name=reader.text("ai.telemetry.functionId", "resource.name"),
        input_text=input_text,
        output_text=output_text,
        system_instructions=system,
        error=span_error(reader),
    )
