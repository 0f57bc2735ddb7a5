"""The images of a message or a tool's result (ATIF image content parts), as a page shows them.

A page loads nothing from other sites (its Content-Security-Policy allows images from itself and `data:` only), so an
image is shown where the service holds it: a small one inline as the data URL the trajectory carries, a referenced one
(`evalkit-span://…`, trajectory/media.py) from the session page itself (`?media=<reference>`, which reads it back from
its span). An image at another site's URL is a link to it, not loaded.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from evalkit.trajectory.media import IMAGE_TYPES

_INLINE = tuple(f"data:{media_type};" for media_type in IMAGE_TYPES)
_WEB = ("http://", "https://")


def images(content: Any) -> list[dict[str, str]]:
    """Each image part of `content` as the page shows it: `src` (shown), or `href` (a link), and its `media_type`."""
    shown: list[dict[str, str]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict) or part.get("type") != "image":
            continue
        given = part.get("source")
        source: dict[str, Any] = given if isinstance(given, dict) else {}
        path = str(source.get("path") or "")
        media_type = str(source.get("media_type") or "image")
        if path.startswith(_INLINE):
            shown.append({"src": path, "media_type": media_type})
        elif path.startswith("evalkit-span://"):
            shown.append({"src": "?" + urlencode({"media": path}), "media_type": media_type})
        elif path.lower().startswith(_WEB):
            shown.append({"href": path, "media_type": media_type})
        else:  # a file path on the agent's machine: named, not reachable from here
            shown.append({"path": path, "media_type": media_type})
    return shown



def without_images(content: Any) -> Any:
    """`content` but its image parts (shown apart, by `images`)."""
    if isinstance(content, list):
        return [part for part in content if not (isinstance(part, dict) and part.get("type") == "image")]
    return content
