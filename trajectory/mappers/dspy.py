"""DSPy's conventions, as they arrive through OpenInference's DSPy (and LiteLLM) instrumentation.

DSPy's ChatAdapter writes each call as a system message and one user message of fields
(`[[ ## question ## ]]\\n…`), and reads the model's answer from the same markers. A ReAct
module asks for `next_thought`, `next_tool_name` and `next_tool_args` in the answer's text (no
structured tool calls), runs the tool, and re-renders its whole loop on every call in the user
message's `[[ ## trajectory ## ]]` field: `thought_N`, `tool_name_N`, `tool_args_N` (the steps'
own text) and `observation_N` (what the tool gave, or ReAct's "Execution error in <tool>: …").
That field, the last input field, is a restatement: the thoughts and calls are the earlier
steps, the observations the results of their tools. A tool span is named `<tool name>.__call__`
(`.acall` when awaited) and carries no tool name attribute.
"""

from __future__ import annotations

import re

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Message, Part

SCOPE = "openinference.instrumentation.dspy"
_TOOL_SUFFIXES = (".__call__", ".acall")
_TRAJECTORY = "[[ ## trajectory ## ]]\n"
# What ChatAdapter writes after the input fields (the output fields it asks for).
_INSTRUCTION = "\n\nRespond with the corresponding output fields"
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n")


def tool_name(reader: SpanReader) -> str | None:
    """A DSPy tool span's tool: its span name without the method (`get_weather.__call__`)."""
    if reader.span.scope_name != SCOPE:
        return None
    name = reader.span.name
    for suffix in _TOOL_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return None


def _fields(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    matches = list(_FIELD.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        found[match.group(1)] = text[match.end():end].removesuffix("\n\n")
    return found


def read_react_trajectory(messages: list[Message]) -> list[Message]:
    """A ReAct call's user message without its re-rendered loop: the message as its first call
    sent it (the same question, an empty trajectory), and each `observation_N` an id-less result
    of the tool `tool_name_N` (what the model was shown for it: a failed tool's error text)."""
    if not any(m.role == "user" and _TRAJECTORY in m.text for m in messages):
        return messages
    read: list[Message] = []
    for message in messages:
        text = message.text
        start = text.find(_TRAJECTORY) if message.role == "user" else -1
        end = text.rfind(_INSTRUCTION)
        if start < 0 or end < start:
            read.append(message)
            continue
        start += len(_TRAJECTORY)
        fields = _fields(text[start:end])
        steps = sorted({int(key.rsplit("_", 1)[1]) for key in fields if re.fullmatch(r"observation_\d+", key)})
        if not steps or set(fields) - {f"{kind}_{n}" for n in steps
                                       for kind in ("thought", "tool_name", "tool_args", "observation")}:
            read.append(message)  # not ReAct's loop (another module's field, a value holding a marker)
            continue
        others = [part for part in message.parts if part.kind != "text"]
        read.append(Message("user", [Part("text", text=text[:start] + text[end:]), *others], name=message.name))
        read.extend(Message("tool", [Part("tool_result", name=fields.get(f"tool_name_{n}") or None,
                                          text=fields[f"observation_{n}"])])
                    for n in steps)
    return read
