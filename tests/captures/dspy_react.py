"""DSPy ReAct's tool calls in the fake LLM's log: the `next_tool_name` and `next_tool_args` fields of its answers.

A `dspy.ReAct` model makes no native tool call: asked by ChatAdapter's system prompt for the fields
`[[ ## next_thought ## ]]`, `[[ ## next_tool_name ## ]]` and `[[ ## next_tool_args ## ]]`, it writes them in its text,
and ReAct runs that tool (`finish`, the end of the loop, is one of the tools it lists and runs: "Completed."). What
happened, then, is a call of that tool by that answer, its text the thought. Every later request of the same run
re-renders the loop in its user message's `[[ ## trajectory ## ]]` field, `thought_N`, `tool_name_N`, `tool_args_N`
and `observation_N`: step N of that loop is the answer of the earlier request that showed steps 0..N-1, and its
observation is what the model was shown for the call.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ASKED = "[[ ## next_tool_name ## ]]"  # in ChatAdapter's system prompt for a ReAct step, the format of its answer
_HEADER = re.compile(r"^\[\[ ## (\w+) ## \]\]$", re.MULTILINE)
_TRAJECTORY = "[[ ## trajectory ## ]]"
_ASK = "\n\nRespond with the corresponding output fields"  # ChatAdapter's words after the input fields

Step = tuple[str, str, str]  # the thought, the tool, its arguments as canonical JSON


def _fields(text: str) -> dict[str, str]:
    headers = list(_HEADER.finditer(text))
    return {header.group(1): text[header.end():headers[i + 1].start() if i + 1 < len(headers) else len(text)].strip()
            for i, header in enumerate(headers)}


def _messages(request: dict[str, Any], role: str) -> list[str]:
    return [str(m.get("content") or "") for m in request.get("messages") or ()
            if isinstance(m, dict) and m.get("role") == role]


def _step(thought: str, tool: str, arguments: str) -> Step | None:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return None
    return (thought, tool, json.dumps(parsed, sort_keys=True)) if isinstance(parsed, dict) else None


def _loop(request: dict[str, Any]) -> tuple[str, list[tuple[Step, str]]] | None:
    """A request's input fields before the trajectory, and the steps its trajectory re-renders with their
    observations; None when it has no ReAct trajectory."""
    for text in _messages(request, "user"):
        start, end = text.find(_TRAJECTORY), text.rfind(_ASK)
        if start < 0 or end < start:
            continue
        fields = _fields(text[start + len(_TRAJECTORY):end])
        steps: list[tuple[Step, str]] = []
        n = 0
        while f"observation_{n}" in fields:
            step = _step(fields.get(f"thought_{n}", ""), fields.get(f"tool_name_{n}", ""),
                         fields.get(f"tool_args_{n}", ""))
            if step is None:
                return None
            steps.append((step, fields[f"observation_{n}"]))
            n += 1
        return text[:start], steps
    return None


def first_asked(request: dict[str, Any]) -> tuple[str, int] | None:
    """A ReAct request's user message as its run's first call sent it (the trajectory field emptied) and how many
    steps of the loop it re-renders after it; None when it re-renders no ReAct loop."""
    loop = _loop(request)
    if loop is None:
        return None
    for text in _messages(request, "user"):
        start, end = text.find(_TRAJECTORY), text.rfind(_ASK)
        if 0 <= start < end:
            return text[:start + len(_TRAJECTORY)] + "\n" + text[end:], len(loop[1])
    return None


def _answer(entry: dict[str, Any]) -> Step | None:
    response = entry["response"]
    if response["tool_calls"] or not any(_ASKED in text for text in _messages(entry["request"], "system")):
        return None
    fields = _fields(response["text"])
    if "next_tool_name" not in fields:
        return None
    return _step(fields.get("next_thought", ""), fields["next_tool_name"], fields.get("next_tool_args", ""))


def actions(log: list[dict[str, Any]]) -> dict[int, tuple[str, list[dict[str, Any]]]]:
    """Each logged ReAct step: its text (the thought) and the call of the tool it names, by the call's seq (its id
    `dspy_<seq>`)."""
    found: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    for entry in log:
        step = _answer(entry)
        if step is not None:
            thought, tool, arguments = step
            found[entry["seq"]] = (thought, [{"id": f"dspy_{entry['seq']}", "name": tool,
                                              "arguments": json.loads(arguments)}])
    return found


def observations(log: list[dict[str, Any]]) -> dict[str, str]:
    """What the model was shown for each ReAct step's call (by its id): the observation after that step in the
    first later request of its run (the same input fields, the same steps before it) that re-renders it."""
    shown: dict[str, str] = {}
    for position, entry in enumerate(log):
        step, asked = _answer(entry), _loop(entry["request"])
        if step is None or asked is None:
            continue
        inputs, before = asked
        for later in log[position + 1:]:
            loop = _loop(later["request"])
            if loop is None or loop[0] != inputs or len(loop[1]) <= len(before):
                continue
            steps = loop[1]
            if steps[:len(before)] == before and steps[len(before)][0] == step:
                shown[f"dspy_{entry['seq']}"] = steps[len(before)][1]
                break
    return shown
