"""A LangChain tool's result holding media (a ToolMessage whose content blocks include an image), as parts.

A LangChain tool may return content blocks (`langchain_core.tools`' `TOOL_MESSAGE_BLOCK_TYPES`): its ToolMessage's
content is then the list as returned, and the chat model's integration sends the model its images as images
(langchain-openai: a Responses `function_call_output` of `input_text` and `input_image` items). The tracers record the
ToolMessage whole as the tool's output (`tool_results`: OpenInference's `{"type": "tool", "data": {...}}`), the images
as their blocks:

- LangChain v1's standard block, `{"type": "image", "base64": …, "mime_type": …}` or `{"type": "image", "url": …}`
  (`langchain_core.messages.content`, as LangChain's docs show multimodal content first);
- v0's data block, `{"type": "image", "source_type": "base64" | "url", "data" | "url": …, "mime_type": …}`;
- a provider's own (OpenAI's `image_url`), which `messages.parse_part` reads.

Read as text, the result would be the blocks' JSON, base64 and all. It is the text blocks' text and each image a media
part, a base64 one as the data URL the integration sends (`ToolExecution.result_parts`: ATIF content parts, a large
image referenced at the tool span, never inlined: trajectory/media.py).

Seen in a real capture: tests/captures/langgraph_openinference_image (`city_map` returns a text block and a base64 PNG
block).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import tool_results
from evalkit.trajectory.mappers.messages import parse_part, render
from evalkit.trajectory.operations import Part

_MEDIA_BLOCKS = frozenset(("image", "image_url", "audio", "video", "file"))


def _media_part(block: dict[str, Any]) -> Part | None:
    """A media block's part: its URL, or its base64 payload as a data URL; None when it is no media block."""
    kind = block.get("type")
    if kind not in _MEDIA_BLOCKS:
        return None
    mime_type = block.get("mime_type")
    payload = block.get("base64")
    if payload is None and block.get("source_type") == "base64":  # v0's data block
        payload = block.get("data")
    if isinstance(payload, str) and isinstance(mime_type, str):
        return Part("media", media_type=mime_type, uri=f"data:{mime_type};base64,{payload}")
    url = block.get("url")
    if isinstance(url, str):
        return Part("media", media_type=mime_type if isinstance(mime_type, str) else str(kind), uri=url)
    return parse_part(block)  # a provider's block (OpenAI's `image_url`)


def tool_result_parts(result: Any) -> list[Part] | None:
    """A recorded ToolMessage's content as parts when it holds a media block: each media block a media part, any
    other block (or string) as `messages.parse_part` reads it; None for any other result (its text is the result)."""
    output = tool_results.unwrap(result)
    content = output.value
    if output.wrapper != "langchain.ToolMessage" or not isinstance(content, list):
        return None
    parts = [(_media_part(block) if isinstance(block, dict) else None) or parse_part(block)
             or Part("other", text=render(block)) for block in content]
    return parts if any(part.kind == "media" for part in parts) else None
