"""Images in an Agno run's model calls, as OpenInference's Agno instrumentation records them
(`openinference-instrumentation-agno`, `_model_wrapper.py`).

Agno takes a run's images as `agno.media.Image`s (`agent.run(..., images=[...])`): raw `content` bytes, a `url` or a
`filepath`. Its models send them with the user message (OpenAIChat: `image_url` parts, bytes as a base64 data URL whose
type is the image's `mime_type`, else its `format`, else the bytes' magic, else JPEG: `agno.utils.media.
resolve_image_mime_type`). The instrumentation writes a message's `message.content` as Agno's `get_content_string()`,
its text alone: no image is in the message attributes. The call span's `input.value`, though, is every message as
`Message.to_dict()` (`{"messages": [...]}`), each image there as Agno's `Image.to_dict()`: `content` the bare base64,
or `url`, or `filepath`, with `mime_type` / `format` when given. So each input message is given its images from
`input.value` (`read_images`), as the media parts the model was sent: paired with the attributes' messages in order
(the instrumentation writes the system, user, assistant and tool messages, each at its place); where they do not pair
one to one, role for role, nothing is changed.

A tool may return `ToolResult(content=..., images=[...])`. A tool message carries no image, so Agno sends the content
as the tool message and, after the batch's tool messages, a user message of its own holding every image the batch's
tools returned: "The tool call above generated the attached media." (`Model._handle_function_call_media`). The tool
span records the content alone (`output.value`), and no span says which tool returned which image. Where the batch
holds one tool message, its images are that tool's: they become its result's parts (`Part.result_parts`, its text
then the images, as the model was shown them together) and Agno's message is no message of the conversation (no
question of the user's). Where the batch holds several, which tool returned them is recorded nowhere: Agno's message
stays as sent, a user message with the images.

Audio, video and files are left as the attributes have them (no capture shows them).

Seen in a real capture: tests/captures/agno_openinference_image (a PNG given as bytes, an https URL, a PNG of 37 KB;
`get_map` returning a `ToolResult` with a PNG beside another tool, then alone).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

# The user message Agno adds after a batch's tool messages to carry the media its tools returned (models/base.py).
TOOL_MEDIA_NOTE = "The tool call above generated the attached media."
# The roles the instrumentation writes a message of (`_llm_input_messages`); it skips any other.
_WRITTEN_ROLES = ("system", "user", "assistant", "tool")
# Agno's magic-byte detection (agno/utils/media.py `get_image_type`), for bytes given no type.
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"))


def read_images(call: LlmCall, input_value: object) -> None:
    """The images Agno sent with the call's input messages, from the span's `input.value`, as media parts of those
    messages; a tool's images its own result's parts where its batch holds no other tool message."""
    if not isinstance(input_value, str) or '"images"' not in input_value:
        return  # the usual call: no image, `input.value` (the whole conversation) not parsed
    recorded = parse_json(input_value)
    items = recorded.get("messages") if isinstance(recorded, dict) else None
    if not isinstance(items, list):
        return
    written = [item for item in items if isinstance(item, dict) and item.get("role") in _WRITTEN_ROLES]
    messages = call.input_messages
    if len(written) != len(messages) or any(item["role"] != message.role for item, message in zip(
            written, messages, strict=True)):
        return
    for item, message in zip(written, messages, strict=True):
        images = item.get("images")
        if isinstance(images, list):
            message.parts += [part for part in map(_image_part, images) if part is not None]
    call.input_messages = _tool_media_as_results(messages)


def _image_part(image: Any) -> Part | None:
    """An `Image.to_dict()` as the media part the model was sent: bytes as a data URL (typed as Agno types them), a URL
    or a file path as it is."""
    if not isinstance(image, dict):
        return None
    content, url, path = image.get("content"), image.get("url"), image.get("filepath")
    if isinstance(content, str) and content:
        return Part("media", media_type="image", uri=f"data:{_media_type(image, content)};base64,{content}")
    if isinstance(url, str) and url:
        return Part("media", media_type=_declared_type(image) or "image", uri=url)
    if isinstance(path, str) and path:
        return Part("media", media_type=_declared_type(image) or "image", uri=path)
    return None


def _declared_type(image: dict[str, Any]) -> str | None:
    mime, image_format = image.get("mime_type"), image.get("format")
    if isinstance(mime, str) and mime:
        return mime
    return f"image/{image_format.lower()}" if isinstance(image_format, str) and image_format else None


def _media_type(image: dict[str, Any], payload: str) -> str:
    """The type Agno sends bytes as: the image's `mime_type`, its `format`, the bytes' magic, else JPEG."""
    declared = _declared_type(image)
    if declared:
        return declared
    try:
        head = base64.b64decode(payload[:64], validate=False)
    except (binascii.Error, ValueError):
        return "image/jpeg"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), "image/jpeg")


def _tool_media_as_results(messages: list[Message]) -> list[Message]:
    """The messages with each of Agno's tool-media messages that follows a single tool message folded into that
    tool's result: its images after the result's text, the message itself gone."""
    kept: list[Message] = []
    for message in messages:
        if message.role == "user" and message.text.strip() == TOOL_MEDIA_NOTE:
            media = [part for part in message.parts if part.kind == "media"]
            batch = _trailing_tool_messages(kept)
            if media and len(batch) == 1 and len(batch[0].tool_results) == 1:
                result = batch[0].tool_results[0]
                result.result_parts = [Part("text", text=result.text), *media] if result.text else media
                continue
        kept.append(message)
    return kept


def _trailing_tool_messages(messages: list[Message]) -> list[Message]:
    """The tool messages at the end of `messages`: the results of the last answer's calls, sent so far."""
    found: list[Message] = []
    for message in reversed(messages):
        if not message.tool_results:
            break
        found.append(message)
    return found
