"""Images in openai-agents' Responses calls and in its function tools' outputs, as OpenInference's openai-agents
instrumentation records them (`openinference-instrumentation-openai-agents`, `_processor.py`).

A user message's `input_image` part with an `image_url` is written as the message's content part
(`message.contents.<k>.message_content.image.image.url`), which the instrumentation's `TraceConfig` masks: a base64
data URL over `OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH` (32,000 characters by default) becomes `__REDACTED__`
(`openinference_media.py`). The response span's `input.value`, though, is the SDK's input items as they were sent
(`safe_json_dumps(input)`), which nothing masks: the image is in the span after all. So each image redacted in the
message attributes is given its URL from `input.value` (`read_input_images`), paired in order: every `input_image`
with an `image_url` of a message item is one image content part of the attributes, in the same order. Where they do
not pair one to one (an item the instrumentation writes otherwise), nothing is changed: the image stays "not
recorded", which the attributes say.

A function tool may return an image (`ToolOutputImage`, or a list of them and `ToolOutputText`s, or their TypedDict
forms), which the SDK sends the model as the `function_call_output`'s `input_image` (and `input_text`) parts
(`ItemHelpers._convert_tool_output`). The tool span's `output.value` is `str()` of what the tool returned: a
model's pydantic `str()` (`type='image' image_url='data:…' file_id=None detail='low'`), a JSON list of those for a
list, JSON for a dict. Read as text, the call's result would be the image's base64; it is read as the parts the model
was sent instead (`tool_result_parts`: `ToolExecution.result_parts`, an image referenced, never inlined:
trajectory/media.py). The `detail` the image was sent with is not kept: ATIF's image part has no place for it.

Seen in a real capture: tests/captures/openai-agents_openinference_image (turn 2's 50,086-character PNG data URL, a
`get_map` tool returning a `ToolOutputImage`).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openinference_media, python_repr
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Part, ToolExecution


def read_input_images(call: LlmCall, input_value: object) -> None:
    """Each image of the call's input messages the instrumentation redacted given its URL from the span's
    `input.value` (the SDK's input items, unmasked), where the two pair one to one."""
    media = [part for message in call.input_messages for part in message.parts if part.kind == "media"]
    if not any(part.uri is None and part.text == openinference_media.REDACTED_IMAGE for part in media):
        return  # the usual call: `input.value` (the whole conversation, images and all) is not parsed
    items = parse_json(input_value)
    if not isinstance(items, list):
        return
    urls = [url for item in items for url in _message_image_urls(item)]
    if len(urls) != len(media):
        return
    pairs = list(zip(media, urls, strict=True))
    if any(part.uri is not None and part.uri != url for part, url in pairs):
        return  # not the same images in the same order: nothing to pair
    for part, url in pairs:
        if part.uri is None and part.text == openinference_media.REDACTED_IMAGE:
            part.uri, part.text = url, None


def _message_image_urls(item: Any) -> list[str]:
    """The image URLs of an input item the instrumentation writes as image content parts: a message's `input_image`
    parts that have one (`_get_attributes_from_message_content_list`)."""
    if not isinstance(item, dict) or item.get("type", "message") != "message" or "role" not in item:
        return []
    content = item.get("content")
    return [part["image_url"] for part in content if isinstance(part, dict) and part.get("type") == "input_image"
            and isinstance(part.get("image_url"), str) and part["image_url"]] if isinstance(content, list) else []


def tool_execution(execution: ToolExecution) -> ToolExecution:
    """A function tool's execution with its result as the parts the model was sent where it returned an image."""
    execution.result_parts = tool_result_parts(execution.result)
    return execution


def tool_result_parts(result: Any) -> list[Part] | None:
    """A function tool's output (its span's `output.value`, JSON decoded) as the parts the model was sent, where it
    holds an image: each `ToolOutputImage` a media part at its URL, each `ToolOutputText` its text; None for any other
    output (text, a value, an image sent by file id alone: kept as recorded)."""
    items = result if isinstance(result, list) else [result]
    parts = [_output_part(item) for item in items]
    if not any(part is not None and part.kind == "media" for part in parts) or None in parts:
        return None
    return [part for part in parts if part is not None]


def _output_part(item: Any) -> Part | None:
    fields = python_repr.model_fields(item) if isinstance(item, str) and item.startswith("type=") else item
    if not isinstance(fields, dict):
        return None
    if fields.get("type") == "image" and isinstance(fields.get("image_url"), str) and fields["image_url"]:
        return Part("media", media_type="image", uri=fields["image_url"])
    if fields.get("type") == "text" and isinstance(fields.get("text"), str):
        return Part("text", text=fields["text"])
    return None
