"""A tool's result with its framework's wrapper taken off, and what the wrapper said about it.

Frameworks record the object their tool step returned, not the text the model was shown:

- LangChain's ToolMessage, as `messages_to_dict` writes it (OpenInference):
  `{"type": "tool", "data": {"content", "tool_call_id", "status", ...}}`;
- the same message serialised by LangChain's `dumpd` (OpenLLMetry):
  `{"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}`;
- a ToolMessage model dump: `{"type": "tool", "content", "tool_call_id", "status"}`;
- LlamaIndex's ToolOutput: `{"blocks": [{"text"}...], "tool_name", "raw_output", "is_error"}`.
- Bedrock Converse result content (Strands): `[{"text": …}, {"json": …}]`.

The wrapper carries the call id (so parallel results are matched by id, not by the order the
tool spans started) and the error flag (`status: "error"`, `is_error: true`) the model's next
input shows only as text. The session list reads the same error flags in SQL (trajectory/tables.py, `failed`):
a wrapper added here with an error flag goes there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.trajectory.mappers.messages import render


@dataclass(frozen=True)
class ToolOutput:
    value: Any  # what the model was shown: the wrapper's content, else the result as recorded
    call_id: str | None = None
    is_error: bool = False
    wrapper: str | None = None  # which wrapper was taken off, for the step's extra


def _content_text(content: Any) -> Any:
    # A ToolMessage's content is a string or a list of content blocks.
    if isinstance(content, list) and all(isinstance(block, dict) and "text" in block for block in content):
        return "\n".join(render(block["text"]) for block in content)
    return content


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _tool_message(value: dict[str, Any]) -> dict[str, Any] | None:
    kind = value.get("type")
    if kind == "tool" and type(value.get("data")) is dict:
        return value["data"]  # type: ignore[no-any-return]
    if kind == "constructor" and value.get("lc") == 1 and type(value.get("kwargs")) is dict:
        ids = value.get("id")
        if isinstance(ids, list) and ids and ids[-1] == "ToolMessage":
            return value["kwargs"]  # type: ignore[no-any-return]
    if kind == "tool" and "tool_call_id" in value and "content" in value:
        return value
    return None


def unwrap(value: Any) -> ToolOutput:
    """The result without a known framework wrapper; anything else is returned as it is."""
    if type(value) is list and value and all(
            type(block) is dict and len(block) == 1 and ("text" in block or "json" in block) for block in value):
        # Bedrock Converse result blocks (Strands): `[{"text": …}, {"json": …}]`.
        return ToolOutput("\n".join(render(block.get("text", block.get("json"))) for block in value),
                          wrapper="bedrock.ToolResultContent")
    if type(value) is not dict:
        return ToolOutput(value)
    message = _tool_message(value)
    if message is not None:
        return ToolOutput(
            _content_text(message.get("content")),
            _text(message.get("tool_call_id")),
            message.get("status") == "error",
            "langchain.ToolMessage",
        )
    if "is_error" in value and "tool_name" in value and ("blocks" in value or "content" in value):
        blocks = value.get("blocks")
        if isinstance(blocks, list):
            content: Any = "\n".join(
                render(block.get("text")) for block in blocks if isinstance(block, dict) and "text" in block
            )
        else:
            content = value.get("content")
        return ToolOutput(content, None, value.get("is_error") is True, "llama_index.ToolOutput")
    return ToolOutput(value)
