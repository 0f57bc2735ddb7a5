"""The Anthropic Python SDK's own tracing (`anthropic.Anthropic(open_telemetry=…)`, scope `com.anthropic.sdk.python`).

Its `anthropic.messages.create` spans are the GenAI conventions, read by `otel_genai` (the effort a call asked for,
`output_config.effort`, as the conventions' `gen_ai.request.reasoning.level`: the step's `reasoning_effort`), plus
the SDK's own request attributes. Of those, the extended-thinking configuration the call asked for,
`anthropic.thinking.type` (`enabled`, `adaptive`, `disabled`) and `anthropic.thinking.budget_tokens`, is read here:
a request parameter of the call, shown with the others (`extra.request.thinking`, beside `max_tokens`).

Its content mode keeps no image or document data ("large and binary", lib/_tracing/_content.py `without_data`): a
message's `image` or `document` block is written as its type alone, `{"type": "anthropic_image"}`, and one in a
`tool_result`'s content as `{"type": "image"}`. Each is read as media the user (or the tool) sent and no span of this
tracing holds, saying so, not dropped as an unknown part: another report of the call holding it whole (OpenLLMetry's
`anthropic.chat` span, same response id) gives the step its images (trajectory/same_call.py).
"""

from __future__ import annotations

import json
from dataclasses import replace

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part

SCOPE = "com.anthropic.sdk.python"
_THINKING = "anthropic.thinking."
# The blocks it keeps the type of alone in a message (`anthropic_<type>`), as the shared reader renders such an unknown
# part (`Part("other")`, its JSON), by the media kind they are.
_PLACEHOLDERS = {json.dumps({"type": f"anthropic_{kind}"}): kind for kind in ("image", "document")}
NOT_RECORDED = "not recorded (the Anthropic SDK's tracing keeps an image's or a document's type alone)"


def read_request(reader: SpanReader, call: LlmCall) -> None:
    """The call's thinking configuration among its request parameters, as the request named it."""
    thinking = reader.prefixed(_THINKING)
    if thinking:
        call.extra.setdefault("request", {})["thinking"] = thinking


def read_media(call: LlmCall) -> None:
    """The input's images and documents, recorded as their type alone, as media no span of this tracing holds. The
    messages are the memo's, shared with other calls: changed ones are new messages."""
    if any(_kept_out(part) for message in call.input_messages for part in message.parts):
        call.input_messages = [_with_media(message) for message in call.input_messages]


def _kept_out(part: Part) -> bool:
    if part.kind == "other":
        return part.text in _PLACEHOLDERS
    return part.kind == "tool_result" and any(media.kind == "media" and not media.uri
                                              for media in part.result_parts or ())


def _with_media(message: Message) -> Message:
    if not any(_kept_out(part) for part in message.parts):
        return message
    return replace(message, parts=[_as_media(part) if _kept_out(part) else part for part in message.parts])


def _as_media(part: Part) -> Part:
    if part.kind == "tool_result":
        parts = [replace(media, text=NOT_RECORDED) if media.kind == "media" and not media.uri else media
                 for media in part.result_parts or ()]
        return replace(part, result_parts=parts)
    return Part("media", media_type=_PLACEHOLDERS[part.text or ""], text=NOT_RECORDED)
