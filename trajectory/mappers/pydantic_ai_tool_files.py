"""Pydantic AI's tool files as its OpenAI Chat Completions adapter shows them: "See file <id>." in the tool message.

The Chat Completions API's tool messages are text only. So pydantic-ai's `OpenAIChatModel` (one of the adapters whose
`_relocates_tool_files` is set) sends a tool return holding files as `model_response_str_and_user_content()`: the tool
message says "See file <identifier>." for each file (a return that is one file: that text alone; a list: the JSON array
of its items, each file replaced by that text, each other item as pydantic's compact JSON of it), and the files follow
in a user message it adds after the request's tool messages, each framed by `<pyai:tool_result tool_name=…
tool_call_id=… file_id=…>` tags. That user message is the framework's packaging of the tool's result, no message of the
user. So read in pydantic-ai 2.78 (messages.py, models/openai/_chat_model.py `_map_user_message`).

No span records the text or that user message: the tool span and the next call's input record the return itself, each
file the media part its prompt records it as (`blob` with the base64, `uri`). The identifier is derived as pydantic-ai
derives it (`_multi_modal_content_identifier`): the first six hex digits of the SHA-1 of a `BinaryContent`'s bytes, of
an `ImageUrl`'s URL. A file given an identifier of its own (`BinaryContent(identifier=…)`) records it nowhere: such a
return, one whose file has no payload recorded (`include_binary_content=False`) or of another kind (an uploaded file),
is left as the tool recorded it (its image, no text) rather than given a guessed name.

The spans name the provider (`openai`), not the adapter, and the Responses adapter sends the files in the
`function_call_output` itself (`_map_tool_return_output`: no such text). What tells them apart is the answer that asked
for the tool: pydantic-ai maps a Chat Completions `finish_reason` of `tool_calls` to `tool_call`, and a Responses
answer's status (`completed`) to `stop`, never `tool_call` (models/openai/_chat_completions.py `CHAT_FINISH_REASON_MAP`,
_response_fields.py `RESPONSES_FINISH_REASON_MAP`). A return is read so only where the recorded answer holding its call
finished `tool_call`.

Seen in a real capture: tests/captures/pydantic-ai_openai_image-tool (pydantic-ai 2.78, instrumentation version 6).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers import pydantic_ai
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

# The provider pydantic-ai's OpenAIChatModel names with OpenAIProvider (its `system`); its Responses model names it too.
_OPENAI = "openai"
# pydantic-ai's finish reason for a Chat Completions answer of tool calls (`tool_calls`); none a Responses answer has.
_CHAT_TOOL_CALL_FINISH = "tool_call"
_INLINE = ("blob", "binary")  # a file recorded with its base64 (`content`)


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each OpenAI Chat Completions call given the text its tool messages showed the model for returns holding files;
    a return already read otherwise (an errored one, `pydantic_ai_tool_errors`) is left as it is."""
    del spans  # each call's own input holds both the returns and the answers that asked for them
    for call in calls:
        if call.emitter != pydantic_ai.NAME or call.provider != _OPENAI:
            continue
        for call_id, text in _chat_file_results(call.span).items():
            call.shown_tool_results.setdefault(call_id, text)


def _chat_file_results(span: Span) -> dict[str, str]:
    """The tool message text of each return in a call's input that holds files, where a Chat Completions answer asked
    for it, by tool call id."""
    messages = parse_json(span.attributes.get("gen_ai.input.messages"))
    if not isinstance(messages, list):
        return {}
    chat_calls: set[str] = set()
    shown: dict[str, str] = {}
    for message in messages:
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, dict) or not isinstance(part.get("id"), str):
                continue
            if part.get("type") == "tool_call" and message.get("finish_reason") == _CHAT_TOOL_CALL_FINISH:
                chat_calls.add(part["id"])
            elif part.get("type") == "tool_call_response" and part["id"] in chat_calls:
                text = tool_message_text(part.get("result"))
                if text is not None:
                    shown[part["id"]] = text
    return shown


def tool_message_text(result: Any) -> str | None:
    """The tool message `model_response_str_and_user_content()` sends for a recorded return: "See file <id>." for a
    file, a list the JSON array of its items with each file so replaced; None for a return holding no file, or a file
    whose identifier the record does not give."""
    items = result if isinstance(result, list) else [result]
    if not any(pydantic_ai.is_file(item) for item in items):
        return None
    shown: list[Any] = []
    for item in items:
        if not pydantic_ai.is_file(item):
            shown.append(item)
            continue
        identifier = _identifier(item)
        if identifier is None:
            return None
        shown.append(f"See file {identifier}.")
    if not isinstance(result, list):
        return str(shown[0])
    return "[" + ",".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in shown) + "]"


def _identifier(file: dict[str, Any]) -> str | None:
    """pydantic-ai's default identifier of a recorded file: the SHA-1 of its bytes (`BinaryContent`) or of its URL
    (`ImageUrl` and the other media URLs), its first six hex digits."""
    if file.get("type") in _INLINE:
        payload = file.get("content")
        if not isinstance(payload, str):
            return None  # recorded without its bytes
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
    else:
        url = file.get("uri", file.get("url"))
        if not isinstance(url, str):
            return None  # an uploaded file (`file_id`): identified otherwise
        data = url.encode("utf-8")
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:6]
