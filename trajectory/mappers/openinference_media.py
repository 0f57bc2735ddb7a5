"""A media content part of a message as OpenInference records it: its URL, or the placeholder for one it kept out.

OpenInference writes an image of a message as `message.contents.<k>.message_content.image.image.url` (the openai
instrumentation from an `image_url` part; LangChain's, Agno's and the others alike). Every instrumentation's
`TraceConfig` masks that attribute before it is set (openinference-instrumentation's `config.py`, `mask`): a base64
data URL longer than `OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH` (32,000 characters by default) is handed to a configured
`BlobUploader`, whose URI is then recorded, and with none (the default), or an upload that fails, the URL is replaced by
`__REDACTED__` (`REDACTED_VALUE`); the openai instrumentation writes the same in `input.value`. So `__REDACTED__` is no
image's address: the image was sent, and its payload is in no attribute of the message. It is read as a media part with
no URL, saying so (`Part.text`, which `trajectory/media.py` shows in place of the image), not as an image at
`__REDACTED__`; where the span holds the image elsewhere (openai-agents' unmasked `input.value`), that emitter's mapper
gives it back its URL (`openai_agents_images.read_input_images`). (An image
hidden by `OPENINFERENCE_HIDE_INPUT_IMAGES` has no URL attribute at all: a media part with none.)

Seen in a real capture: tests/captures/openai-sdk_openinference_image (turn 2's 50,086-character PNG data URL).
"""

from __future__ import annotations

from evalkit.trajectory.operations import Part

REDACTED = "__REDACTED__"
REDACTED_IMAGE = "not recorded (redacted by OpenInference: a base64 image over its size limit)"
_REDACTED_MEDIA = "not recorded (redacted by OpenInference)"  # the size rule reads image URLs alone


def media_part(kind: str, url: object) -> Part:
    """A content part of `kind` (image, audio, …) at `url` as recorded, the placeholder read as what it stands for."""
    if url == REDACTED:
        return Part("media", media_type=kind, text=REDACTED_IMAGE if kind == "image" else _REDACTED_MEDIA)
    return Part("media", media_type=kind, uri=url if isinstance(url, str) else None)
