"""Pydantic AI (and Logfire): OTel GenAI spans plus their own extras.

Root `invoke_agent` spans carry `gen_ai.aggregated_usage.*` (the sum of the run's
calls; never counted again), `pydantic_ai.all_messages`, `final_result`; chat spans
carry `gen_ai.usage.details.*`, `model_request_parameters`, `pydantic_ai.cache.*` and
Logfire's `logfire.*`. Thinking parts are `{"type": "thinking"}`; tool results come back
in `role: "user"` messages (instrumentation version 5) or `role: "tool"` (version 6).

Reasoning tokens are only in the provider's own usage details, under the provider's name for them
(`gen_ai.usage.details.thinking_tokens` on Anthropic, `reasoning_tokens` on OpenAI, `thoughts_tokens`
on Google: each a part of the output tokens). A tool's return is recorded as pydantic-ai's compact JSON
(`gen_ai.tool.call.result`) and as the value itself in the next call's input; each model adapter shows it
the model its own way, and the Anthropic one sends a list one text block an item; an errored return (a retry, a
`ToolFailed`) goes to OpenAI wrapped as `{"error": …}`, rebuilt from the tool spans' outcomes
(`pydantic_ai_tool_errors`). A file a tool returns (a screenshot's `BinaryContent`, an `ImageUrl`) is recorded as a
media part (`blob` / `uri` from instrumentation version 4, `binary` / `image-url` before), alone or among the return's
items: the call's result is its content parts (`_file_result`), the image never its base64 as text; on OpenAI's Chat
Completions, whose tool messages are text only, after the text the tool message showed the model ("See file <id>.",
`pydantic_ai_tool_files`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai, pydantic_ai_attempts, pydantic_ai_deferred, pydantic_ai_native_tools
from evalkit.trajectory.mappers.messages import parse_part, prompt_text
from evalkit.trajectory.mappers.reader import SpanReader, as_int, dig, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "pydantic-ai"
_EXTRAS = (
    "gen_ai.aggregated_usage.",
    "pydantic_ai.",
    "logfire.",
    "gen_ai.usage.details.",
    "model_request_parameters",
    "gen_ai.agent.call.id",
)
# `RequestUsage.details` keys holding the reasoning part of the output tokens, as each of pydantic-ai's model
# adapters names it (models/anthropic/_response.py says so of all three).
# How `ModelSettingsDeltaPart.otel_message_parts` opens its text (messages.py).
_SETTINGS_CHANGED = "Model settings changed: "
_REASONING_DETAILS = (
    "gen_ai.usage.details.thinking_tokens",
    "gen_ai.usage.details.reasoning_tokens",
    "gen_ai.usage.details.thoughts_tokens",
)
# The web searches the provider ran within the answer, as pydantic-ai's Anthropic adapter names Anthropic's
# `usage.server_tool_use.web_search_requests` (models/anthropic/_response.py) and its OpenAI Responses adapter counts
# an answer's `search` actions (models/openai/_response_fields.py); ingest's `web_search_requests` column reads it too
# (trajectory/tables.py, migration 227).
WEB_SEARCHES = "gen_ai.usage.details.web_search_requests"
# The part types pydantic-ai records a file as (`_otel_messages`: `BlobPart`, `UriPart`, `FilePart` from instrumentation
# version 4; `BinaryDataPart`, `MediaUrlPart` before), each naming its media type or where the file is.
_FILE_PARTS = frozenset(("blob", "uri", "file", "binary", "image-url", "audio-url", "video-url", "document-url"))
_FILE_KEYS = ("mime_type", "media_type", "uri", "url", "file_id")


def detect(span: Span) -> bool:
    if span.scope_name in ("pydantic-ai", "pydantic_ai") or span.scope_name.startswith("logfire"):
        return True
    return any(key.startswith(_EXTRAS) for key in span.attributes) and otel_genai.detect(span)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    if pydantic_ai_attempts.is_attempt(reader.span):
        # A failed attempt at a request (a `FallbackModel`'s): listed on its call's step, no call of its own.
        pydantic_ai_attempts.read(reader)
        return None
    operation = otel_genai.map_span(reader, logs)
    if operation is not None:
        operation.emitter = NAME
    if isinstance(operation, LlmCall):
        if operation.usage.reasoning_tokens is None:
            operation.usage.reasoning_tokens = next(
                (as_int(reader.attributes[key]) for key in _REASONING_DETAILS if key in reader.attributes), None)
        if operation.reasoning_effort is None:
            operation.reasoning_effort = _thinking_level(reader.attributes.get("model_request_parameters"))
        if any(_is_settings_change(message) for message in operation.input_messages):
            operation.input_messages = [m for m in operation.input_messages if not _is_settings_change(m)]
        if operation.provider == "anthropic":
            operation.shown_tool_results = _anthropic_list_results(reader, operation)
        _read_native_tools(reader, operation)
    if isinstance(operation, ToolExecution):
        operation.result_parts = _file_result(operation.result)
    if isinstance(operation, ToolExecution) and isinstance(operation.result, dict | list):
        # pydantic-ai records a tool's non-str return as `tool_return_ta.dump_json(...)` (compact JSON,
        # capabilities/instrumentation.py), the text OpenAI's chat adapter shows the model
        # (`model_response_str()`); decoded and re-rendered, it would gain spaces the model never saw. (The
        # Anthropic adapter shows a list otherwise: the next call says how, `_anthropic_list_results`.)
        recorded = reader.attributes.get("gen_ai.tool.call.result")
        if isinstance(recorded, str):
            operation.result = recorded
    # Aggregates and Logfire bookkeeping: read on purpose and not used.
    reader.consume_prefix(
        "gen_ai.aggregated_usage.", "logfire.", "pydantic_ai.cache.", "gen_ai.usage.details."
    )
    reader.consume("model_request_parameters", "gen_ai.agent.call.id", "agent_name", "model_name")
    if isinstance(operation, AgentRun):
        final = reader.get("final_result")
        requests = pydantic_ai_deferred.deferred_requests(final)
        if requests is not None:  # no answer: the run ended asking a person (its human in the loop)
            operation.interrupt = pydantic_ai_deferred.interrupt(reader.span, NAME, requests)
        elif final is not None:
            operation.output_text = final if isinstance(final, str) else str(parse_json(final))
        operation.model = operation.model or reader.text("model_name")
        # The run's whole conversation, what it was asked included: a call's span records its messages
        # only once the model answers, so when the first call raised (a provider's 500, a refused
        # connection) this is the one place the prompt is.
        if operation.input_text is None:
            conversation = reader.get("pydantic_ai.all_messages")
            operation.input_text = None if conversation is None else prompt_text(conversation)
        # Where the run's new messages start: read with them where a run carries on one that asked a person
        # (`pydantic_ai_deferred.complete_runs`).
        reader.consume("pydantic_ai.all_messages", "pydantic_ai.new_message_index")
    return operation


def _read_native_tools(reader: SpanReader, call: LlmCall) -> None:
    """The provider's own tools the call offered, its answer ran or its history re-sends (`pydantic_ai_native_tools`),
    and the web searches its answer made (the provider's count, `RequestUsage.details`), which are priced per search."""
    searches = reader.attributes.get(WEB_SEARCHES)
    if searches is not None:
        call.usage.web_search_requests = as_int(searches) or None
    pydantic_ai_native_tools.offered(call, reader.attributes.get("model_request_parameters"))
    answer = pydantic_ai_native_tools.holds_native_tools(reader.attributes.get("gen_ai.output.messages"))
    history = pydantic_ai_native_tools.holds_native_tools(reader.attributes.get("gen_ai.input.messages"))
    if answer or history:
        pydantic_ai_native_tools.read_call(call, answer=answer, history=history)


def _is_settings_change(message: Message) -> bool:
    """pydantic-ai's record of a setting changing from there on in the conversation (`ModelSettingsDeltaPart`: today
    the unified `thinking` setting's effort), which its OTel messages write as a system message of text
    (`otel_message_parts`). No model is sent that text: its adapter sends the setting (request-level, or in place as
    an OpenAI Responses `configuration_update` item or an Anthropic message's `output_config`), which the call's
    `reasoning_effort` shows (`_thinking_level`)."""
    return (message.role == "system" and len(message.parts) == 1 and message.parts[0].kind == "text"
            and (message.parts[0].text or "").startswith(_SETTINGS_CHANGED))


def _thinking_level(parameters: Any) -> str | None:
    """The effort the request thought at, where the agent set it with pydantic-ai's unified `thinking` setting
    (`ModelSettings(thinking="low")`): the level resolved for the request (`ModelRequestParameters.thinking`), which
    each model adapter sends its provider's way (the OpenAI Responses one as `reasoning.effort`). `True` (the provider's
    default effort) and `False` (none) name no level; a provider's own setting (`openai_reasoning_effort`,
    `anthropic_thinking`), which wins over it, is recorded nowhere."""
    thinking = dig(parse_json(parameters), "thinking")
    return thinking if isinstance(thinking, str) and thinking else None


def _anthropic_list_results(reader: SpanReader, call: LlmCall) -> dict[str, str]:
    """The results of the answer before an Anthropic call that were lists, as its adapter showed them: one
    `tool_result` text block an item (`AnthropicModel._map_tool_return_part`, over `content_items(mode="str")`: a
    string as it is, anything else as compact JSON), one a line. The tool span's compact JSON of the whole list
    is what OpenAI's chat adapter shows. Only the input's last message is looked at: a result is new in the
    call after its tool ran, and re-sent the same way after."""
    last = call.input_messages[-1] if call.input_messages else None
    if last is None or not any(part.kind == "tool_result" and (part.text or "").startswith("[") for part in last.parts):
        return {}
    # The recorded value, not the rendered text: a string that reads as a JSON array went out as one block.
    messages = parse_json(reader.attributes.get("gen_ai.input.messages"))
    parts = messages[-1].get("parts") if isinstance(messages, list) and messages and isinstance(
        messages[-1], dict) else None
    shown: dict[str, str] = {}
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and part.get("type") == "tool_call_response" and isinstance(
                part.get("result"), list) and isinstance(part.get("id"), str):
            if _file_result(part["result"]) is not None:
                continue  # files among the items: its tool span's content parts are what the model was shown
            shown[part["id"]] = "\n".join(_block_text(item) for item in part["result"])
    return shown


def _block_text(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def is_file(item: Any) -> bool:
    """Whether a recorded item of a tool's return is a file pydantic-ai recorded as a media part."""
    return isinstance(item, dict) and item.get("type") in _FILE_PARTS and any(key in item for key in _FILE_KEYS)


def _file_result(result: Any) -> list[Part] | None:
    """A tool's return holding files, as parts: each file a media part, each other item its text as the Anthropic
    adapter shows it (a string as it is, anything else compact JSON: `_block_text`); None when it holds no file. A
    `blob` is recorded with its base64 alone, no data URL: the image is referenced at the tool span, never inlined."""
    items = result if isinstance(result, list) else [result]
    if not any(is_file(item) for item in items):
        return None
    return [(parse_part(item) or Part("other")) if is_file(item) else Part("text", text=_block_text(item))
            for item in items]
