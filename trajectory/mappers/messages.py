"""Chat messages in the JSON shapes emitters write, read into `Message`s.

One reader for the shapes that recur across emitters: OTel GenAI parts
(`{role, parts:[{type:"text",content}, {type:"tool_call",...}]}`), OpenAI chat
(`{role, content, tool_calls:[{id, function:{name, arguments}}], tool_call_id}`),
Vercel AI SDK parts (`tool-call`, `tool-result`), Anthropic content blocks
(`tool_use`, `tool_result`, `thinking`), Bedrock Converse blocks (`{"toolUse": …}`,
`{"toolResult": …}`, `{"reasoningContent": …}`: Strands) and bare strings.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from itertools import compress
from operator import not_
from typing import Any

from evalkit.trajectory.mappers import hosted_tool_definitions
from evalkit.trajectory.mappers.reader import orjson, parse_json
from evalkit.trajectory.mappers.resent_history import Resent, ResentLists, skip_blank
from evalkit.trajectory.operations import Message, Part

_MISSING: Any = object()  # a key that is absent, told apart from one set to None
# Bedrock blocks holding media: their payload is `source.bytes`, which no JSON holds. Strands' tracer writes what JSON
# cannot hold as "<replaced>" (telemetry/tracer.py `JSONEncoder._process_value`), so such a block's payload is in no
# span, under either conventions: the media part says so (trajectory/media.py shows it as a marker, not an image).
BEDROCK_MEDIA = ("image", "document", "video")
UNSERIALIZED = "<replaced>"
UNRECORDED_BYTES = "not recorded (Strands' tracer writes its bytes as <replaced>)"
# From this many messages a list is looked up in the memo in bulk (`MessageMemo.parse_all`).
_MANY_MESSAGES = 8
# The keys of an OTel GenAI message (`{role, parts, finish_reason, name}`): one that has no other needs
# none of the other shapes' fields looked for (`_add_parts_of_other_shapes`), which most messages are.
_GENAI_MESSAGE_KEYS = frozenset(("role", "parts", "finish_reason", "name"))
_REASONING_TYPES = {"reasoning", "thinking", "redacted_thinking"}
_TEXT_TYPES = {"text", "input_text", "output_text"}
_TOOL_CALL_TYPES = {"tool_call", "tool-call", "tool_use", "function_call"}
_TOOL_RESULT_TYPES = {"tool_call_response", "tool-result", "tool_result", "function_call_output"}
# Media parts recorded with their base64 payload in `content`, no URL.
_INLINE_MEDIA_TYPES = frozenset(("blob", "binary"))
_MEDIA_TYPES = {
    "blob",
    "file",
    "uri",
    "file_data",  # Google ADK's converter's name for the conventions' `uri` part (`types.FileData`: uri, mime_type)
    "image",
    "image_url",
    "image-url",
    "audio-url",
    "video-url",
    "document-url",
    "binary",
    "input_image",
    "audio",
    "document",
}


def render(value: Any) -> str:
    """A result or argument as text: strings as they are, anything else as compact JSON."""
    if type(value) is str:  # the usual case, ahead of the None and subclass checks
        return value
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_arguments(value: Any) -> Any:
    """Tool arguments decoded when they arrived as a JSON string."""
    return parse_json(value) if isinstance(value, str | bytes) else value


def _tool_result_text(value: Any) -> str:
    # Vercel v5+ wraps results as {"type": "text"|"json", "value": ...}.
    if isinstance(value, Mapping) and set(value) <= {"type", "value"} and "value" in value:
        return render(value["value"])
    if isinstance(value, list) and all(
        isinstance(item, Mapping) and item.get("type") == "text" for item in value
    ):
        return "\n".join(str(item.get("text", "")) for item in value)
    return render(value)


def _is_mapping(value: Any) -> bool:
    # `isinstance(x, Mapping)` goes through the ABC machinery; decoded JSON is plain dicts.
    return type(value) is dict or isinstance(value, Mapping)


def _bedrock_block(kind: str, body: Any) -> Part | None:
    """A Bedrock Converse content block (Strands' messages): one key naming its kind, no `type`."""
    if not _is_mapping(body):
        return None
    if kind == "toolUse":
        return Part("tool_call", call_id=_str_or_none(body.get("toolUseId")), name=_str_or_none(body.get("name")),
                    arguments=parse_arguments(body.get("input")))
    if kind == "toolResult":
        blocks = body.get("content")
        result_parts = bedrock_result_parts(blocks)
        if result_parts is not None:
            text = "\n".join(part.text for part in result_parts if part.kind != "media" and part.text)
            return Part("tool_result", call_id=_str_or_none(body.get("toolUseId")), text=text,
                        result_parts=result_parts)
        text = "\n".join(
            render(block["text"]) if "text" in block else render(block.get("json", block))
            for block in blocks if _is_mapping(block)
        ) if isinstance(blocks, list) else render(blocks)
        return Part("tool_result", call_id=_str_or_none(body.get("toolUseId")), text=text)
    if kind == "reasoningContent":
        reasoning = body.get("reasoningText")
        text = reasoning.get("text") if _is_mapping(reasoning) else body.get("text")
        return Part("reasoning", text=render(text) if text is not None else None)
    if kind in BEDROCK_MEDIA:
        form = body.get("format")
        source = body.get("source")
        unrecorded = _is_mapping(source) and source.get("bytes") == UNSERIALIZED
        return Part("media", media_type=f"{kind}/{form}" if form else kind,
                    text=UNRECORDED_BYTES if unrecorded else None)
    return None


def bedrock_result_parts(blocks: Any) -> list[Part] | None:
    """A toolResult's content blocks holding media (a screenshot tool's `image` block) as its parts, each text or
    JSON block a text part, the media never rendered as text (their JSON); None for content of no media block."""
    if not isinstance(blocks, list) or not any(_is_mapping(block) and len(block) == 1 and next(iter(block)) in
                                               BEDROCK_MEDIA for block in blocks):
        return None
    parts = []
    for block in blocks:
        if not _is_mapping(block):
            continue
        if "text" in block or "json" in block:
            parts.append(Part("text", text=render(block.get("text", block.get("json")))))
        elif (part := parse_part(block)) is not None:
            parts.append(part)
    return parts


def parse_part(raw: Any) -> Part | None:
    if type(raw) is dict and raw.get("type") == "text":
        # The usual part, ahead of the general reading below (which makes the same of it).
        text = raw.get("content", _MISSING)
        if text is _MISSING:
            text = raw.get("text")
        return Part("text", text=text if type(text) is str else render(text))
    if isinstance(raw, str):
        return Part("text", text=raw)
    if not (type(raw) is dict or isinstance(raw, Mapping)):
        return None
    kind_value = raw.get("type", _MISSING)
    if kind_value is _MISSING and len(raw) == 1:
        ((block_kind, body),) = raw.items()
        block = _bedrock_block(block_kind, body)
        if block is not None:
            return block
    if kind_value is _MISSING:
        kind = "text" if "text" in raw or "content" in raw else ""
    else:
        kind = (kind_value if type(kind_value) is str else str(kind_value)).lower()
    if kind in _TEXT_TYPES:
        text = raw.get("content", _MISSING)
        if text is _MISSING:
            text = raw.get("text")
        return Part("text", text=text if type(text) is str else render(text))
    if kind in _REASONING_TYPES:
        text = raw.get("content", raw.get("text", raw.get("thinking", raw.get("reasoning"))))
        return Part("reasoning", text=render(text) if text is not None else None)
    if kind in _TOOL_CALL_TYPES:
        function: Mapping[str, Any] = raw["function"] if _is_mapping(raw.get("function")) else {}
        arguments = raw.get("arguments", raw.get("args", raw.get("input", function.get("arguments"))))
        return Part(
            "tool_call",
            # A Responses `function_call` item has an id of its own (`fc_…`) beside the `call_id` its output names.
            call_id=_str_or_none(raw["call_id"] if "call_id" in raw else raw.get("id", raw.get("toolCallId"))),
            name=_str_or_none(raw.get("name", raw.get("toolName", function.get("name")))),
            arguments=parse_arguments(arguments),
        )
    if kind in _TOOL_RESULT_TYPES:
        result = raw.get("response", raw.get("result", raw.get("output", raw.get("content"))))
        result_parts = _media_result_parts(result)
        return Part(
            "tool_result",
            call_id=_str_or_none(raw["call_id"] if "call_id" in raw
                                 else raw.get("id", raw.get("toolCallId", raw.get("tool_use_id")))),
            name=_str_or_none(raw.get("name", raw.get("toolName"))),
            text=_tool_result_text(result) if result_parts is None
            else "\n".join(part.text for part in result_parts if part.kind == "text" and part.text),
            result_parts=result_parts,
        )
    if kind in _MEDIA_TYPES:
        uri = raw.get("uri", raw.get("url", raw.get("image_url", raw.get("image"))))
        if _is_mapping(uri):
            uri = uri.get("url")
        media = raw.get("mime_type", raw.get("media_type", raw.get("mimeType", raw.get("modality", kind))))
        payload = raw.get("content")
        if isinstance(payload, bytes) and kind in _INLINE_MEDIA_TYPES:
            # The same part in a log record's body (the conventions' event form, as opentelemetry-util-genai emits
            # it): the payload as OTLP bytes, which only a JSON attribute writes as base64.
            payload = base64.b64encode(payload).decode("ascii")
        if uri is None and kind in _INLINE_MEDIA_TYPES and isinstance(payload, str) and isinstance(media, str):
            # The GenAI `blob` part (pydantic-ai's `binary` before it) holds the base64 alone: as a data URL, it is
            # shown, inlined or referenced, as any other image sent whole (trajectory/media.py).
            uri = f"data:{media};base64,{payload}"
        if uri is None and kind in BEDROCK_MEDIA and isinstance(payload, Mapping) and "source" in payload:
            # Strands' own part for a Bedrock media block under the latest GenAI conventions (telemetry/tracer.py
            # `_map_content_blocks_to_otel_parts`: `{"type": <the block's key>, "content": <its body>}`).
            return _bedrock_block(kind, payload)
        source = raw.get("source")
        if uri is None and isinstance(source, Mapping):
            media, uri = _anthropic_source(source, media)
        # A document's title (Anthropic's `document` block) names it where its payload is not shown.
        return Part("media", media_type=_str_or_none(media), uri=uri if isinstance(uri, str) else None,
                    name=_str_or_none(raw.get("title")))
    return Part("other", text=render(raw))


def _media_result_parts(result: Any) -> list[Part] | None:
    """A tool result of content blocks holding media (an Anthropic `tool_result` whose content has an `image` block:
    a screenshot) as its parts, the media never rendered as text (their base64); None for any other result."""
    if not isinstance(result, list) or not any(
            _is_mapping(block) and str(block.get("type", "")).lower() in _MEDIA_TYPES for block in result):
        return None
    return [part for part in map(parse_part, result) if part is not None]


def _anthropic_source(source: Mapping[str, Any], media: Any) -> tuple[Any, str | None]:
    """An Anthropic `image` / `document` block's `source` (as the API takes it, recorded whole): its media type and
    where its payload is, base64 as a data URL, a `url` source its URL; plain text and file ids name no payload."""
    media_type = source.get("media_type", media)
    data, url = source.get("data"), source.get("url")
    if source.get("type") == "base64" and isinstance(data, str) and isinstance(media_type, str):
        return media_type, f"data:{media_type};base64,{data}"
    return media_type, url if isinstance(url, str) else None


def _str_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def parse_message(raw: Any, default_role: str = "user") -> Message | None:
    if isinstance(raw, str):
        return Message(default_role, [Part("text", text=raw)])
    if not (type(raw) is dict or isinstance(raw, Mapping)):
        return None
    role_value = raw.get("role", default_role)
    role = (role_value if type(role_value) is str else str(role_value)).lower()
    parts: list[Part] = []
    raw_parts = raw.get("parts")
    has_parts = isinstance(raw_parts, list)
    if isinstance(raw_parts, list):
        for item in raw_parts:
            part = parse_part(item)
            if part is not None:
                parts.append(part)
    if not raw.keys() <= _GENAI_MESSAGE_KEYS:
        _add_parts_of_other_shapes(raw, role, parts, has_parts)
    if role == "tool":
        # A tool message's text parts are the result of the call it answers.
        call_id = _str_or_none(raw.get("tool_call_id", raw.get("id")))
        parts = [
            Part("tool_result", call_id=call_id, name=_str_or_none(raw.get("name")), text=part.text)
            if part.kind == "text"
            else part
            for part in parts
        ]
    name = raw.get("name")
    return Message(role, parts, name=None if name is None or name == "" else str(name))


def _add_parts_of_other_shapes(raw: Mapping[str, Any], role: str, parts: list[Part], has_parts: bool) -> None:
    """Adds to `parts` what the OpenAI, Anthropic and other shapes keep outside `parts`: content,
    reasoning, tool calls."""
    content = raw.get("content")
    if isinstance(content, list):
        for item in content:
            part = parse_part(item)
            if part is not None:
                parts.append(part)
    elif content is not None and not has_parts:
        text = render(content)
        if role == "tool" or raw.get("tool_call_id") is not None:
            parts.append(
                Part("tool_result", call_id=_str_or_none(raw.get("tool_call_id", raw.get("id"))), text=text)
            )
        elif text:
            parts.append(Part("text", text=text))
    for reasoning_key in ("reasoning_content", "reasoning"):
        reasoning = raw.get(reasoning_key)
        if isinstance(reasoning, str) and reasoning:
            parts.insert(0, Part("reasoning", text=reasoning))
    for call in raw.get("tool_calls") or ():
        part = parse_part({**call, "type": "tool_call"}) if _is_mapping(call) else None
        if part is not None:
            parts.append(part)


class MessageMemo:
    """The messages of one session already read, by their JSON, so a re-sent message is read once.

    Every LLM call re-sends the conversation so far: a session of n calls carries ~n²/2
    messages, almost all of them seen in the call before. Reading one into a `Message` is
    Python work per part; serialising it back to JSON for the key (orjson) is a copy in C. The
    `Message` returned for a re-sent one is the same object, so nothing may change a message
    that came from here. Bounded: a session with more distinct messages reads the rest anew.

    `first_inputs_only`: a call's input messages are read only as far as whether there are any
    (`parse_input_messages`), for a summary of the mapping that counts calls and needs no history.
    """

    def __init__(self, limit: int = 100_000, *, first_inputs_only: bool = False) -> None:
        self.limit = limit
        self.first_inputs_only = first_inputs_only
        self._size = 0
        # default role -> a message's JSON -> the message read from it.
        self._read: dict[str, dict[bytes, Message]] = {}
        # Message lists decoded against the one before: a re-sent message's JSON object is the
        # object decoded before (`resent_history`), so it is found by identity, not serialised again.
        self.lists = ResentLists()
        # default role -> id of a JSON object read -> the message read from it. Every object here is
        # kept alive in `_objects`, so no other object can come to have its id.
        self._by_object: dict[str, dict[int, Message]] = {}
        self._objects: list[Any] = []
        # The last list `parse_all` read item for item (items, default role, messages), and for each
        # list of messages it took partly from the one before, which parts (`resent`).
        self._last_read: tuple[list[Any], str, list[Message]] | None = None
        self._resent: dict[int, Resent] = {}

    def decode(self, value: Any) -> Any:
        """`reader.parse_json(value)`; a JSON array decoded against the list decoded before."""
        if type(value) is str:
            items = self.lists.decode(value)
            if items is not None:
                return items
        return parse_json(value)

    def parse(self, raw: Any, default_role: str) -> Message | None:
        if orjson is None or type(raw) is not dict:
            return parse_message(raw, default_role)
        try:
            key = orjson.dumps(raw)
        except TypeError:  # not JSON-serialisable by orjson (it came from JSON, so never expected)
            return parse_message(raw, default_role)
        table = self._read.setdefault(default_role, {})
        found = table.get(key)
        if found is not None:
            return found
        message = parse_message(raw, default_role)
        self._keep(table, key, message)
        return message

    def read_text(self, text: str, default_role: str, read: Callable[[str, str], Message | None]) -> Message | None:
        """`read(text, default_role)`, once per text in the session: for messages recorded as text that is
        not JSON (Haystack's `ChatMessage` reprs), re-sent by every call as JSON messages are."""
        table = self._read.setdefault("text:" + default_role, {})
        key = text.encode()
        found = table.get(key)
        if found is not None:
            return found
        message = read(text, default_role)
        self._keep(table, key, message)
        return message

    def parse_all(self, items: list[Any], default_role: str) -> list[Message]:
        """`parse` of each item, the messages that are not None, with no Python call per message read
        before: the elements a list re-sent from the list before (`ResentLists.resent`) are the
        messages read from that one, taken in slices; any other item costs a lookup (by identity for
        objects decoded before, else by their serialisation), in C."""
        resent = self.lists.resent
        last = self._last_read
        if resent is not None and resent.items is items and last is not None and last[0] is resent.before \
                and last[1] == default_role:
            rest = resent.rest()
            read = self._read_objects([items[index] for index in rest], default_role)
            if read is not None:
                messages = resent.carry(last[2])
                for index, message in zip(rest, read, strict=True):
                    messages[index] = message
                # Every place was filled: the carried ones from a list of messages, the rest just now.
                taken: list[Message] = messages  # type: ignore[assignment]
                self._resent[id(taken)] = Resent(taken, last[2], resent.runs)
                self._last_read = (items, default_role, taken)
                return taken
        read = self._read_objects(items, default_role)
        if read is None:
            self._last_read = None
            return [m for m in (self.parse(item, default_role) for item in items) if m is not None]
        self._last_read = (items, default_role, read)
        return read

    def resent(self, messages: list[Message]) -> Resent | None:
        """Which of a call's input messages (as `parse_all` gave them) are the list before's, the same objects."""
        found = self._resent.get(id(messages))
        return found if found is not None and found.items is messages else None

    def _read_objects(self, items: list[Any], default_role: str) -> list[Message] | None:
        """A message for each item, in order, if every item is a JSON object; else None."""
        if orjson is None or (items and set(map(type, items)) != {dict}):
            return None
        by_object = self._by_object.setdefault(default_role, {})
        ids = list(map(id, items))
        known_ids = list(map(by_object.__contains__, ids))
        if all(known_ids):
            return list(map(by_object.__getitem__, ids))
        found: list[Message | None] = list(map(by_object.get, ids))
        # Only the objects not read before are serialised (picked in C, not one Python step per item).
        unread = list(compress(range(len(items)), map(not_, known_ids)))
        try:
            keys = {index: orjson.dumps(items[index]) for index in unread}
        except TypeError:
            return None
        table = self._read.setdefault(default_role, {})
        for index in unread:
            if found[index] is None:
                key = keys[index]
                known = table.get(key)  # read before, from another object (or earlier in this call)
                if known is None:
                    # Never None: a dict always reads as a message.
                    known = parse_message(items[index], default_role)
                    assert known is not None
                    self._keep(table, key, known)
                if key in table:  # kept (the memo is bounded): found by identity from now on
                    by_object[id(items[index])] = known
                    self._objects.append(items[index])
                found[index] = known
        return found  # type: ignore[return-value]  # every None was filled in

    def _keep(self, table: dict[bytes, Message], key: bytes, message: Message | None) -> None:
        # A text that reads as no message is read again if it comes again (rare: it is not kept).
        if message is not None and self._size < self.limit:
            table[key] = message
            self._size += 1


def parse_messages(value: Any, default_role: str = "user", memo: MessageMemo | None = None) -> list[Message]:
    """Messages from a JSON string or value: a list, `{"messages": [...]}`, a single message or text.

    With a `memo`, list items read before (in this session) are not read again (see `MessageMemo`),
    nor is the JSON text of messages the list before re-sent (`MessageMemo.decode`).
    """
    value = parse_json(value) if memo is None else memo.decode(value)
    if type(value) is list:  # the usual shape; a list is never a Mapping, so this order changes nothing
        return _parse_message_list(value, default_role, memo)
    if value is None or value == "":
        return []
    if isinstance(value, Mapping):
        if isinstance(value.get("messages"), list):
            return parse_messages(value["messages"], default_role, memo)
        if isinstance(value.get("choices"), list):
            # An OpenAI chat completion response.
            return [
                message
                for choice in value["choices"]
                if isinstance(choice, Mapping)
                for message in [parse_message(choice.get("message", choice), "assistant")]
                if message is not None
            ]
        if "role" in value or "parts" in value or "tool_calls" in value:
            message = parse_message(value, default_role)
            return [message] if message else []
        if isinstance(value.get("content"), list):
            # An Anthropic messages response.
            message = parse_message({"role": value.get("role", default_role), "content": value["content"]})
            return [message] if message else []
        if "text" in value:
            return [Message(default_role, [Part("text", text=render(value["text"]))])]
        return [Message(default_role, [Part("text", text=render(value))])]
    if isinstance(value, list):
        return _parse_message_list(value, default_role, memo)
    return [Message(default_role, [Part("text", text=render(value))])]


_FIRST_ITEM = json.JSONDecoder()  # the first element of a JSON array, without reading the rest


def parse_input_messages(value: Any, memo: MessageMemo | None) -> list[Message]:
    """A call's input messages (`parse_messages`); with a `first_inputs_only` memo, a JSON array of
    messages only as far as its first one.

    Whether a call had any input is what the mappers decide on (messages from events instead, a
    fallback attribute); a summary of the mapping needs nothing more unless it must tell two reports
    of one call apart by their inputs (`same_call.may_repeat`: then the session is mapped again
    whole). Decoding an agent loop's re-sent histories was nine tenths of summarising its mapping.
    """
    if memo is not None and memo.first_inputs_only and type(value) is str:
        first = _first_message(value, memo)
        if first is not None:
            return [first]
    return parse_messages(value, memo=memo)


def _first_message(text: str, memo: MessageMemo) -> Message | None:
    """The first message of a JSON array of messages, None if `text` is not one (parse it whole).

    A first element that is an object with a role makes the array a list of messages
    (`_parse_message_list`), and an object always reads as a message: the whole array has at least
    that one, whatever the rest of the text holds (a text that is not JSON reads as one message too).
    """
    start = skip_blank(text, 0)
    if text[start : start + 1] != "[":
        return None
    try:
        item, _ = _FIRST_ITEM.raw_decode(text, skip_blank(text, start + 1))
    except (ValueError, RecursionError):
        return None
    if type(item) is not dict or "role" not in item:
        return None
    return memo.parse(item, "user")  # the task, usually: read once


def _parse_message_list(value: list[Any], default_role: str, memo: MessageMemo | None) -> list[Message]:
    for item in value:
        if not (type(item) is dict or isinstance(item, Mapping)) or "role" in item or "type" not in item:
            break  # a message (the usual first item): a list of messages
    else:
        # A bare list of parts (or nothing) is one message.
        parts = [part for part in map(parse_part, value) if part is not None]
        return [Message(default_role, parts)] if parts else []
    if memo is not None and len(value) >= _MANY_MESSAGES:
        return memo.parse_all(value, default_role)
    parse = parse_message if memo is None else memo.parse
    messages = []
    for item in value:
        message = parse(item, default_role)
        if message is not None:
            messages.append(message)
    return messages


def prompt_text(value: Any) -> str | None:
    """What an agent run was asked, from the messages its agent-level span records (GenAI
    `gen_ai.input.messages` on `invoke_agent`, pydantic-ai's `pydantic_ai.all_messages`): the text of
    the last user message that has text. A tool's result sent back as a user message (pydantic-ai's
    instrumentation version 5) has none: a run that failed after a tool call still names its prompt.
    Read from the end, message by message: a long run's conversation is not read whole for it.
    """
    value = parse_json(value)
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value = value["messages"]
    items = reversed(value) if isinstance(value, list) else parse_messages(value)
    for item in items:
        message = item if isinstance(item, Message) else parse_message(item)
        if message is not None and message.role in _USER_ROLES and message.text:
            return message.text
    return None


_USER_ROLES = frozenset(("user", "human"))


def instruction_texts(value: Any) -> list[str]:
    """System instructions (`gen_ai.system_instructions`: a list of parts, or a string)."""
    value = parse_json(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, Mapping):
        value = [value]
    texts = []
    for item in value if isinstance(value, list) else []:
        part = parse_part(item)
        if part is not None and part.text:
            texts.append(part.text)
    return texts


def openai_tool_definition(raw: Any) -> dict[str, Any] | None:
    """A tool definition in the OpenAI function-calling shape ATIF's `agent.tool_definitions` uses."""
    raw = parse_json(raw)
    if not isinstance(raw, Mapping):
        return None
    if (hosted := hosted_tool_definitions.definition(raw)) is not None:
        return hosted  # a tool the provider defines (a web search): named as offered, its options kept
    if isinstance(raw.get("function"), Mapping):
        function = dict(raw["function"])
    else:
        function = {
            key: raw[key]
            for key in ("name", "description", "parameters", "strict")
            if key in raw and raw[key] is not None
        }
        if "parameters" not in function:
            for key in ("input_schema", "inputSchema", "parameters_json_schema"):
                if key in raw:
                    function["parameters"] = raw[key]
                    break
    if "parameters" in function:
        function["parameters"] = parse_json(function["parameters"])
    if not function.get("name"):
        return None
    return {"type": "function", "function": function}
