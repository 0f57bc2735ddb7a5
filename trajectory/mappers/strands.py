"""Strands Agents' own tracing (scope `strands.telemetry.tracer`): OTel GenAI plus its own ways.

With its default conventions the messages are span events (`gen_ai.user.message`,
`gen_ai.choice`, …) whose content is Bedrock Converse blocks (`text`, `toolUse`, `toolResult`),
which `otel_genai` and `messages` read. What is Strands' own: a tool span's arguments are the
content of its `gen_ai.tool.message` event and its result the `gen_ai.choice` event's message
(result blocks, `[{"text": …}]`); `gen_ai.tool.status` says whether the tool failed. With
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` the current attributes carry all of it, a block with no
GenAI part (a thinking block's `reasoningContent`) as a part of Strands' own (`_bedrock_parts`).
Its `execute_event_loop_cycle` spans restate the cycle's messages: no operation. An image (document, video) block's
bytes are written "<replaced>" by its tracer's JSON encoder, under either conventions: the payload is in no span, so
the block is a media part saying so (`messages.UNRECORDED_BYTES`, shown as a marker, not an image), and a tool's result
holding one is its parts (`ToolExecution.result_parts`: its text, then that marker), never the blocks' JSON (checked
against the `strands_native_image` capture). `gen_ai.system` (`gen_ai.provider.name`
under the latest conventions) is "strands-agents" on every span (tracer.py `_get_common_attributes`): the SDK, not
the model's provider, and a chat span names no provider otherwise (only `gen_ai.request.model`, the model's
`config["model_id"]`, whichever model class, OpenAI's or Anthropic's, sent it): its call has none. Its older releases'
prompt-cache usage is read here (`_usage`). An agent's tool definitions are on its tool spans: each
`execute_tool` span records its tool's spec (`gen_ai.tool.description`, `gen_ai.tool.json_schema`: tools/
executors/_executor.py `_start_tool_telemetry`), which is what its model providers send (the OpenAI model
`{"type": "function", "function": {name, description, "parameters": inputSchema["json"]}}`) once its registry has
normalized the schema (`_schema_as_sent`: an MCP tool's properties are sent a description the span lacks). The
agent span names all its tools (`gen_ai.agent.tools`) but defines them only under the `gen_ai_tool_definitions` opt-in
(`gen_ai.tool.definitions`, not part of `gen_ai_latest_experimental`; no chat span records them): without it a
tool the agent never ran is known by name only, and given no definition. A Swarm's or Graph's run
(`invoke_swarm`, `invoke_graph`) is read in `strands_multiagent`. An agent a tool runs (the docs' "agents as
tools": a `@tool` function asking a specialist `Agent`) needs no rule here: Strands runs the tool with the caller's
context (`asyncio.to_thread`, then `_async.run_async`'s copied context), so the specialist's `invoke_agent` span is
a child of that call's `execute_tool` span, which the builder makes a subagent started by the call (checked against
the `strands_native_agents-as-tools` capture).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import otel_genai, strands_multiagent
from evalkit.trajectory.mappers.messages import BEDROCK_MEDIA, bedrock_result_parts, parse_arguments, parse_part
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
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

NAME = "strands"
SCOPE = "strands.telemetry.tracer"
# What the tracer writes as `gen_ai.system` / `gen_ai.provider.name` on every span: the SDK's name.
SDK_NAME = "strands-agents"
# "error" on a tool span whose tool failed; the session list reads it too (trajectory/tables.py).
TOOL_STATUS = "gen_ai.tool.status"
_DETAILS = "gen_ai.client.inference.operation.details"
# Bookkeeping: when the event loop saw the span start and end, its cycle ids, time to first token.
_BOOKKEEPING = ("gen_ai.event.start_time", "gen_ai.event.end_time", "gen_ai.server.time_to_first_token",
                "event_loop.cycle_id", "event_loop.parent_cycle_id")
# A call's prompt-cache tokens. Strands' tracer up to 1.53 writes only the first (legacy) spelling of each
# (tracer.py `_add_optional_usage_and_metrics_attributes`: `attributes["gen_ai.usage.cache_write_input_tokens"]
# = usage["cacheWriteInputTokens"]`); 1.54 added the second beside it (the only one under the latest conventions).
_CACHE_READ = ("gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_read.input_tokens")
_CACHE_WRITE = ("gen_ai.usage.cache_write_input_tokens", "gen_ai.usage.cache_creation.input_tokens")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def _tool_from_events(reader: SpanReader, tool: ToolExecution) -> None:
    for event in reader.span.events:
        if event.name == "gen_ai.tool.message":
            reader.read_events(event.name)
            if tool.arguments is None:
                tool.arguments = parse_arguments(event.attributes.get("content"))
            tool.call_id = tool.call_id or _text(event.attributes.get("id"))
        elif event.name == "gen_ai.choice":
            reader.read_events(event.name)
            if tool.result is None:
                tool.result = parse_json(event.attributes.get("message"))
        elif event.name == _DETAILS and tool.result is None:
            # Under the latest conventions a tool that raised has no `gen_ai.tool.call.result` (only a
            # result is written there); its details event's output is what the model was sent (the error's text).
            reader.read_events(event.name)
            tool.result = _tool_call_response(parse_json(event.attributes.get("gen_ai.output.messages")))


def _tool_call_response(messages: object) -> object:
    for message in messages if isinstance(messages, list) else ():
        for part in message.get("parts") or () if isinstance(message, dict) else ():
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                return part.get("response")
    return None


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    operation = otel_genai.map_span(reader, logs) or strands_multiagent.orchestrator_run(reader, NAME)
    reader.consume(*_BOOKKEEPING)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, LlmCall) and operation.provider == SDK_NAME:
        operation.provider = None
    if isinstance(operation, LlmCall):
        results_as_blocks = _genai_messages(reader.span)
        operation.input_messages = _bedrock_parts(operation.input_messages, results_as_blocks)
        operation.output_messages = _bedrock_parts(operation.output_messages, results_as_blocks)
    if isinstance(operation, LlmCall) and reader.has(*_CACHE_READ, *_CACHE_WRITE):
        operation.usage = _usage(reader, operation.usage)
    if isinstance(operation, AgentRun) and reader.has("gen_ai.tool.definitions"):
        operation.tool_definitions = _agent_tool_definitions(reader.get("gen_ai.tool.definitions"))
    if isinstance(operation, ToolExecution) and not reader.has(TOOL_STATUS):
        # Strands ends a tool span with no status only when the tool never returned (`_end_tool_telemetry`: "an
        # interrupt or an abandoned stream leaves no result event"): no execution the model was shown. A tool that
        # asked a person (`tool_context.interrupt`) runs again under the same call id once answered, a span of its own
        # (`strands_interrupts`).
        return None
    if isinstance(operation, ToolExecution):
        _tool_from_events(reader, operation)
        # A tool's result holding media (a screenshot: the ToolResult's `image` block) is its parts, not their JSON.
        # Parsed only where a media block's key is in the text: most results hold none.
        result = operation.result
        if not isinstance(result, str) or any(f'"{kind}"' in result for kind in BEDROCK_MEDIA):
            operation.result_parts = bedrock_result_parts(parse_json(result) if isinstance(result, str) else result)
        operation.definition = _tool_definition(operation.name, reader.get("gen_ai.tool.description"),
                                                parse_json(reader.get("gen_ai.tool.json_schema")))
        if reader.text(TOOL_STATUS) == "error" and operation.error is None:
            operation.error = ErrorInfo(status_message="gen_ai.tool.status: error")
    return operation


def _genai_messages(span: Span) -> bool:
    """Whether a span's messages are GenAI messages (the latest conventions: `gen_ai.input.messages`, on the span or
    its details event), not the default conventions' span events of Bedrock blocks."""
    return "gen_ai.input.messages" in span.attributes or any(
        event.name == _DETAILS and "gen_ai.input.messages" in event.attributes for event in span.events)


def _bedrock_parts(messages: list[Message], results_as_blocks: bool) -> list[Message]:
    """Messages with Strands' own parts read as the Bedrock blocks they restate.

    Under the latest conventions Strands writes a content block that has no GenAI part as `{"type": <the block's
    key>, "content": <its body>}` (telemetry/tracer.py `_map_content_blocks_to_otel_parts`): a thinking block is
    `{"type": "reasoningContent", "content": {"reasoningText": {"text": …, "signature": …}}}`, which the GenAI
    reader keeps as an unknown part (its rendered JSON), so the step lost its reasoning. A tool result there
    (`results_as_blocks`) is a `tool_call_response` whose `response` is the toolResult's content blocks as they are,
    `[{"text": …}]`, which the GenAI reader renders as JSON where the model was sent the text (`_result_blocks`). A
    message read from a memo is shared with the calls that re-send it: one with such a part is replaced, never
    changed.
    """
    return [_with_bedrock_blocks(message, results_as_blocks)
            if any(part.kind == "other" or (results_as_blocks and part.kind == "tool_result") for part in message.parts)
            else message for message in messages]


def _with_bedrock_blocks(message: Message, results_as_blocks: bool) -> Message:
    parts = [_bedrock_block(part) if part.kind == "other"
             else _result_blocks(part) if results_as_blocks and part.kind == "tool_result" else part
             for part in message.parts]
    return message if parts == message.parts else Message(message.role, parts, name=message.name)


def _result_blocks(part: Part) -> Part:
    """A tool result whose text is the JSON of a toolResult's content blocks (each one key: `text`, `json`, `image`,
    …), read as the toolResult they are, as the default conventions' are (`messages.parse_part`). Strands writes every
    result's `response` as that list, never a tool's text alone: the one JSON layer taken off is always its own."""
    blocks = parse_json(part.text) if part.text else None
    if not isinstance(blocks, list) or not all(isinstance(block, dict) and len(block) == 1 for block in blocks):
        return part
    result = parse_part({"toolResult": {"toolUseId": part.call_id, "content": blocks}})
    return part if result is None or result.text is None else replace(part, text=result.text,
                                                                       result_parts=result.result_parts)


def _bedrock_block(part: Part) -> Part:
    restated = parse_json(part.text) if part.text else None
    if not isinstance(restated, dict) or restated.keys() != {"type", "content"}:
        return part
    kind, body = restated["type"], restated["content"]
    if not isinstance(kind, str):
        return part
    block = parse_part({kind: body})  # a Bedrock block: its kind is its one key
    return block if block is not None and block.kind != "other" else part


def _tool_definition(name: object, description: object, schema: object) -> dict[str, Any] | None:
    """A Strands tool's spec as its model providers send it, in the OpenAI function-calling shape; None without its
    JSON schema (a tool the model named that the agent has not: `_start_tool_telemetry` records no spec), or with one
    Strands would not send (nested too deeply)."""
    if not name or not isinstance(schema, dict):
        return None
    parameters = _schema_as_sent(schema)
    if parameters is None:
        return None
    function: dict[str, Any] = {"name": str(name)}
    if isinstance(description, str):
        function["description"] = description
    function["parameters"] = parameters
    return {"type": "function", "function": function}


# Strands' tool registry normalizes a tool's input schema before its model is sent it (tools/registry.py
# `get_all_tools_config` -> tools/tools.py `normalize_tool_spec`, the same from 1.53 to 1.65), but an `execute_tool`
# span records the spec as the tool holds it (`ctx.tool.tool_spec`). A `@tool` function's schema is complete already;
# an MCP tool's is the server's (`MCPAgentTool.tool_spec`), whose properties often have no description: the model was
# sent "Property <name>" for each. A schema nested deeper than this fails the registry's validation: the tool is left
# out of what the model is sent.
_MAX_SCHEMA_DEPTH = 64
_COMPOSITION_KEYWORDS = ("anyOf", "oneOf", "allOf", "not")  # a property typed by these gets no default type


def _schema_as_sent(schema: dict[str, Any], depth: int = 0) -> dict[str, Any] | None:
    """An object schema as Strands' `normalize_schema` sends it: `type`, `properties` and `required` defaulted, each
    property normalized (`_property_as_sent`); None past the registry's depth limit."""
    if depth > _MAX_SCHEMA_DEPTH:
        return None
    normalized = {**schema}
    normalized.setdefault("type", "object")
    normalized.setdefault("properties", {})
    normalized.setdefault("required", [])
    properties = normalized["properties"]
    if isinstance(properties, dict):
        as_sent = {}
        for name, definition in properties.items():
            prop = _property_as_sent(str(name), definition, depth)
            if prop is None:
                return None
            as_sent[name] = prop
        normalized["properties"] = as_sent
    return normalized


def _property_as_sent(name: str, definition: object, depth: int) -> dict[str, Any] | None:
    """One property as Strands' `_normalize_property` sends it: an object with properties normalized as a schema, a
    `$ref` as it is, any other given a string type (unless composed) and the description "Property <name>"."""
    if not isinstance(definition, dict):
        return {"type": "string", "description": f"Property {name}"}
    if definition.get("type") == "object" and "properties" in definition:
        return _schema_as_sent(definition, depth + 1)
    normalized = {**definition}
    if "$ref" in normalized:
        return normalized
    if not any(keyword in normalized for keyword in _COMPOSITION_KEYWORDS):
        normalized.setdefault("type", "string")
    normalized.setdefault("description", f"Property {name}")
    return normalized


def _agent_tool_definitions(value: object) -> list[dict[str, Any]]:
    """`gen_ai.tool.definitions` on an agent span (tracer.py `_construct_tool_definitions`: each tool's name,
    description, `inputSchema` and `outputSchema` as the tool registry holds them, the input schema wrapped as
    `{"json": …}`), in the OpenAI function-calling shape."""
    definitions = parse_json(value)
    found = []
    for spec in definitions if isinstance(definitions, list) else ():
        if not isinstance(spec, dict):
            continue
        schema = spec.get("inputSchema")
        definition = _tool_definition(spec.get("name"), spec.get("description"),
                                      schema.get("json") if isinstance(schema, dict) else None)
        if definition is not None:
            found.append(definition)
    return found


def _usage(reader: SpanReader, read: Usage) -> Usage:
    """A call's usage, its cache tokens under either spelling, with what its prompt tokens count.

    `gen_ai.usage.input_tokens` is the provider's `inputTokens` as it was up to Strands 1.53 (tracer.py
    `end_model_invoke_span`: `"gen_ai.usage.input_tokens": usage["inputTokens"]`); from 1.54 it is
    `_total_prompt_tokens(usage)` (telemetry/metrics.py), which adds the cache tokens unless
    `inputTokens + outputTokens == totalTokens`. `AnthropicModel` reports Anthropic's `input_tokens`, which
    leave the cache tokens out, with `totalTokens = input_tokens + output_tokens` until 1.57.2 (models/
    anthropic.py `format_chunk`, "metadata"): so its prompt tokens leave them out through 1.57.1, whatever
    their size (the shared rule only notices when they are fewer than the cache tokens).
    """
    input_tokens = reader.integer("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
    output_tokens = reader.integer("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
    cache_read, cache_write = reader.integer(*_CACHE_READ), reader.integer(*_CACHE_WRITE)
    cached = (cache_read or 0) + (cache_write or 0)
    # Bedrock's `inputTokens` leave them out too up to 1.53, but no capture shows it yet: the shared rule there.
    excludes = bool(input_tokens is not None and cached and _anthropic_api_model(reader.text("gen_ai.request.model"))
                    and _before_1_57_2(reader))
    return normalised_usage(input_tokens, output_tokens, cache_read=cache_read, cache_write=cache_write,
                            reasoning=read.reasoning_tokens, input_includes_cache=False if excludes else None)


def _anthropic_api_model(model: str | None) -> bool:
    """An Anthropic API model id (`AnthropicModel`'s). Not Bedrock's `us.anthropic.claude-…` nor LiteLLM's
    `anthropic/claude-…` (whose prompt tokens count the cache tokens)."""
    return model is not None and model.startswith("claude-")


def _before_1_57_2(reader: SpanReader) -> bool:
    """Whether Strands is older than 1.57.2: the cache tokens in their legacy spelling only (up to 1.53), or
    the version `StrandsTelemetry`'s resource names (`service.name` "strands-agents", `service.version` its
    version: telemetry/config.py `get_otel_resource`). The tracer's scope has no version (`get_tracer(__name__)`)."""
    if not reader.has("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens"):
        return True
    resource = reader.span.resource_attributes
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", str(resource.get("service.version") or ""))
    return (resource.get("service.name") == "strands-agents" and found is not None
            and tuple(map(int, found.groups())) < (1, 57, 2))
