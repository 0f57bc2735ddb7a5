"""Firebase Genkit's own OpenTelemetry spans (Genkit JS 1.x, scope `genkit-tracer`).

Genkit traces every action it runs (`@genkit-ai/core`'s `runInNewSpan`) with attributes of its own, no GenAI
convention: `genkit:type` (`action`, `util`, `flowStep`, `promptTemplate`), `genkit:metadata:subtype` (an action's
kind: `model`, `tool`, `agent`, `flow`, ...), `genkit:name`, `genkit:path`, and the action's `genkit:input` /
`genkit:output` as JSON. Genkit's data shapes (`@genkit-ai/ai`'s `model-types`): a message is `{role, content:
[part]}`, the role `user`, `model`, `system` or `tool`, a part `{text}`, `{reasoning}`, `{media: {url,
contentType}}`, `{toolRequest: {name, ref, input}}` or `{toolResponse: {name, ref, output}}` (`ref`: the
provider's call id).

- a model action's span (subtype `model`, named for the model: `openai/gpt-4o-mini`, the plugin's namespace before
  the slash) is one LLM call: its input the `GenerateRequest` (`messages`, `tools` with JSON schemas, `config`),
  its output the `GenerateResponse` (`message`, `finishReason`, `usage` with `inputTokens` / `outputTokens` /
  `cachedContentTokens` / `thoughtsTokens`, and `raw`, the provider's response as the plugin got it).
  `@genkit-ai/compat-oai` (the OpenAI-compatible plugin) keeps of a Chat Completions answer that asked for tools
  only the tool requests (`fromOpenAIChoice`: the text and `reasoning_content` said beside them dropped), which
  `raw` still holds: the answer's text and reasoning are read from there where the message has none.
- a tool action's span (subtype `tool`) is one execution: its input the arguments, its output what the tool
  returned (JSON). It records no call id (`ref`): the builder pairs it with its call by name and arguments. A tool
  that throws ends its span in error with no output, and Genkit's generate fails, unless a generate middleware's
  `tool` hook answers the model instead: what the model was sent is then the next call's `toolResponse` (the
  builder fills a result left empty from the next call's input).
- an agent's span (`ai.defineAgent`, subtype `agent`, the root of each turn's trace) is the agent's run; its output
  the turn's answer (`message`); the session is the agent's `sessionId` (`genkit:metadata:agent:sessionId`, on that
  root span only: each `chat.send` is a trace of its own). Its input is a stream: what the turn was asked is its
  `runTurn-<n>` step's input, which the calls' inputs hold too.
- `generate` (`util`: each of its turns, nested, restating the request and the last answer), `render`
  (`promptTemplate`), `runTurn-<n>` (`flowStep`) restate what the calls record: no operation, their attributes
  read. Other actions (a flow, an embedder, a retriever) are no step here; their attributes are read too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import openai_tool_definition, parse_arguments, render
from evalkit.trajectory.mappers.reader import SpanReader, as_int, as_text, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "genkit"
SCOPE = "genkit-tracer"
TYPE = "genkit:type"
SUBTYPE = "genkit:metadata:subtype"
INPUT = "genkit:input"
OUTPUT = "genkit:output"
SESSION_ID = "genkit:metadata:agent:sessionId"
# Genkit's bookkeeping on every span: where the action ran, how it ended (the span's status says so too), its
# registry key, its context, a snapshot's id, a prompt's name.
_BOOKKEEPING = ("genkit:name", "genkit:path", "genkit:state", "genkit:key", "genkit:isRoot", "genkit:isFailureSource",
                "genkit:init", "genkit:lastKnownParentSpanId", SUBTYPE, TYPE)
_BOOKKEEPING_PREFIX = "genkit:metadata:"
# A model's plugin namespace (the model action's name before the slash) -> the provider it calls; a namespace an
# OpenAI-compatible plugin was given by its user names none (the model's name is priced alone).
_PROVIDERS = {"openai": "openai", "googleai": "gcp.gemini", "vertexai": "gcp.vertex_ai", "anthropic": "anthropic",
              "deepseek": "deepseek", "xai": "xai", "mistral": "mistral_ai", "ollama": "ollama"}
_ROLES = {"model": "assistant"}


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    operation: Operation | None = None
    if reader.text(TYPE) == "action":
        subtype = reader.text(SUBTYPE)
        if subtype == "model":
            operation = _llm_call(reader)
        elif subtype == "tool":
            operation = _tool(reader)
        elif subtype == "agent":
            operation = _agent_run(reader)
    reader.consume(INPUT, OUTPUT, *_BOOKKEEPING)
    reader.consume_prefix(_BOOKKEEPING_PREFIX)
    return operation


def messages(value: Any) -> list[Message]:
    """Genkit's `MessageData` list as messages."""
    found: list[Message] = []
    for raw in value if isinstance(value, list) else ():
        if isinstance(raw, Mapping):
            role = str(raw.get("role") or "user")
            content = raw.get("content")
            found.append(Message(_ROLES.get(role, role),
                                 [p for p in map(_part, content if isinstance(content, list) else ()) if p]))
    return found


def _part(raw: Any) -> Part | None:
    if not isinstance(raw, Mapping):
        return None
    if isinstance(raw.get("text"), str):
        return Part("text", text=raw["text"])
    if isinstance(raw.get("reasoning"), str):
        return Part("reasoning", text=raw["reasoning"])
    request, response, media = raw.get("toolRequest"), raw.get("toolResponse"), raw.get("media")
    if isinstance(request, Mapping):
        return Part("tool_call", call_id=as_text(request.get("ref")), name=as_text(request.get("name")),
                    arguments=parse_arguments(request.get("input")))
    if isinstance(response, Mapping):
        output = response.get("output")
        return Part("tool_result", call_id=as_text(response.get("ref")), name=as_text(response.get("name")),
                    text=output if isinstance(output, str) else render(output))
    if isinstance(media, Mapping):
        return Part("media", media_type=as_text(media.get("contentType")), uri=as_text(media.get("url")))
    return Part("other", text=render(raw))


def _llm_call(reader: SpanReader) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=NAME)
    request, response = parse_json(reader.get(INPUT)), parse_json(reader.get(OUTPUT))
    namespace, _, model = (reader.text("genkit:name") or "").rpartition("/")
    call.request_model = model or None
    call.provider = _PROVIDERS.get(namespace)
    if isinstance(request, Mapping):
        call.input_messages = messages(request.get("messages"))
        for tool in request.get("tools") or ():
            definition = openai_tool_definition(tool)
            if definition is not None:
                call.tool_definitions.append(definition)
    if isinstance(response, Mapping):
        call.output_messages = messages([response["message"]]) if isinstance(response.get("message"), Mapping) else []
        raw = response.get("raw")
        call.model = (as_text(raw.get("model")) if isinstance(raw, Mapping) else None) or call.request_model
        if isinstance(raw, Mapping) and call.output_messages:
            _said_beside_tool_requests(call.output_messages[0], raw)
        if isinstance(raw, Mapping) and isinstance(raw.get("id"), str):
            call.response_id = raw["id"]
        if response.get("finishReason"):
            call.finish_reasons = [str(response["finishReason"])]
        usage = response.get("usage")
        if isinstance(usage, Mapping):
            call.usage = normalised_usage(
                as_int(usage.get("inputTokens")), as_int(usage.get("outputTokens")),
                cache_read=as_int(usage.get("cachedContentTokens")), reasoning=as_int(usage.get("thoughtsTokens")),
                # Genkit's plugins write the provider's prompt count, which counts the cached tokens (OpenAI's
                # `prompt_tokens`, Gemini's `promptTokenCount`).
                input_includes_cache=True)
    call.model = call.model or call.request_model
    call.error = span_error(reader)
    return call


def _said_beside_tool_requests(answer: Message, raw: Mapping[str, Any]) -> None:
    """The text and reasoning a Chat Completions answer gave beside its tool calls, which `@genkit-ai/compat-oai` drops
    from the message (see the module's docstring), from the raw response; only where the message has none."""
    if raw.get("object") != "chat.completion" or not answer.tool_calls or answer.text or answer.reasoning:
        return
    choices = raw.get("choices")
    said = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) \
        else None
    if not isinstance(said, Mapping):
        return
    parts: list[Part] = []
    if isinstance(said.get("reasoning_content"), str) and said["reasoning_content"]:
        parts.append(Part("reasoning", text=said["reasoning_content"]))
    if isinstance(said.get("content"), str) and said["content"]:
        parts.append(Part("text", text=said["content"]))
    answer.parts[:0] = parts


def _tool(reader: SpanReader) -> ToolExecution:
    error = span_error(reader)
    raw = reader.get(OUTPUT)
    returned = parse_json(raw)
    return ToolExecution(
        span=reader.span, emitter=NAME, name=reader.text("genkit:name"),
        arguments=parse_arguments(parse_json(reader.get(INPUT))),
        # What the tool returned as the model is sent it: a string as it is, anything else as `JSON.stringify` wrote
        # it (compact), not decoded and written again. A tool that threw returned nothing: what the model was sent
        # instead is in the next call's input.
        result=None if error is not None else returned if isinstance(returned, str) or raw is None else raw,
        error=error)


def _agent_run(reader: SpanReader) -> AgentRun:
    run = AgentRun(span=reader.span, emitter=NAME, name=reader.text("genkit:name"), error=span_error(reader))
    output = parse_json(reader.get(OUTPUT))
    answer = messages([output.get("message")]) if isinstance(output, Mapping) else []
    if answer and answer[0].text:
        run.output_text = answer[0].text
    return run
