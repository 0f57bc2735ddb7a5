"""DSPy's conventions, as they arrive through OpenInference's DSPy (and LiteLLM) instrumentation.

DSPy's ChatAdapter writes each call as a system message and one user message of fields
(`[[ ## question ## ]]\\n…`), and reads the model's answer from the same markers. A ReAct
module asks for `next_thought`, `next_tool_name` and `next_tool_args` in the answer's text (no
structured tool calls), runs the tool, and re-renders its whole loop on every call in the user
message's `[[ ## trajectory ## ]]` field: `thought_N`, `tool_name_N`, `tool_args_N` (the steps'
own text) and `observation_N` (what the tool gave, or ReAct's "Execution error in <tool>: …").
A tool span is named `<tool name>.__call__` (`.acall` when awaited) and carries no tool name attribute.

The answer naming a tool is read as that step's tool call (`read_call`), its message the thought, as a
text-format agent's action is (`llamaindex_react.py`; Harbor's Terminus-2 records the commands its model
writes in its text so): ReAct turns the fields into the call itself (`predict/react.py` `forward`:
`self.tools[pred.next_tool_name](**pred.next_tool_args)`), and the tool's span is its result. `finish`
too: ReAct adds it to the tools it lists to the model (a `Tool` returning "Completed."), runs it as
any other, and shows the extract call its observation; Harbor records Terminus-2's own end marker as
a `mark_task_complete` call. The re-rendered loop, the last input field, is a restatement: each step
the thought and call an earlier answer made, each observation the result of its tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part

SCOPE = "openinference.instrumentation.dspy"
_TOOL_SUFFIXES = (".__call__", ".acall")
_TRAJECTORY = "[[ ## trajectory ## ]]\n"
# What ChatAdapter writes after the input fields (the output fields it asks for).
_INSTRUCTION = "\n\nRespond with the corresponding output fields"
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n")
# The adapters' system prompt lists the signature's output fields (`format_field_description`):
# a ReAct call's are the thought and the tool it names, with the tool's arguments.
_OUTPUT_FIELDS = "Your output fields are:"
_ACTION_FIELDS = ("next_thought", "next_tool_name", "next_tool_args")
# `adapters/chat_adapter.py` `field_header_pattern`, matched at the start of an answer's (stripped) line.
_HEADER = re.compile(r"\[\[ ## (\w+) ## \]\]")


def tool_name(reader: SpanReader) -> str | None:
    """A DSPy tool span's tool: its span name without the method (`get_weather.__call__`)."""
    if reader.span.scope_name != SCOPE:
        return None
    name = reader.span.name
    for suffix in _TOOL_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return None


def is_react(call: LlmCall) -> bool:
    """Whether the call is a ReAct step's: its system prompt asks for a thought, a tool and its arguments. Only the
    leading system messages are read (ChatAdapter sends its prompt first): asked of every OpenInference call, this
    must not walk a re-sent history."""
    for message in call.input_messages:
        if message.role != "system":
            break
        text = message.text
        start = text.find(_OUTPUT_FIELDS)
        if start >= 0 and all(f"`{field}` (" in text[start:] for field in _ACTION_FIELDS):
            return True
    return False


def read_call(call: LlmCall) -> None:
    """A ReAct step's answer as its thought and the tool call its fields name; any other call left as it is."""
    if is_react(call):
        call.output_messages = [_action(message) if message.role == "assistant" and not message.tool_calls
                                else message for message in call.output_messages]


def _answer_fields(text: str) -> dict[str, Any]:
    """The fields of an answer as DSPy reads them: ChatAdapter's `[[ ## name ## ]]` sections (`parse`: a header
    starts a line, a field's first section counts, its text stripped), or JSONAdapter's object (ChatAdapter's
    fallback when its parse fails)."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        header = _HEADER.match(line.strip())
        if header is None:
            sections[-1][1].append(line)
            continue
        rest = line.strip()[header.end():].strip()
        sections.append((header.group(1), [rest] if rest else []))
    fields: dict[str, Any] = {}
    for name, lines in sections:
        if name is not None:
            fields.setdefault(name, "\n".join(lines).strip())
    if fields:
        return fields
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _arguments(value: Any) -> dict[str, Any] | None:
    """`next_tool_args` (`dict[str, Any]`): the JSON the model wrote (a Python literal also parses in DSPy)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = python_repr.literal(value)
    return value if isinstance(value, dict) else None


def _step(thought: Any, tool: Any, arguments: Any) -> list[Part] | None:
    """A ReAct step's parts: its thought, then the call of the tool it names."""
    parsed = _arguments(arguments)
    name = str(tool or "").strip().strip("\"'")
    if parsed is None or not name:
        return None
    text = str(thought or "").strip()
    return [*([Part("text", text=text)] if text else []), Part("tool_call", name=name, arguments=parsed)]


def _action(message: Message) -> Message:
    fields = _answer_fields(message.text)
    step = _step(fields.get("next_thought"), fields.get("next_tool_name"), fields.get("next_tool_args"))
    if step is None:
        return message
    others = [part for part in message.parts if part.kind not in ("text", "tool_call")]  # its reasoning
    return Message("assistant", [*others, *step], name=message.name)


def _fields(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    matches = list(_FIELD.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        found[match.group(1)] = text[match.end():end].removesuffix("\n\n")
    return found


def read_react_trajectory(messages: list[Message]) -> list[Message]:
    """A ReAct call's user message without its re-rendered loop: the message as its first call
    sent it (the same question, an empty trajectory), then each step the loop restates: `thought_N`
    and the call of `tool_name_N` with `tool_args_N` (what that step's answer was read as,
    `read_call`), and `observation_N` an id-less result of that tool (what the model was shown for
    it: a failed tool's error text)."""
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
        for n in steps:
            tool = fields.get(f"tool_name_{n}") or None
            step = _step(fields.get(f"thought_{n}"), tool, fields.get(f"tool_args_{n}"))
            if step is not None:
                read.append(Message("assistant", step))
            read.append(Message("tool", [Part("tool_result", name=tool, text=fields[f"observation_{n}"])]))
    return read
