"""Images in a user's message (and a tool's result) as ATIF image content parts, a large payload referenced, not
inlined.

Emitters record an image as a URL, a file path or a whole base64 data URL (OpenAI's `image_url`,
GenAI `uri` / `blob` parts). Pasted into the message as text, a data URL makes a screenshot a
megabyte of base64 in every step. So an image becomes an ATIF `{"type": "image", "source":
{"media_type", "path"}}` part: a URL or path as it is; a small data URL (up to `INLINE_LIMIT`
characters) as itself, being a URL; a larger one by reference to the span whose input holds it
(`evalkit-span://<trace id>/<span id>/input/<n>`: read it from that span's attributes,
`GET /api/agents/{agent}/sessions/{id}`), its media type and size in the step's `extra.media`.
Media ATIF has no part for (audio, documents, an image of no known type) stays a text marker.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.operations import Part
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


def _marker(part: Part, media_type: str | None) -> str:
    uri = part.uri or ""
    label = media_type or part.media_type or "media"
    if uri.startswith("data:"):
        return f"[{label}: {len(uri)} characters of data, omitted]"
    if uri:
        return f"[{label}: {uri}]"
    # Media whose payload no span holds: what the emitter says of it (`Part.text`: redacted), not a broken image.
    return f"[{label}: {part.text}]" if part.text else f"[{label}]"


def user_content(text: str, parts: list[Part], span: Span,
                 where: str = "input") -> tuple[str | list[Json], list[Json]]:
    """A user message with media `parts`: the ATIF message (content parts when an image is among
    them, else text) and the step's `extra.media` entries for images referenced rather than inlined
    (`where` in `span` holds them: its input, or a tool span's result)."""
    content: list[Json] = [{"type": "text", "text": text}] if text else []
    markers: list[str] = []
    referenced: list[Json] = []
    images = 0
    for index, part in enumerate(parts):
        media_type = _media_type(part)
        uri = part.uri or ""
        if media_type not in IMAGE_TYPES:
            markers.append(_marker(part, media_type))
            continue
        if uri and (not uri.startswith("data:") or len(uri) <= INLINE_LIMIT):
            path = uri
        else:
            path = f"evalkit-span://{span.trace_id}/{span.span_id}/{where}/{index}"
            entry: Json = {"path": path, "media_type": media_type}
            if uri:
                payload = uri.split(",", 1)[1] if "," in uri else ""
                entry["bytes"] = len(payload) * 3 // 4 - payload[-2:].count("=")
            referenced.append(entry)
        content.append({"type": "image", "source": {"media_type": media_type, "path": path}})
        images += 1
    if not images:
        return "\n".join([text, *markers]) if text else "\n".join(markers), []
    if markers:
        content.append({"type": "text", "text": "\n".join(markers)})
    return content, referenced


def tool_result_content(parts: list[Part], span: Span) -> tuple[str | list[Json], list[Json]]:
    """A tool's result holding media (`ToolExecution.result_parts`: a screenshot tool's image) as a user message's
    is: ATIF lets an observation result be content parts too. Its text first, then the images, a large one (or one
    recorded as base64 alone, no data URL) referenced at the tool span's result
    (`evalkit-span://<trace id>/<span id>/result/<n>`); the result's `extra.media` entries beside."""
    text = "\n".join(part.text for part in parts if part.kind != "media" and part.text)
    return user_content(text, [part for part in parts if part.kind == "media"], span, where="result")
