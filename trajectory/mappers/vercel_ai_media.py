"""The AI SDK's media in a call's `ai.prompt.messages`: an image in a message, a tool's result made of content.

The `ai.*` telemetry (AI SDK 5-6's built-in, AI SDK 7's `@ai-sdk/otel` LegacyOpenTelemetry) writes a call's prompt as
the SDK hands it to the provider (its LanguageModel prompt, through `stringifyForTelemetry`):

- an image or file in a message is a `{type: "file", mediaType, data}` part, `data` the base64 of the bytes it was
  given (no data URL) or the URL it names. AI SDK 7 makes its deprecated `{type: "image", image}` part one too, and
  names inline bytes' subtype (`image/png`) where the app named the top-level type alone (`image`);
- a tool whose `toModelOutput` made its result content (`{type: "content", value: [...]}`: a map's image beside a
  line of text) is a `tool-result` part with that `output`: `text` parts and, in AI SDK 7, `file` parts whose `data`
  is tagged (`{type: "data", data: <base64>}`, `{type: "url", url}`, `{type: "reference", …}`); AI SDK 5-6 wrote
  them `media` / `image-data` / `file-data` (`{data, mediaType}`) and `image-url` / `file-url` (`{url}`).

The generic reader (`messages.parse_part`) knows neither shape: the image was a bare `[file]` marker, the tool's
content its JSON, base64 and all. Here they are media `Part`s (a URL, or the data URL the provider sends for base64),
a tool's content its result's parts (`Part.result_parts`): the builder shows them as ATIF image parts, a large one
referenced in the call's input (trajectory/media.py), never its base64 as text.

What the model was shown of a tool is only here: the `ai.toolCall` span records what the tool's `execute` returned
(`ai.toolCall.result`), not what `toModelOutput` made of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.trajectory.mappers.messages import MessageMemo, parse_input_messages, parse_message, parse_part
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import Message, Part

# How a prompt holding media reads as `JSON.stringify` writes it (no blanks): only such a prompt is read here, any
# other as every emitter's is (through the session's memo, re-sent histories read once).
_MEDIA_MARKS = ('"type":"file"', '"type":"content"')
# AI SDK 5-6's tool-result content parts: base64 with its media type, or a URL.
_LEGACY_DATA = frozenset(("media", "image-data", "file-data"))
_LEGACY_URL = {"image-url": "image", "file-url": None}


def prompt_messages(value: Any, memo: MessageMemo | None) -> list[Message]:
    """A call's input messages from its `ai.prompt.messages`, the AI SDK's media among them as media parts."""
    if not (isinstance(value, str) and any(mark in value for mark in _MEDIA_MARKS)) or (
            memo is not None and memo.first_inputs_only):
        return parse_input_messages(value, memo)
    items = parse_json(value)
    if not isinstance(items, list):
        return parse_input_messages(value, memo)
    messages = []
    for item in items:
        message = _media_message(item) if _holds_media(item) else (
            memo.parse(item, "user") if memo is not None else parse_message(item))
        if message is not None:
            messages.append(message)
    return messages


def _holds_media(item: Any) -> bool:
    content = item.get("content") if isinstance(item, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and (part.get("type") == "file" or _content_output(part) is not None)
        for part in content)


def _content_output(part: Mapping[str, Any]) -> list[Any] | None:
    """What a `tool-result` part's output is made of (`toModelOutput`'s `{type: "content", value}`), else None."""
    output = part.get("output") if part.get("type") == "tool-result" else None
    if isinstance(output, Mapping) and output.get("type") == "content" and isinstance(output.get("value"), list):
        return output["value"]
    return None


def _media_message(item: Mapping[str, Any]) -> Message:
    """A prompt message holding media: each part as the generic reader reads it, but a file and a content result."""
    parts: list[Part] = []
    for raw in item["content"]:
        content = _content_output(raw) if isinstance(raw, Mapping) else None
        if content is not None:
            result = [part for part in map(_content_part, content) if part is not None]
            parts.append(Part("tool_result", call_id=_text(raw.get("toolCallId")), name=_text(raw.get("toolName")),
                              text="\n".join(p.text for p in result if p.kind == "text" and p.text),
                              result_parts=result))
            continue
        part = _file(raw.get("mediaType"), raw.get("data"), raw.get("filename")) if (
            isinstance(raw, Mapping) and raw.get("type") == "file") else parse_part(raw)
        if part is not None:
            parts.append(part)
    return Message(str(item.get("role") or "user").lower(), parts)


def _content_part(raw: Any) -> Part | None:
    """One part of a tool's content result: text, or a file in any of the shapes AI SDK 5-7 give it."""
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    if kind == "file" or kind in _LEGACY_DATA:
        return _file(raw.get("mediaType"), raw.get("data"), raw.get("filename"))
    if kind in _LEGACY_URL:
        return Part("media", media_type=_text(raw.get("mediaType")) or _LEGACY_URL[kind], uri=_text(raw.get("url")))
    return parse_part(raw)


def _file(media_type: Any, data: Any, filename: Any) -> Part:
    """A file part: its `data` a URL (a string naming a scheme: base64 has no colon) or base64 (sent as a data URL),
    or AI SDK 7's tagged data; a provider's file reference names no payload."""
    media = _text(media_type)
    if isinstance(data, Mapping):
        tag = data.get("type")
        data = data.get("data") if tag == "data" else data.get("url") if tag == "url" else None
    uri = None
    if isinstance(data, str) and data:
        uri = data if ":" in data[:64] else f"data:{media or 'application/octet-stream'};base64,{data}"
    return Part("media", media_type=media, uri=uri, name=_text(filename))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
