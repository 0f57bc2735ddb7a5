"""LangChain / LangGraph's own shapes, as the instrumentations that trace it record them.

A graph run's input and output are its state, `{"messages": [...]}`, the messages either as
`messages_to_dict` writes them (`{"type": "ai", "data": {"content": ...}}`, OpenInference), as
LangChain's `dumpd` does (`{"lc": 1, "kwargs": {"content": ...}}`, OpenLLMetry), or as the caller
passed them (`{"role": "user", "content": ...}`). What the run was asked and answered is the
text of the state's last message.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import parse_json


def _content(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    for holder in ("data", "kwargs"):
        inner = message.get(holder)
        if isinstance(inner, dict) and "content" in inner:
            return inner["content"]
    return message.get("content")


def state_text(value: Any) -> str | None:
    """The text of a messages state's last message; None when `value` is no messages state."""
    if isinstance(value, str):
        if not value.startswith('{"messages"'):
            return None
        value = parse_json(value)
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list) or not messages:
        return None
    content = _content(messages[-1])
    if isinstance(content, list):  # content blocks
        return "\n".join(render(block.get("text")) for block in content if isinstance(block, dict) and "text" in block)
    return render(content)
