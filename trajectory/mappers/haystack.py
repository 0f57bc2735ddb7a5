"""Haystack's own tracing (Haystack 3's `opentelemetry-haystack` tracer, Haystack 2's built-in one): spans
named `haystack.*`, with no GenAI convention. Content is only recorded with
`HAYSTACK_CONTENT_TRACING_ENABLED=true`: without it an LLM span has no attributes at all (no text, model or
usage), so each call is an empty step and each tool a step of its own with its name only.

- `haystack.agent.run` (an Agent's run): `haystack.agent.input` / `.output` hold its messages;
  under it `haystack.agent.step` > `haystack.agent.step.llm` (the chat generator's inputs and
  outputs: `haystack.agent.step.llm.input` / `.output`) and `haystack.agent.step.tool`
  (`haystack.tool.name`, `haystack.agent.step.tool.input` / `.output`, `haystack.tool.error`).
  A tool span has no call id: the builder pairs it with its call by name and arguments.
- `haystack.pipeline.run` > `haystack.component.run`, one per component run, with the component's
  inputs and outputs (`haystack.component.input` / `.output`): a chat generator's are the chat
  (`messages` in, `replies` out), the only component that is an operation here.

Messages are Haystack `ChatMessage.to_dict()`: `{"role", "content": [{"text"} | {"tool_call"} |
{"tool_call_result"} | {"reasoning"} | {"image"} ...], "meta"}`; a reply's `meta` has the model,
finish reason and the provider's usage. A value Haystack cannot serialise (a tool whose function is a
closure) is tagged as Python's `repr`, which is not read: the messages then come from the agent run's
tags. Seen in real captures: tests/captures/haystack_native*.

OpenInference's Haystack instrumentor (`openinference-instrumentation-haystack`) is read by the OpenInference
mapper; its LLM spans' flattened messages lack what `openinference_messages` below takes from their
`input.value` / `output.value` (tests/captures/haystack_openinference). OpenLLMetry's
(`opentelemetry-instrumentation-haystack`) is read by the OpenLLMetry mapper; what its generator spans seem to
record as the answer is not one (`read_openllmetry_generator` below).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import MessageMemo, openai_tool_definition, parse_arguments, render
from evalkit.trajectory.mappers.reader import SpanReader, as_int, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import (
    AgentRun,
    ErrorInfo,
    LlmCall,
    Message,
    Operation,
    Part,
    ToolExecution,
    Usage,
)
from evalkit.trajectory.span import LogRecord, Span

NAME = "haystack"
_PREFIX = "haystack."
# Set on a tool span whose tool raised (its status stays OK); the session list reads it too (trajectory/tables.py).
TOOL_ERROR = "haystack.tool.error"

# A chat generator's class name -> the provider it calls (the span names the class, not the provider).
_PROVIDERS = (
    ("AzureOpenAI", "azure.ai.openai"),
    ("OpenAI", "openai"),
    ("Anthropic", "anthropic"),
    ("AmazonBedrock", "aws.bedrock"),
    ("GoogleGenAI", "gcp.gen_ai"),
    ("VertexAI", "gcp.vertex_ai"),
    ("Mistral", "mistral_ai"),
    ("Cohere", "cohere"),
    ("Ollama", "ollama"),
    ("HuggingFace", "huggingface"),
)


def detect(span: Span) -> bool:
    return span.name.startswith(_PREFIX)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    name = reader.span.name
    operation: Operation | None = None
    if name == "haystack.agent.step.llm":
        operation = _llm_call(reader, reader.get("haystack.agent.step.llm.input"),
                              reader.get("haystack.agent.step.llm.output"), None)
    elif name == "haystack.agent.step.tool":
        operation = _tool(reader)
    elif name == "haystack.agent.run":
        operation = _agent_run(reader)
    elif name == "haystack.component.run":
        outputs = parse_json(reader.get("haystack.component.output"))
        if isinstance(outputs, Mapping) and isinstance(outputs.get("replies"), list):
            operation = _llm_call(reader, reader.get("haystack.component.input"), outputs,
                                  reader.text("haystack.component.type"))
    # The rest is Haystack's bookkeeping (pipeline data, sockets, visit counts, agent settings): read, not shown.
    reader.consume_prefix(_PREFIX)
    return operation


def _llm_call(reader: SpanReader, raw_inputs: Any, raw_outputs: Any, component_type: str | None) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=NAME)
    inputs = parse_json(raw_inputs)
    outputs = parse_json(raw_outputs)
    if isinstance(inputs, Mapping):
        call.input_messages = messages(inputs.get("messages", inputs.get("prompt")))
        for tool in inputs.get("tools") or ():
            definition = tool_definition(tool)
            if definition is not None:
                call.tool_definitions.append(definition)
    replies = outputs.get("replies") if isinstance(outputs, Mapping) else None
    call.output_messages = messages(replies, "assistant")
    meta = _first_meta(replies)
    call.model = _text(meta.get("model"))
    finish = meta.get("finish_reason")
    if finish:
        call.finish_reasons = [str(finish)]
    usage = meta.get("usage")
    if isinstance(usage, Mapping):
        call.usage = _usage(usage)
    if component_type:
        call.provider = generator_provider(component_type)
        call.extra["component"] = component_type
    call.error = span_error(reader)
    return call


def generator_provider(component_type: str) -> str | None:
    """The provider a chat generator's class calls (`OpenAIChatGenerator`: openai); None for one not listed."""
    return next((provider for prefix, provider in _PROVIDERS if component_type.startswith(prefix)), None)


def _first_meta(replies: Any) -> Mapping[str, Any]:
    for reply in replies if isinstance(replies, list) else ():
        meta = reply.get("meta", reply.get("_meta")) if isinstance(reply, Mapping) else None
        if isinstance(meta, Mapping):
            return meta
    return {}


def _usage(usage: Mapping[str, Any]) -> Usage:
    """OpenAI's usage (prompt / completion tokens and their details) or Anthropic's (input / output, cache)."""
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cache_read = as_int(usage.get("cache_read_input_tokens"))
    if cache_read is None and isinstance(prompt_details, Mapping):
        cache_read = as_int(prompt_details.get("cached_tokens"))
    reasoning = as_int(completion_details.get("reasoning_tokens")) if isinstance(completion_details, Mapping) else None
    prompt = as_int(usage.get("prompt_tokens"))
    return normalised_usage(
        prompt if prompt is not None else as_int(usage.get("input_tokens")),
        as_int(usage.get("completion_tokens", usage.get("output_tokens"))),
        cache_read=cache_read,
        cache_write=as_int(usage.get("cache_creation_input_tokens")),
        reasoning=reasoning,
        # OpenAI's prompt tokens count the cached ones; Anthropic's input tokens do not.
        input_includes_cache=True if prompt is not None else None,
    )


def _tool(reader: SpanReader) -> ToolExecution:
    result = parse_json(reader.get("haystack.agent.step.tool.output"))
    failed = reader.get(TOOL_ERROR) in (True, "true", "True")
    error = span_error(reader)
    if failed:
        # Haystack wraps the failure as {"error": text}; the model is shown the text.
        if isinstance(result, Mapping) and set(result) == {"error"}:
            result = result["error"]
        error = error or ErrorInfo(status_message=render(result))
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=reader.text("haystack.tool.name"),
        arguments=parse_arguments(reader.get("haystack.agent.step.tool.input")),
        result=result,
        error=error,
    )


def _agent_run(reader: SpanReader) -> AgentRun:
    inputs = parse_json(reader.get("haystack.agent.input"))
    outputs = parse_json(reader.get("haystack.agent.output"))
    asked = messages(inputs.get("messages")) if isinstance(inputs, Mapping) else []
    answered = messages(outputs.get("messages")) if isinstance(outputs, Mapping) else []
    users = [m for m in asked if m.role == "user" and m.text]
    assistants = [m for m in answered if m.role == "assistant" and m.text]
    run = AgentRun(
        span=reader.span,
        emitter=NAME,
        # The question of this run: earlier turns' messages, re-sent with it, are already in the trajectory.
        input_text=users[-1].text if users else None,
        output_text=assistants[-1].text if assistants else None,
        # The agent's system prompt is added to its messages, so only its output holds it.
        system_instructions=[m.text for m in answered if m.role == "system" and m.text],
        error=span_error(reader),
    )
    tools = parse_json(reader.get("haystack.agent.tools"))
    for tool in tools if isinstance(tools, list) else ():
        definition = tool_definition(tool)
        if definition is not None:
            run.tool_definitions.append(definition)
    return run


def tool_definition(raw: Any) -> dict[str, Any] | None:
    """A serialised Haystack `Tool` (`{"type": "haystack.tools.tool.Tool", "data": {name, description,
    parameters, ...}}`) in the OpenAI function-calling shape."""
    data = raw.get("data") if isinstance(raw, Mapping) and isinstance(raw.get("data"), Mapping) else raw
    if not isinstance(data, Mapping) or not data.get("name"):
        return None
    return openai_tool_definition({"name": data["name"], "description": data.get("description"),
                                   "parameters": data.get("parameters")})


def messages(raw: Any, default_role: str = "user") -> list[Message]:
    """Haystack `ChatMessage` dicts (`to_dict()`; Haystack 2.9 spelled its fields `_role`, `_content`, `_meta`,
    `_name`) as messages."""
    if isinstance(raw, str):
        return [Message(default_role, [Part("text", text=raw)])]
    found = []
    for item in raw if isinstance(raw, list) else ():
        message = _message(item, default_role)
        if message is not None:
            found.append(message)
    return found


def _message(raw: Any, default_role: str) -> Message | None:
    if not isinstance(raw, Mapping):
        return None
    role = str(raw.get("role", raw.get("_role")) or default_role).lower()
    content = raw.get("content", raw.get("_content"))
    parts: list[Part] = []
    if isinstance(content, str):
        parts.append(Part("text", text=content))
    for item in content if isinstance(content, list) else ():
        part = _part(item)
        if part is not None:
            parts.append(part)
    name = raw.get("name", raw.get("_name"))
    return Message(role, parts, name=str(name) if name else None)


def _part(raw: Any) -> Part | None:
    if not isinstance(raw, Mapping):
        return None
    if "text" in raw:
        return Part("text", text=render(raw["text"]))
    call = raw.get("tool_call")
    if isinstance(call, Mapping):
        return Part("tool_call", call_id=_text(call.get("id")), name=_text(call.get("tool_name")),
                    arguments=parse_arguments(call.get("arguments")))
    result = raw.get("tool_call_result")
    if isinstance(result, Mapping):
        found = result.get("origin")
        origin: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        return Part("tool_result", call_id=_text(origin.get("id")), name=_text(origin.get("tool_name")),
                    text=render(result.get("result")), error=result.get("error") is True)
    reasoning = raw.get("reasoning")
    if isinstance(reasoning, Mapping):
        return Part("reasoning", text=_text(reasoning.get("reasoning_text")))
    for kind in ("image", "file"):
        media = raw.get(kind)
        if isinstance(media, Mapping):
            return Part("media", media_type=_text(media.get("mime_type")) or kind)
    return Part("other", text=render(raw))


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


# --- OpenInference's Haystack instrumentor ------------------------------------------------------------------------

# Its spans' scope: the OpenInference mapper reads them, and hands an LLM span's messages to `openinference_messages`.
OPENINFERENCE_SCOPE = "openinference.instrumentation.haystack"
# A content part's class -> its key in `ChatMessage.to_dict()`, the form `_message` reads (a TextContent's `text`
# is read as it is).
_PART_KEYS = {"ToolCall": "tool_call", "ToolCallResult": "tool_call_result", "ReasoningContent": "reasoning",
              "ImageContent": "image", "FileContent": "file"}


def openinference_messages(call: LlmCall, raw_input: Any, raw_output: Any, memo: MessageMemo | None) -> None:
    """An LLM span of OpenInference's Haystack instrumentor, its messages completed from its `input.value` /
    `output.value`.

    Its flattened messages hold only each message's `text`, role and name, and a reply's tool calls without
    their ids (`_get_llm_input_message_attributes`: `if (content := message.text) is not None: yield
    ...MESSAGE_CONTENT`; `_get_llm_output_message_attributes` yields a tool call's arguments and name): so a
    tool result is a bare `tool` role, a re-sent call an empty assistant message, and Haystack 3's Agent runs
    its tools as functions, not components, so no span has them either. The whole `ChatMessage`s are in
    `input.value` (`{"messages": [...], "tools": [...]}`) and `output.value` (`{"replies": [...]}`), as
    `safe_json_dumps(..., default=str)` wrote them: each the dataclass's Python `repr`. Read without
    evaluating anything (`ast`); used only when every message reads, and they are as many as the flattened
    ones where those are there. The tools' reprs define the call's tools. A failed tool's result reads as
    `ToolCallResult(..., error=True)` there and nowhere else: its part is flagged (`Part.error`), and the
    builder flags the call's result; the session list flags the LLM span right after it (trajectory/tables.py,
    migration 214)."""
    inputs = parse_json(raw_input)
    if isinstance(inputs, Mapping):
        read = _repr_messages(inputs.get("messages"), len(call.input_messages), memo)
        if read is not None:
            call.input_messages = read
        tools = inputs.get("tools")
        for tool in tools if isinstance(tools, list) else ():
            definition = tool_definition(python_repr.object_value(tool)) if isinstance(tool, str) else None
            if definition is not None and definition not in call.tool_definitions:
                call.tool_definitions.append(definition)
    outputs = parse_json(raw_output)
    if isinstance(outputs, Mapping):
        read = _repr_messages(outputs.get("replies"), len(call.output_messages), memo, "assistant")
        if read is not None:
            call.output_messages = read


def _repr_messages(raw: Any, flattened: int, memo: MessageMemo | None,
                   default_role: str = "user") -> list[Message] | None:
    if not isinstance(raw, list) or not raw or (flattened and len(raw) != flattened):
        return None
    # Each call re-sends the conversation, the same reprs: the session's memo reads each once.
    read = _repr_message if memo is None else lambda text, role: memo.read_text(text, role, _repr_message)
    found = [read(item, default_role) if isinstance(item, str) else None for item in raw]
    return None if any(message is None for message in found) else [m for m in found if m is not None]


def _repr_message(text: str, default_role: str) -> Message | None:
    value = python_repr.object_value(text) if text.startswith("ChatMessage(") else None
    if not isinstance(value, dict) or not isinstance(value.get("_content"), list):
        return None
    value["_content"] = [{_PART_KEYS[part["__class__"]]: part}
                         if isinstance(part, Mapping) and part.get("__class__") in _PART_KEYS else part
                         for part in value["_content"]]
    return _message(value, default_role)


# --- OpenLLMetry's Haystack instrumentor --------------------------------------------------------------------------

# Its spans' scope (`opentelemetry-instrumentation-haystack`): the OpenLLMetry mapper reads them, and hands a
# generator's call to `read_openllmetry_generator`.
OPENLLMETRY_SCOPE = "opentelemetry.instrumentation.haystack"


def read_openllmetry_generator(call: LlmCall) -> None:
    """A generator's span of OpenLLMetry's Haystack instrumentor (`haystack.openai.chat` /
    `haystack.openai.completion`, around `OpenAIChatGenerator.run` / `OpenAIGenerator.run`): it records no answer.

    Its completion is written from the generator's result, a dict, as if it were a list of replies
    (`_set_span_completions`: `for index, message in enumerate(choices)`), so each `gen_ai.completion.<i>.content`
    is one of the result's keys (`replies`, `meta`), never what the model said. The call's messages and usage are
    the OpenAI client's span under it (OpenLLMetry's openai instrumentor, `openai.chat`), of which this one is then
    a wrapper; with the Haystack instrumentor alone, as its README sets it up, a call whose answer no span records
    (tests/captures/haystack_openllmetry_no-session)."""
    call.output_messages = []
