"""The images and audio of a message or a tool's result (ATIF image and audio content parts), as a page shows them.

A page loads nothing from other sites (its Content-Security-Policy allows images and media from itself and `data:`
only), so an image or a clip is shown where the service holds it: a small one inline as the data URL the trajectory
carries, a referenced one (`evalkit-span://…`, trajectory/media.py) from the session page itself
(`?media=<reference>`, which reads it back from its span). One at another site's URL is a link to it, not loaded.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from evalkit.trajectory.atif import AUDIO_MEDIA_TYPE_ALIASES, AUDIO_MEDIA_TYPES
from evalkit.trajectory.media import IMAGE_TYPES

_INLINE = tuple(f"data:{media_type};" for media_type in IMAGE_TYPES)
_INLINE_AUDIO = tuple(f"data:{media_type}{end}" for media_type in (*AUDIO_MEDIA_TYPES, *AUDIO_MEDIA_TYPE_ALIASES)
                      for end in ";,")
_WEB = ("http://", "https://")
_MEDIA_PARTS = ("image", "audio")


def _shown(part: dict[str, Any], inline: tuple[str, ...], default_type: str) -> dict[str, Any]:
    """Where a media part is shown from: `src` (this site or a data URL), `href` (another site's, a link) or `path`
    (the agent's machine: named only), and its `media_type`."""
    given = part.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    path = str(source.get("path") or "")
    media_type = str(source.get("media_type") or default_type)
    if path.startswith(inline):
        return {"src": path, "media_type": media_type}
    if path.startswith("evalkit-span://"):
        return {"src": "?" + urlencode({"media": path}), "media_type": media_type}
    if path.lower().startswith(_WEB):
        return {"href": path, "media_type": media_type}
    # A file path on the agent's machine, or another store's address (a `gs://` bucket's): named, not reachable.
    return {"path": path, "media_type": media_type, "elsewhere": "://" in path}


def images(content: Any) -> list[dict[str, Any]]:
    """Each image part of `content` as the page shows it: `src` (shown), or `href` (a link), and its `media_type`."""
    return [_shown(part, _INLINE, "image") for part in content if isinstance(part, dict)
            and part.get("type") == "image"] if isinstance(content, list) else []


def audio(content: Any) -> list[dict[str, Any]]:
    """Each audio part of `content` (ATIF v1.8's `{"type": "audio", "source": {"media_type", "path",
    "duration_sec"}}`) as the page plays it: `src` for an `<audio>` of this site, else `href` or `path` as an image's;
    its `media_type` and `seconds` (None when unknown)."""
    found: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "audio":
            clip = _shown(part, _INLINE_AUDIO, "audio")
            source = part.get("source")
            seconds = source.get("duration_sec") if isinstance(source, dict) else None
            clip["seconds"] = seconds if isinstance(seconds, int | float) and not isinstance(seconds, bool) \
                and seconds >= 0 else None
            found.append(clip)
    return found


def without_images(content: Any) -> Any:
    """`content` but its image and audio parts (shown apart, by `images` and `audio`)."""
    if isinstance(content, list):
        return [part for part in content if not (isinstance(part, dict) and part.get("type") in _MEDIA_PARTS)]
    return content
