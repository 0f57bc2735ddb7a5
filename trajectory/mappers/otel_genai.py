"""OpenTelemetry GenAI semantic conventions, every generation.

- v1.37+ attributes: `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`
  (parts-based JSON), `gen_ai.provider.name`, `gen_ai.usage.input_tokens` & co.
- v1.26 attributes: `gen_ai.prompt` / `gen_ai.completion` JSON, `gen_ai.usage.prompt_tokens`.
- the event form (v1.27-v1.36): `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`
  as span events (body flattened into attributes, or JSON in `gen_ai.event.content`) or as log
  records linked to the span (body as the payload); v1.26 `gen_ai.content.prompt/completion` events;
  v1.37 `gen_ai.client.inference.operation.details`.

The Google Gen AI SDK's instrumentation (scope `opentelemetry.instrumentation.google_genai`) makes up
the ids of Gemini's id-less function calls and responses; they are dropped (`_forget_made_up_ids`). Its
input messages are Gemini's contents, read as `google_genai` reads them (a streamed answer the chat re-sends
in pieces one model turn, a failed function's `{"error": …}` response flagged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.trajectory.mappers import anthropic_sdk_tracing, google_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import (
    instruction_texts,
    openai_tool_definition,
    parse_arguments,
    parse_input_messages,
    parse_message,
    parse_messages,
    prompt_text,
)
from evalkit.trajectory.mappers.reader import SpanReader, as_decimal, as_int, as_text, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution, Usage
from evalkit.trajectory.span import LogRecord, Span

NAME = "otel-genai"
# The OpenTelemetry project's instrumentation of the Google Gen AI SDK (Gemini), not OpenLLMetry's
# (`opentelemetry.instrumentation.google_generativeai`).
GOOGLE_GENAI_SCOPE = "opentelemetry.instrumentation.google_genai"
# Google ADK's own tracing (`google_adk.SCOPE`, a module that reads through this one) makes up those ids the same way
# (`_experimental_semconv._to_part`: `<name>_<index of the part in its content>`).
_ADK_SCOPE = "gcp.vertex.agent"

INFERENCE_OPERATIONS = {"chat", "text_completion", "generate_content", "completion", "responses"}
AGENT_OPERATIONS = {"invoke_agent"}
TOOL_OPERATIONS = {"execute_tool"}
# Read by the builder for identity (session, agent), so never "unmapped".
IDENTITY_KEYS = (
    "gen_ai.conversation.id",
    "gen_ai.agent.name",
    "gen_ai.agent.id",
    "gen_ai.agent.description",
    "gen_ai.agent.version",
    "gen_ai.operation.name",
    "session.id",
    "user.id",
    "gen_ai.user",
)
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_ALL_EVENTS = {
    *_MESSAGE_EVENTS,
    "gen_ai.choice",
    "gen_ai.content.prompt",
    "gen_ai.content.completion",
    "gen_ai.client.inference.operation.details",
}


def detect(span: Span) -> bool:
    attributes = span.attributes
    return (
        "gen_ai.operation.name" in attributes
        or "gen_ai.provider.name" in attributes
        or "gen_ai.system" in attributes
        or "gen_ai.request.model" in attributes
        or "gen_ai.tool.call.id" in attributes
        or "gen_ai.tool.name" in attributes
        or "gen_ai.agent.name" in attributes
        or any(event.name in _ALL_EVENTS for event in span.events)
    )


def operation_name(reader: SpanReader) -> str:
    operation = reader.text("gen_ai.operation.name")
    if operation:
        return operation.lower()
    name = reader.span.name
    if name.startswith("execute_tool") or reader.has("gen_ai.tool.call.id", "gen_ai.tool.call.result"):
        return "execute_tool"
    if name.startswith("invoke_agent"):
        return "invoke_agent"
    if reader.has(
        "gen_ai.request.model", "gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.prompt"
    ):
        return "chat"
    return ""


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.used.update(_IDENTITY_SET.intersection(reader.attributes))  # `reader.consume(*IDENTITY_KEYS)`
    operation = operation_name(reader)
    if operation in TOOL_OPERATIONS:
        return tool_execution(reader)
    if operation in AGENT_OPERATIONS:
        return agent_run(reader)
    if operation in INFERENCE_OPERATIONS or (not operation and logs):
        return llm_call(reader, logs)
    return None


def tool_execution(reader: SpanReader, emitter: str = NAME) -> ToolExecution:
    # Every span of a session is read here or in `llm_call`: the keys each reads are marked used
    # at once (one set intersection), and values taken from the attributes directly, the first
    # present of each spelling as `SpanReader.get` takes it.
    attributes = reader.attributes
    reader.used.update(_TOOL_KEYS.intersection(attributes))
    name = as_text(attributes.get("gen_ai.tool.name"))
    if name is None and reader.span.name.startswith("execute_tool "):
        name = reader.span.name.removeprefix("execute_tool ").strip()
    # `input`/`output` are what OpenInference's GenAI test fixtures use in place of the opt-in attributes.
    arguments = (attributes["gen_ai.tool.call.arguments"] if "gen_ai.tool.call.arguments" in attributes
                 else attributes.get("input"))
    result = (attributes["gen_ai.tool.call.result"] if "gen_ai.tool.call.result" in attributes
              else attributes.get("output"))
    return ToolExecution(
        span=reader.span,
        emitter=emitter,
        name=name,
        call_id=as_text(attributes.get("gen_ai.tool.call.id")),
        arguments=parse_arguments(arguments),
        result=parse_json(result),
        error=span_error(reader),
    )


def agent_run(reader: SpanReader, emitter: str = NAME) -> AgentRun:
    name = reader.text("gen_ai.agent.name")
    if name is None and reader.span.name.startswith("invoke_agent "):
        name = reader.span.name.removeprefix("invoke_agent ").strip()
    # An agent span's usage sums its LLM calls; only the calls themselves are counted.
    reader.consume_prefix("gen_ai.usage.")
    # What the agent was asked (opt-in content, as on an inference span): a user step when none of the
    # run's calls recorded their input (build._prompt_from_run).
    asked = reader.get("gen_ai.input.messages")
    return AgentRun(
        span=reader.span,
        emitter=emitter,
        name=name,
        version=reader.text("gen_ai.agent.version"),
        input_text=None if asked is None else prompt_text(asked),
        system_instructions=instruction_texts(reader.get("gen_ai.system_instructions")),
        model=reader.text("gen_ai.response.model", "gen_ai.request.model"),
        error=span_error(reader),
        tool_definitions=tool_definitions(reader.get("gen_ai.tool.definitions")),
    )


def tool_definitions(value: Any) -> list[dict[str, Any]]:
    """`gen_ai.tool.definitions` (JSON, an array), in the OpenAI function-calling shape."""
    definitions = parse_json(value)
    if not isinstance(definitions, list):
        return []
    return [d for d in map(openai_tool_definition, definitions) if d is not None]


_INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_CACHE_READ_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
    "gen_ai.usage.details.cache_read_tokens",
)
_CACHE_WRITE_TOKENS = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "gen_ai.usage.details.cache_write_tokens",
    "gen_ai.usage.cache_write_input_tokens",  # Strands Agents' tracer's only name for them up to 1.53
)
_REASONING_TOKENS = (
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.usage.reasoning_tokens",
    "gen_ai.usage.output_tokens.reasoning",
    "llm.usage.reasoning_tokens",
)
# The conventions' per-modality subsets of the input and output tokens (`gen_ai.usage.image.input_tokens`: a prompt's
# images apart from its words, as opentelemetry-util-genai writes Gemini's `promptTokensDetails`), by modality.
_INPUT_MODALITY_TOKENS = {f"gen_ai.usage.{modality}.input_tokens": modality
                          for modality in ("text", "image", "audio", "video")}
_OUTPUT_MODALITY_TOKENS = {f"gen_ai.usage.{modality}.output_tokens": modality
                           for modality in ("text", "image", "audio", "video")}
_MODALITY_TOKENS = frozenset((*_INPUT_MODALITY_TOKENS, *_OUTPUT_MODALITY_TOKENS))
_USAGE_KEYS = frozenset((*_INPUT_TOKENS, *_OUTPUT_TOKENS, *_CACHE_READ_TOKENS, *_CACHE_WRITE_TOKENS,
                         *_REASONING_TOKENS, *_MODALITY_TOKENS))
_IDENTITY_SET = frozenset(IDENTITY_KEYS)
_TOOL_KEYS = frozenset((
    "gen_ai.tool.name", "gen_ai.tool.type", "gen_ai.tool.description", "gen_ai.tool.call.arguments", "input",
    "gen_ai.tool.call.result", "output", "gen_ai.tool.call.id",
))
_REASONING_EFFORT = (
    "gen_ai.request.reasoning_effort", "gen_ai.request.reasoning.level", "llm.request.reasoning_effort",
)
# Every attribute `llm_call` reads, whatever else the span holds (`gen_ai.request.*` aside).
_LLM_CALL_KEYS = frozenset((
    "gen_ai.input.messages", "gen_ai.prompt", "gen_ai.output.messages", "gen_ai.completion",
    "gen_ai.system_instructions", "gen_ai.response.model", "gen_ai.request.model", "gen_ai.provider.name",
    "gen_ai.system", "gen_ai.usage.total_tokens", "llm.usage.total_tokens", "gen_ai.usage.cost",
    "gen_ai.tool.definitions", "gen_ai.response.finish_reasons", "gen_ai.request.reasoning_effort",
    "gen_ai.request.reasoning.level", "llm.request.reasoning_effort", "gen_ai.response.id",
))


def read_usage(reader: SpanReader, *, input_includes_cache: bool | None = None) -> Usage:
    attributes = reader.attributes
    present = _USAGE_KEYS.intersection(attributes)
    if not present:
        return normalised_usage(None, None, input_includes_cache=input_includes_cache)
    reader.used.update(present)
    # Most calls report input and output tokens only: the other spellings are not looked for one by one.
    usage = normalised_usage(
        _first_int(attributes, _INPUT_TOKENS),
        _first_int(attributes, _OUTPUT_TOKENS),
        cache_read=None if present.isdisjoint(_CACHE_READ_TOKENS) else _first_int(attributes, _CACHE_READ_TOKENS),
        cache_write=None if present.isdisjoint(_CACHE_WRITE_TOKENS) else _first_int(attributes, _CACHE_WRITE_TOKENS),
        reasoning=None if present.isdisjoint(_REASONING_TOKENS) else _first_int(attributes, _REASONING_TOKENS),
        input_includes_cache=input_includes_cache,
    )
    if not present.isdisjoint(_MODALITY_TOKENS):
        usage.input_tokens_by_modality = _by_modality(attributes, _INPUT_MODALITY_TOKENS)
        usage.output_tokens_by_modality = _by_modality(attributes, _OUTPUT_MODALITY_TOKENS)
    return usage


def _by_modality(attributes: Mapping[str, Any], keys: Mapping[str, str]) -> dict[str, int] | None:
    """Each modality's tokens the span records under `keys` (attribute -> modality); None when it records none."""
    counts = {modality: as_int(attributes[key]) for key, modality in keys.items() if key in attributes}
    return {modality: count for modality, count in counts.items() if count is not None} or None


def _first_int(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    """`SpanReader.integer(*keys)`'s value: the first present spelling that reads as an integer."""
    for key in keys:
        if key in attributes:
            value = as_int(attributes[key])
            if value is not None:
                return value
    return None


def llm_call(reader: SpanReader, logs: Sequence[LogRecord], emitter: str = NAME) -> LlmCall:
    # As in `tool_execution`: the keys read here marked used at once, values read directly.
    attributes = reader.attributes
    reader.used.update(_LLM_CALL_KEYS.intersection(attributes))
    call = LlmCall(span=reader.span, emitter=emitter)
    inputs = (attributes["gen_ai.input.messages"] if "gen_ai.input.messages" in attributes
              else attributes.get("gen_ai.prompt"))
    outputs = (attributes["gen_ai.output.messages"] if "gen_ai.output.messages" in attributes
               else attributes.get("gen_ai.completion"))
    gemini = reader.span.scope_name == GOOGLE_GENAI_SCOPE
    if (gemini or reader.span.scope_name == _ADK_SCOPE) and (inputs is not None or outputs is not None):
        # Decoded here (the input list through the memo, as `parse_input_messages` would) for the ids.
        names = _tool_names(attributes.get("gen_ai.tool.definitions"))
        memo = reader.memo
        if memo is None or not memo.first_inputs_only:  # counting calls, the ids are not read
            inputs = _forget_made_up_ids(parse_json(inputs) if memo is None else memo.decode(inputs), names)
        outputs = _forget_made_up_ids(parse_json(outputs), names)
    call.input_messages = parse_input_messages(inputs, reader.memo)
    call.output_messages = parse_messages(outputs, "assistant")
    call.system_instructions = instruction_texts(attributes.get("gen_ai.system_instructions"))
    if not call.input_messages and not call.output_messages:
        _messages_from_events(call, reader.span, logs, gemini)
        reader.read_events(*_ALL_EVENTS)
    if gemini:
        google_genai.gemini_contents(call)  # a streamed answer re-sent in pieces, a failed function's response
    request_model = as_text(attributes.get("gen_ai.request.model"))
    call.model = (as_text(attributes["gen_ai.response.model"]) if "gen_ai.response.model" in attributes
                  else request_model)
    call.request_model = request_model
    call.provider = as_text(attributes["gen_ai.provider.name"] if "gen_ai.provider.name" in attributes
                            else attributes.get("gen_ai.system"))
    call.usage = read_usage(reader)
    call.reported_cost = as_decimal(attributes.get("gen_ai.usage.cost"))
    call.tool_definitions = tool_definitions(attributes.get("gen_ai.tool.definitions"))
    finish = parse_json(attributes.get("gen_ai.response.finish_reasons"))
    if isinstance(finish, list | tuple):
        call.finish_reasons = [str(reason) for reason in finish]
    elif isinstance(finish, str):
        call.finish_reasons = [finish]
    # `gen_ai.request.reasoning.level` is the conventions' name for the effort asked (the Anthropic SDK's own tracing
    # writes `output_config.effort` so); the others, emitters' older spellings.
    effort = next((attributes[key] for key in _REASONING_EFFORT if key in attributes), None)
    if isinstance(effort, str | float) and effort != "":
        call.reasoning_effort = effort
    request = {
        key: value
        for key, value in reader.prefixed("gen_ai.request.").items()
        if key not in ("model", "reasoning_effort", "reasoning.level")
    }
    if request:
        call.extra["request"] = request
    if reader.span.scope_name == anthropic_sdk_tracing.SCOPE:
        anthropic_sdk_tracing.read_request(reader, call)  # its extended-thinking configuration
        anthropic_sdk_tracing.read_media(call)  # images and documents it records as their type alone
    response_id = as_text(attributes.get("gen_ai.response.id"))
    if response_id:
        call.extra["response_id"] = response_id
    call.error = span_error(reader)
    return call


def _finish_reasons(outputs: Any) -> list[str]:
    """The finish reasons of the conventions' output messages (each carries its own)."""
    if type(outputs) is str and '"finish_reason"' not in outputs:
        return []
    messages = parse_json(outputs)
    if not isinstance(messages, list):
        return []
    return [str(m["finish_reason"]) for m in messages if isinstance(m, dict) and m.get("finish_reason")]


def _event_payload(attributes: Mapping[str, Any], body: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    content = attributes.get("gen_ai.event.content")
    if content is not None:
        parsed = parse_json(content)
        if isinstance(parsed, Mapping):
            payload.update(parsed)
    body = parse_json(body)
    if isinstance(body, Mapping):
        payload.update(body)
    for key, value in attributes.items():
        if not key.startswith("gen_ai.") and key != "event.name":
            payload.setdefault(key, parse_json(value))
    return payload


def _tool_names(definitions: Any) -> set[str]:
    """The names of the tools `gen_ai.tool.definitions` declares."""
    decoded = parse_json(definitions)
    return {d["name"] for d in decoded if isinstance(d, Mapping) and isinstance(d.get("name"), str)} \
        if isinstance(decoded, list) else set()


def _forget_made_up_ids(messages: Any, names: set[str]) -> Any:
    """Messages (decoded OTel GenAI JSON) without the ids the Google Gen AI instrumentation made up.

    Gemini's function calls and responses carry an id only when the model gave one (gemini-2.5 gives
    none); the instrumentation then writes `<name>_<index of the part in its message>`: every call's
    first call of a tool is `get_weather_0`, and a call after a text part (`_1`) gets a response that
    is its message's first part (`_0`). Read as ids, those answer the wrong calls. Dropped, calls and
    results are matched by name and order, as the id-less are; a response, which names no tool, is
    given the name before its `_<index>` (a tool the span declares or one of the messages calls).
    In place: the memo decodes a re-sent message once, and dropping them again changes nothing.
    """
    if type(messages) is not list:
        return messages
    parts = [part for message in messages if type(message) is dict and type(message.get("parts")) is list
             for part in message["parts"] if type(part) is dict and type(part.get("id")) is str]
    names = names | {part["name"] for part in parts
                     if part.get("type") == "tool_call" and isinstance(part.get("name"), str)}
    for part in parts:
        name, _, index = part["id"].rpartition("_")
        if not index.isdigit():
            continue
        if part.get("type") == "tool_call" and name == part.get("name"):
            del part["id"]
        elif part.get("type") == "tool_call_response" and name in names:
            del part["id"]
            part.setdefault("name", name)
    return messages


def _messages_from_events(call: LlmCall, span: Span, logs: Sequence[LogRecord], gemini: bool = False) -> None:
    events: list[tuple[int, str, Mapping[str, Any], Any]] = [
        (event.time_unix_nano, event.name, event.attributes, None) for event in span.events
    ]
    events.extend((log.time_unix_nano, log.event_name, log.attributes, log.body) for log in logs)
    events.sort(key=lambda item: item[0])
    for _, name, attributes, body in events:
        payload = _event_payload(attributes, body)
        if name in _MESSAGE_EVENTS:
            role = _MESSAGE_EVENTS[name]
            message = parse_message({"role": role, **payload}, role)
            if message is not None:
                call.input_messages.append(message)
        elif name == "gen_ai.choice":
            raw = parse_json(payload.get("message", payload))
            if isinstance(raw, list):  # the message's content blocks alone (Strands: Bedrock blocks)
                raw = {"role": "assistant", "content": raw}
            message = parse_message(raw, "assistant")
            if message is not None:
                if message.role != "assistant" and message.role == "user":
                    message.role = "assistant"
                call.output_messages.append(message)
            if payload.get("finish_reason"):
                call.finish_reasons.append(str(payload["finish_reason"]))
        elif name == "gen_ai.content.prompt":
            call.input_messages.extend(
                parse_messages(attributes.get("gen_ai.prompt", payload.get("gen_ai.prompt")))
            )
        elif name == "gen_ai.content.completion":
            call.output_messages.extend(
                parse_messages(
                    attributes.get("gen_ai.completion", payload.get("gen_ai.completion")), "assistant"
                )
            )
        elif name == "gen_ai.client.inference.operation.details":
            source = {**attributes, **(parse_json(body) if isinstance(parse_json(body), Mapping) else {})}
            inputs, outputs = source.get("gen_ai.input.messages"), source.get("gen_ai.output.messages")
            if gemini:
                names = _tool_names(source.get("gen_ai.tool.definitions"))
                inputs = _forget_made_up_ids(parse_json(inputs), names)
                outputs = _forget_made_up_ids(parse_json(outputs), names)
            call.input_messages.extend(parse_messages(inputs))
            call.output_messages.extend(parse_messages(outputs, "assistant"))
            # Each output message carries its finish reason, and the event's emitter (Strands under
            # `gen_ai_latest_experimental`) sets no `gen_ai.response.finish_reasons` beside.
            call.finish_reasons.extend(_finish_reasons(outputs))
            call.system_instructions.extend(instruction_texts(source.get("gen_ai.system_instructions")))
