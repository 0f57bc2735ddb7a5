"""Langfuse SDK spans (`langfuse.observation.*`, `langfuse.trace.*`).

Generations carry input/output as JSON (usually OpenAI-style messages), the model, a free-form
`usage_details` object and `cost_details` in USD. Langfuse's `input` usage key counts only
uncached prompt tokens (cache reads are their own keys), so cache keys are added back; its `output` key
leaves out the reasoning tokens (`output_reasoning`: Langfuse's usage keys are exclusive, `total` their
sum, as its LangChain CallbackHandler writes them), so they are added back too. The
`langfuse.openai` client instead sends the OpenAI response's own usage object (a real capture:
tests/captures/langfuse-sdk_openai): `prompt_tokens` counting cached tokens too, and the cache and
reasoning counts nested in `prompt_tokens_details` / `completion_tokens_details` (Responses API:
`input_tokens_details` / `output_tokens_details`).
The SDK (v3+) names the trace's session and user `session.id` and `user.id`; `langfuse.session.id`
and `langfuse.user.id` are what Langfuse reads from other OTel emitters.
Observations without the Langfuse type but with GenAI attributes go to the OTel GenAI mapper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from evalkit.trajectory.mappers import langfuse_langchain, otel_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import (
    openai_tool_definition,
    parse_arguments,
    parse_messages,
)
from evalkit.trajectory.mappers.reader import SpanReader, as_decimal, as_int, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution, Usage
from evalkit.trajectory.span import LogRecord, Span

NAME = "langfuse"
_INPUT_KEYS = ("input", "prompt_tokens", "input_tokens", "promptTokens")
_OUTPUT_KEYS = ("output", "completion_tokens", "output_tokens", "completionTokens")
_CACHE_READ_KEYS = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "cached_tokens")
_CACHE_WRITE_KEYS = ("cache_creation_input_tokens", "input_cache_creation", "input_cache_write")
_REASONING_KEYS = ("output_reasoning_tokens", "reasoning_tokens", "output_reasoning")
_OWN_REASONING_KEYS = ("output_reasoning", "output_reasoning_tokens")  # not within Langfuse's own `output`
# OpenAI's usage object: its prompt count includes the cached tokens, which are nested.
_OPENAI_INPUT_KEYS = ("prompt_tokens", "promptTokens")
_INPUT_DETAILS = ("prompt_tokens_details", "input_tokens_details")
_OUTPUT_DETAILS = ("completion_tokens_details", "output_tokens_details")


def detect(span: Span) -> bool:
    return span.scope_name.startswith("langfuse") or any(
        key.startswith("langfuse.") for key in span.attributes
    )


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    kind = (reader.text("langfuse.observation.type") or "").lower()
    reader.consume_prefix(
        "langfuse.trace.", "langfuse.observation.metadata.", "langfuse.internal.", "langfuse.experiment."
    )
    reader.consume(
        "langfuse.environment",
        "langfuse.release",
        "langfuse.version",
        "langfuse.session.id",
        "langfuse.user.id",
        "session.id",
        "user.id",
    )
    reader.consume("langfuse.observation.level", "langfuse.observation.status_message")
    if kind == "generation" or (not kind and reader.has("langfuse.observation.model.name")):
        return _generation(reader, logs)
    if kind == "tool":
        return _tool(reader)
    if kind == "agent":
        return _agent(reader)
    if kind in ("chain", "span"):
        # A LangChain chain run (a graph's node, a runnable) as Langfuse's CallbackHandler records it, or the
        # application's own span around its agent (`start_as_current_observation(as_type="span")`): no step, its
        # input and output re-recorded by the generations and tools under it.
        reader.consume("langfuse.observation.input", "langfuse.observation.output")
    operation = otel_genai.map_span(reader, logs) if otel_genai.detect(reader.span) else None
    if operation is not None:
        operation.emitter = NAME
    return operation


def _first(details: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        if key in details:
            value = as_int(details[key])
            if value is not None:
                return value
    return None


def _nested(details: Mapping[str, Any], parents: Sequence[str], key: str) -> int | None:
    for parent in parents:
        inner = details.get(parent)
        if isinstance(inner, Mapping) and key in inner:
            return as_int(inner[key])
    return None


def _usage(details: Mapping[str, Any]) -> Usage:
    """Langfuse's own usage keys, or the OpenAI usage object the `langfuse.openai` client sends."""
    nested_cache = _nested(details, _INPUT_DETAILS, "cached_tokens")
    openai_shaped = nested_cache is not None or (
        "input" not in details and any(key in details for key in _OPENAI_INPUT_KEYS))
    if "input" in details:
        includes_cache: bool | None = False  # Langfuse's own key: uncached tokens only
    elif openai_shaped:
        includes_cache = True
    else:
        includes_cache = None  # e.g. Anthropic's input_tokens (uncached) or OpenAI Responses' (all)
    cache_read = _first(details, _CACHE_READ_KEYS)
    reasoning = _first(details, _REASONING_KEYS)
    output = _first(details, _OUTPUT_KEYS)
    if output is not None and "output" in details:
        output += _first(details, _OWN_REASONING_KEYS) or 0
    return normalised_usage(
        _first(details, _INPUT_KEYS),
        output,
        cache_read=cache_read if cache_read is not None else nested_cache,
        cache_write=_first(details, _CACHE_WRITE_KEYS),
        reasoning=reasoning if reasoning is not None else _nested(details, _OUTPUT_DETAILS, "reasoning_tokens"),
        input_includes_cache=includes_cache,
    )


def _generation(reader: SpanReader, logs: Sequence[LogRecord]) -> LlmCall:
    if otel_genai.detect(reader.span):
        call = otel_genai.llm_call(reader, logs, emitter=NAME)
    else:
        call = LlmCall(span=reader.span, emitter=NAME)
    input_text = reader.get("langfuse.observation.input")
    raw_input = parse_json(input_text)
    if not call.input_messages and raw_input is not None:
        raw_input, offered = langfuse_langchain.split_offered_tools(raw_input)
        call.tool_definitions.extend(offered)
        raw_input = langfuse_langchain.responses_blocks(raw_input, input_text)
        call.input_messages = parse_messages(raw_input, memo=reader.memo)
        if isinstance(raw_input, Mapping):
            for tool in raw_input.get("tools") or ():
                definition = openai_tool_definition(tool)
                if definition is not None:
                    call.tool_definitions.append(definition)
    output_text = reader.get("langfuse.observation.output")
    raw_output = parse_json(output_text)
    if not call.output_messages and raw_output is not None:
        raw_output = langfuse_langchain.responses_blocks(raw_output, output_text)
        call.output_messages = parse_messages(raw_output, "assistant", reader.memo)
    call.model = reader.text("langfuse.observation.model.name") or call.model
    parameters = parse_json(reader.get("langfuse.observation.model.parameters"))
    if isinstance(parameters, Mapping) and parameters:  # the CallbackHandler writes `{}` for a model given none
        call.extra["request"] = dict(parameters)
        effort = parameters.get("reasoning_effort")
        if isinstance(effort, str):
            call.reasoning_effort = effort
    details = parse_json(reader.get("langfuse.observation.usage_details"))
    if isinstance(details, Mapping):
        call.usage = _usage(details)
    costs = parse_json(reader.get("langfuse.observation.cost_details"))
    if isinstance(costs, Mapping):
        total = as_decimal(costs.get("total"))
        if total is None:
            parts = [as_decimal(value) for value in costs.values()]
            total = sum((part for part in parts if part is not None), Decimal(0)) if any(parts) else None
        call.reported_cost = total
    reader.consume(
        "langfuse.observation.completion_start_time",
        "langfuse.observation.prompt.name",
        "langfuse.observation.prompt.version",
    )
    call.error = call.error or span_error(reader)
    return call


def _tool(reader: SpanReader) -> ToolExecution:
    arguments = parse_arguments(reader.get("langfuse.observation.input"))
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=reader.text("gen_ai.tool.name") or reader.span.name,
        call_id=reader.text("gen_ai.tool.call.id") or langfuse_langchain.tool_call_id(reader),
        arguments=arguments,
        result=parse_json(reader.get("langfuse.observation.output")),
        error=span_error(reader),
    )


def _agent(reader: SpanReader) -> AgentRun:
    agent_input = parse_json(reader.get("langfuse.observation.input"))
    agent_output = parse_json(reader.get("langfuse.observation.output"))
    return AgentRun(
        span=reader.span,
        emitter=NAME,
        name=reader.text("gen_ai.agent.name") or reader.span.name,
        input_text=langfuse_langchain.run_text(agent_input),
        output_text=langfuse_langchain.run_text(agent_output),
        error=span_error(reader),
    )
