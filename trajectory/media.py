"""Images in a user's message (and a tool's result) as ATIF image content parts, a large payload referenced, not
inlined; and the payload a reference names, read back from its span.

Emitters record an image as a URL, a file path or a whole base64 data URL (OpenAI's `image_url`,
GenAI `uri` / `blob` parts). Pasted into the message as text, a data URL makes a screenshot a
megabyte of base64 in every step. So an image becomes an ATIF `{"type": "image", "source":
{"media_type", "path"}}` part: a URL or path as it is; a small data URL (up to `INLINE_LIMIT`
characters) as itself, being a URL; a larger one by reference to the span that holds it:
`evalkit-span://<trace id>/<span id>/input/<n>` (the n-th media part of the span's input, all its
messages in order) or `…/result/<n>` (of a tool span's result), its media type and size in the
step's `extra.media`. `GET /api/agents/{agent}/sessions/{id}/media?ref=<the reference>` answers its bytes
(`referenced_image`), read back from the span; the session page shows it (ui/images.py).
Audio alike: an ATIF audio part (`{"type": "audio", "source": {"media_type", "path", "duration_sec"}}`, ATIF v1.8's,
the document then declaring that version: `atif.version_for`), its payload inlined or referenced by the same rule and
read back the same way. Media ATIF has no part for (documents, an image or audio of no known type) stays a text marker.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from evalkit.trajectory.atif import AUDIO_MEDIA_TYPE_ALIASES, AUDIO_MEDIA_TYPES
from evalkit.trajectory.operations import LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import Span

Json = dict[str, Any]

INLINE_LIMIT = 4096
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_EXTENSIONS = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
               "webp": "image/webp"}


def _media_type(part: Part) -> str | None:
    uri = part.uri or ""
    if uri.startswith("data:"):
        declared = uri[5:].split(";", 1)[0].split(",", 1)[0].strip().lower()
        return declared or None
    media = (part.media_type or "").lower()
    if media in IMAGE_TYPES:
        return media
    if media == "image/jpg":
        return "image/jpeg"
    extension = uri.rsplit("?", 1)[0].rsplit(".", 1)[-1].lower() if "." in uri else ""
    return _EXTENSIONS.get(extension) or (media if "/" in media else None)


def _audio_type(media_type: str | None) -> str | None:
    """The ATIF audio media type `media_type` is (an alias read as Harbor normalises it), None if it is no audio's."""
    audio = AUDIO_MEDIA_TYPE_ALIASES.get(media_type or "", media_type)
    return audio if audio in AUDIO_MEDIA_TYPES else None


def wav_seconds(clip: bytes) -> float | None:
    """A WAV file's length in seconds (its start is enough): its `data` chunk's size over its `fmt ` chunk's byte
    rate; None for what is no WAV file."""
    if len(clip) < 12 or clip[:4] != b"RIFF" or clip[8:12] != b"WAVE":
        return None
    position, byte_rate = 12, 0
    while position + 8 <= len(clip):
        kind, size = clip[position:position + 4], struct.unpack("<I", clip[position + 4:position + 8])[0]
        if kind == b"fmt " and size >= 12 and position + 20 <= len(clip):
            byte_rate = struct.unpack("<I", clip[position + 16:position + 20])[0]
        elif kind == b"data":
            return round(size / byte_rate, 3) if byte_rate else None
        position += 8 + size + (size & 1)
    return None


def _data_url_seconds(uri: str) -> float | None:
    """How long a WAV base64 data URL plays, read from its header (the payload's first bytes)."""
    header, _, payload = uri[5:].partition(",") if uri.startswith("data:") else ("", "", "")
    if not header.endswith(";base64"):
        return None
    start = payload[:4096]  # 3 KB: a WAV header and the chunks before its data, however many
    try:
        return wav_seconds(base64.b64decode(start[:len(start) // 4 * 4], validate=False))
    except (binascii.Error, ValueError):
        return None


def _marker(part: Part, media_type: str | None) -> str:
    uri = part.uri or ""
    label = media_type or part.media_type or "media"
    if part.name:  # a document's title: which of the files sent it is
        label = f'{label} "{part.name}"'
    if uri.startswith("data:"):
        return f"[{label}: {_payload_bytes(uri)} bytes, omitted]"
    if uri:
        return f"[{label}: {uri}]"
    # Media whose payload no span holds: what the emitter says of it (`Part.text`: redacted), not a broken image.
    return f"[{label}: {part.text}]" if part.text else f"[{label}]"


def _payload_bytes(data_url: str) -> int:
    """The size of a data URL's payload once decoded (a PDF's bytes, not its base64's characters)."""
    header, _, payload = data_url[5:].partition(",")
    if header.endswith(";base64"):
        return len(payload) * 3 // 4 - payload[-2:].count("=")
    return len(unquote_to_bytes(payload))


def user_content(text: str, parts: list[Part], span: Span, where: str = "input",
                 first: int = 0) -> tuple[str | list[Json], list[Json]]:
    """A user message with media `parts`: the ATIF message (content parts when an image or audio is among
    them, else text) and the step's `extra.media` entries for images and audio referenced rather than inlined
    (`where` in `span` holds them: its input, or a tool span's result; `first`: how many media parts
    come before these there, so that a reference names one part of the span)."""
    content: list[Json] = [{"type": "text", "text": text}] if text else []
    markers: list[str] = []
    referenced: list[Json] = []
    images = 0
    for index, part in enumerate(parts):
        media_type = _media_type(part)
        audio = _audio_type(media_type)
        uri = part.uri or ""
        # An image no span holds (its emitter says why: `Part.text`) is a marker too: no reference could read it back.
        if (media_type not in IMAGE_TYPES and audio is None) or (not uri and part.text):
            markers.append(_marker(part, media_type))
            continue
        if uri and (not uri.startswith("data:") or len(uri) <= INLINE_LIMIT):
            path = uri
        else:
            path = f"evalkit-span://{span.trace_id}/{span.span_id}/{where}/{first + index}"
            entry: Json = {"path": path, "media_type": audio or media_type}
            if uri:
                payload = uri.split(",", 1)[1] if "," in uri else ""
                entry["bytes"] = len(payload) * 3 // 4 - payload[-2:].count("=")
            referenced.append(entry)
        if audio is not None:
            source: Json = {"media_type": audio, "path": path}
            seconds = _data_url_seconds(uri) if audio == "audio/wav" else None
            if seconds is not None:  # how long it plays, where the clip says (a WAV file's header)
                source["duration_sec"] = seconds
            content.append({"type": "audio", "source": source})
        else:
            content.append({"type": "image", "source": {"media_type": media_type, "path": path}})
        images += 1
    if not images:
        return "\n".join([text, *markers]) if text else "\n".join(markers), []
    if markers:
        content.append({"type": "text", "text": "\n".join(markers)})
    return content, referenced


def tool_result_content(parts: list[Part], span: Span, where: str = "result",
                        first: int = 0) -> tuple[str | list[Json], list[Json]]:
    """A tool's result holding media (`ToolExecution.result_parts`: a screenshot tool's image) as a user message's
    is: ATIF lets an observation result be content parts too. Its text first, then the images, a large one (or one
    recorded as base64 alone, no data URL) referenced at the tool span's result
    (`evalkit-span://<trace id>/<span id>/result/<n>`), or, for a result only a call's input shows
    (`Part.result_parts`), in that call span's input (`where="input"`, `first`: as `user_content`); the result's
    `extra.media` entries beside."""
    text = "\n".join(part.text for part in parts if part.kind != "media" and part.text)
    return user_content(text, [part for part in parts if part.kind == "media"], span, where=where, first=first)


def input_media(messages: Sequence[Message]) -> list[Part]:
    """Every media part of a call's input, in order, a tool result's (`Part.result_parts`) at its place: what a
    reference's `input/<n>` counts."""
    return [media for message in messages for part in message.parts
            for media in (part.result_parts or () if part.kind == "tool_result" else (part,)) if media.kind == "media"]


@dataclass(frozen=True, slots=True)
class Image:
    """The bytes of an image a trajectory references, and their media type."""

    media_type: str
    data: bytes


class NoImage(LookupError):
    """A reference that names no image its span holds; the message says what it does hold."""


@dataclass(frozen=True, slots=True)
class Reference:
    """Where `evalkit-span://<trace id>/<span id>/<input|result>/<n>` points."""

    trace_id: str
    span_id: str
    where: str
    n: int


def parse_reference(ref: str) -> Reference:
    """The reference a trajectory's image part names; ValueError saying what is wrong with any other string."""
    prefix = "evalkit-span://"
    pieces = ref[len(prefix):].split("/") if ref.startswith(prefix) else []
    if len(pieces) != 4 or not all(pieces) or pieces[2] not in ("input", "result") or not pieces[3].isdigit():
        raise ValueError(f"{ref[:120]!r} is not an image reference of a trajectory: those read "
                         f"{prefix}<trace id>/<span id>/<input or result>/<n>, as an image part's source.path holds it")
    return Reference(pieces[0], pieces[1], pieces[2], int(pieces[3]))


def media_parts(operation: Operation | None, where: str) -> list[Part]:
    """The media parts a mapped span holds where a reference points: an LLM call's input (every message, in order),
    a tool's result."""
    if where == "input" and isinstance(operation, LlmCall):
        return input_media(operation.input_messages)
    if where == "result" and isinstance(operation, ToolExecution):
        return [part for part in operation.result_parts or () if part.kind == "media"]
    return []


def referenced_image(operation: Operation | None, where: str, n: int) -> Image:
    """The image (or audio clip) `evalkit-span://…/<where>/<n>` names in the span mapped to `operation`: its data URL
    decoded."""
    parts = media_parts(operation, where)
    if not 0 <= n < len(parts):
        raise NoImage(f"the span's {where} holds {len(parts)} media part(s), so none numbered {n}")
    part = parts[n]
    media_type = _media_type(part)
    uri = part.uri or ""
    served = _audio_type(media_type) or (media_type if media_type in IMAGE_TYPES else None)
    if served is None:
        raise NoImage(f"media part {n} of the span's {where} is {media_type or 'of no known type'}, not an image "
                      f"({', '.join(IMAGE_TYPES)}) nor audio ({', '.join(AUDIO_MEDIA_TYPES)})")
    if not uri.startswith("data:") or "," not in uri:
        why = f": {part.text}" if part.text else ""
        raise NoImage(f"media part {n} of the span's {where} holds no data{why}"
                      + (f" (it names {uri})" if uri else ""))
    header, payload = uri[5:].split(",", 1)
    try:
        data = base64.b64decode(payload, validate=False) if header.endswith(";base64") else unquote_to_bytes(payload)
    except (binascii.Error, ValueError) as exc:
        raise NoImage(f"media part {n} of the span's {where} is a data URL that does not decode ({exc})") from exc
    return Image(served, data)
