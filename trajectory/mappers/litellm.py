"""LiteLLM's own OpenTelemetry callback (`litellm.callbacks = ["otel"]`, the SDK's `OpenTelemetry` logger).

Each call is a `litellm_request` span (named `chat <model>` with the latest conventions, or the
call's `generation_name`) in the GenAI conventions, read by the GenAI mapper, and, with message
content on, a `raw_gen_ai_request` child holding the provider's raw request and response as Python
reprs (`llm.openai.messages`, `llm.anthropic.content`, …): the same call again, not a step. What is
LiteLLM's own (1.110):

- `gen_ai.operation.name` is LiteLLM's call type when it is not "completion": `acompletion`,
  `aresponses`, `anthropic_messages`, …;
- the answer's tool calls are not in `gen_ai.output.messages` (its parts are empty for them) but
  flat, `gen_ai.completion.<i>.function_call.{name,arguments}`, without their ids. The provider's
  response on the `raw_gen_ai_request` child has them, and the next call re-sends that answer with
  them (an OpenAI `tool_calls` list beside the parts): `litellm_call_ids.py` gives them to the
  answer, so that the re-sent answer is recognised as the one produced;
- the tools offered are `llm.request.functions.<i>.{name,description,parameters}`;
- the cost LiteLLM computed is `gen_ai.cost.total_cost` (with its breakdown beside it);
- prompt-cache reads and writes are on no `gen_ai.usage.*` key under the default conventions (only
  `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` adds `gen_ai.usage.cache_{read,creation}.input_tokens`):
  they are in `metadata.usage_object`, LiteLLM's own `Usage` as a Python repr, whose `prompt_tokens`
  (`gen_ai.usage.input_tokens`) counts them (for Anthropic LiteLLM adds `cache_read_input_tokens` and
  `cache_creation_input_tokens` to `input_tokens`, `AnthropicConfig.calculate_usage`);
- so are the reasoning tokens (`completion_tokens_details.reasoning_tokens`, of the output tokens; 0 for a model
  that does not reason);
- a reasoning model's thinking and the effort asked are on no attribute of the call's span, only on its
  `raw_gen_ai_request` child, read into the call by `litellm_raw_request.py`;
- a request that raised (the provider's HTTP 500 or 429) is a span of its own with its input, no output, no usage:
  ERROR, the exception as an event, `error.type`, the HTTP status (`http.response.status_code`, `error.code`) and
  `error.*` details repeating the rest. A `Router` falling back to another model (or retrying) makes the request again
  as a new span beside it: `litellm_failed_attempts.py` lists the failure on the step of the call that answered;
- `litellm.model_group` is a `Router`'s model group (the name the app asked for, or the fallback's);
- `metadata.*` is LiteLLM's standard logging metadata (the proxy's key, team and spend fields,
  empty from the SDK), `hidden_params` its response bookkeeping: neither is part of the conversation.

LiteLLM's session id (`litellm_session_id`, `metadata={"session_id": …}`) reaches no span: a
session comes from an application span carrying `session.id`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import otel_genai, python_repr
from evalkit.trajectory.mappers.messages import openai_tool_definition, parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader, as_decimal, as_text, indexed, unflatten
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import LlmCall, Message, Operation, Part
from evalkit.trajectory.span import LogRecord, Span

NAME = "litellm"
SCOPE = "litellm"  # LiteLLM's tracer name (`OTEL_TRACER_NAME` renames it)
_CALL_MARK = "litellm.call_id"
# LiteLLM's call types that are a model generating (the rest: embeddings, images, files, batches…).
_LLM_CALL_TYPES = frozenset({
    "chat", "completion", "acompletion", "text_completion", "atext_completion", "responses", "aresponses",
    "anthropic_messages", "aanthropic_messages", "generate_content", "agenerate_content",
})
_BOOKKEEPING = ("litellm.call_id", "litellm.cache_hit", "litellm.provider.model", "litellm.saved_cache_cost",
                "hidden_params", "llm.request.type", "llm.is_streaming", "litellm.model_group")
# A failed request's error as LiteLLM details it beside the span's status, `exception` event and `error.type`, which
# say the same (its message, the provider, the stack trace); its HTTP status, read on its own.
_ERROR_DETAILS = ("error.message", "error.llm_provider", "error.stack_trace", "error.code")
HTTP_STATUS = "http.response.status_code"


def detect(span: Span) -> bool:
    attributes = span.attributes
    return _CALL_MARK in attributes or is_raw_request(span)


def is_raw_request(span: Span) -> bool:
    """`raw_gen_ai_request`: only the provider's `llm.<provider>.*` fields (and the proxy's team ids)."""
    attributes = span.attributes
    return span.scope_name == SCOPE and bool(attributes) \
        and all(key.startswith(("llm.", "metadata.")) for key in attributes) and "llm.request.type" not in attributes


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    if _CALL_MARK not in reader.attributes:
        # The provider's raw request and response: the call its parent span reports, read there.
        reader.consume_prefix("llm.", "metadata.")
        return None
    reader.consume(*_BOOKKEEPING)
    reader.consume_prefix("metadata.")
    operation = (reader.text("gen_ai.operation.name") or "chat").lower()
    if operation not in _LLM_CALL_TYPES:
        reader.consume_prefix("gen_ai.")  # an embedding or an image is no conversation step
        return None
    call = otel_genai.llm_call(reader, logs, emitter=NAME)
    _add_usage_details(reader, call)
    _add_flat_tool_calls(reader, call)
    if not call.tool_definitions:
        call.tool_definitions = _tool_definitions(reader)
    cost = reader.prefixed("gen_ai.cost.")
    call.reported_cost = as_decimal(cost.get("total_cost"))
    call.extra["litellm_call_id"] = as_text(reader.attributes[_CALL_MARK])
    status = reader.integer(HTTP_STATUS, "error.code")
    reader.consume(*_ERROR_DETAILS)
    if call.error is not None and status is not None:
        call.extra["http_status_code"] = status
    return call


# The session list reads the same object in SQL (ingest/attribution.py's PYTHON_USAGE_KEY: a test holds them equal).
USAGE_OBJECT_KEY = "metadata.usage_object"


def _add_usage_details(reader: SpanReader, call: LlmCall) -> None:
    """Cache reads and writes, and reasoning tokens, from `metadata.usage_object` where no `gen_ai.usage.*` key gave
    them (under the default conventions none does).

    LiteLLM's `Usage` counts every prompt token in `prompt_tokens` (the cached ones included, whatever the
    provider), the reads in `prompt_tokens_details.cached_tokens` (Anthropic's also as `cache_read_input_tokens`)
    and the writes in `cache_creation_input_tokens` (`prompt_tokens_details.cache_creation_tokens`); the output
    tokens spent reasoning, of `completion_tokens`, in `completion_tokens_details.reasoning_tokens` (0 for a model
    that does not reason: no reasoning, as where it is not reported)."""
    usage = call.usage
    cache_known = usage.cache_read_tokens is not None or usage.cache_write_tokens is not None
    if cache_known and usage.reasoning_tokens is not None:
        return
    raw = reader.attributes.get(USAGE_OBJECT_KEY)
    # LiteLLM sets a dict attribute as its `str()`, a Python repr, not JSON.
    recorded = python_repr.literal(raw) if isinstance(raw, str) and raw.startswith("{") else None
    if not isinstance(recorded, Mapping):
        return
    if usage.reasoning_tokens is None:
        output_details = recorded.get("completion_tokens_details")
        reasoning = _count(output_details.get("reasoning_tokens")) if isinstance(output_details, Mapping) else None
        if reasoning:
            usage = call.usage = replace(usage, reasoning_tokens=reasoning)
    if cache_known:
        return
    details = recorded.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    read = _count(recorded.get("cache_read_input_tokens"), details.get("cached_tokens"))
    written = _count(recorded.get("cache_creation_input_tokens"), details.get("cache_creation_tokens"),
                     details.get("cache_write_tokens"))
    if read is None and written is None:
        return
    call.usage = normalised_usage(usage.input_tokens, usage.output_tokens, cache_read=read, cache_write=written,
                                  reasoning=usage.reasoning_tokens, input_includes_cache=True)


def _count(*values: Any) -> int | None:
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool)), None)


def _add_flat_tool_calls(reader: SpanReader, call: LlmCall) -> None:
    """The answer's tool calls from `gen_ai.completion.<i>.function_call.*` when its message has none."""
    completions = indexed(unflatten(reader.prefixed("gen_ai.completion.")))
    calls = [entry.get("function_call") for entry in completions if isinstance(entry, Mapping)]
    parts = [Part("tool_call", name=as_text(c.get("name")), arguments=parse_arguments(c.get("arguments")))
             for c in calls if isinstance(c, Mapping) and c.get("name")]
    if not parts:
        return
    answers = [m for m in call.output_messages if m.role == "assistant"]
    if not answers:
        answers = [Message("assistant")]
        call.output_messages.append(answers[0])
    if not answers[0].tool_calls:
        answers[0].parts.extend(parts)


def _tool_definitions(reader: SpanReader) -> list[dict[str, Any]]:
    functions = indexed(unflatten(reader.prefixed("llm.request.functions.")))
    found = (openai_tool_definition({**f, "parameters": parse_arguments(f.get("parameters"))})
             for f in functions if isinstance(f, Mapping))
    return [d for d in found if d is not None]
