"""A text-format agent's tool calls in the fake LLM's log: LlamaIndex ReActAgent's `Thought / Action / Action Input`.

A ReActAgent's model makes no native tool call: asked by the system prompt, it writes `Thought: …`, `Action: <tool>`
and `Action Input: <the kwargs as JSON>` in its text, and the framework runs that tool. What happened, then, is a call
of that tool by that answer, its thought the answer's text. Later requests restate the action (the dict's Python
repr where the model wrote JSON) and give its result as the next message, `Observation: <text>`: what the model was
shown for it. Only a request whose system prompt asks for the format is read so.
"""

from __future__ import annotations

import ast
import json
import re
from itertools import pairwise
from typing import Any

_ASKED = "Action Input:"  # in ReActAgent's system prompt, which tells the model the format
# One action, as the model writes it and as ReActAgent restates it (`ActionReasoningStep.get_content`), whole.
_ACTION = re.compile(r"Thought: (?P<thought>.*?)\nAction: (?P<tool>[^\n]+)\nAction Input: (?P<input>\{[^\n]*\})",
                     re.DOTALL)
_OBSERVATION = "Observation: "

Action = tuple[str, str, str]  # the thought, the tool, its arguments as canonical JSON


def _asks_for_actions(request: dict[str, Any]) -> bool:
    return any(isinstance(m, dict) and m.get("role") == "system" and _ASKED in str(m.get("content") or "")
               for m in request.get("messages") or ())


def _action(text: str) -> tuple[str, str, dict[str, Any]] | None:
    found = _ACTION.fullmatch(text.strip())
    if found is None:
        return None
    raw = found.group("input")
    try:
        arguments = json.loads(raw)
    except ValueError:
        try:
            arguments = ast.literal_eval(raw)  # restated: the parsed dict's repr
        except (ValueError, SyntaxError):
            return None
    return (found.group("thought").strip(), found.group("tool").strip(), arguments) if isinstance(arguments,
                                                                                                 dict) else None


def _key(action: tuple[str, str, dict[str, Any]]) -> Action:
    return action[0], action[1], json.dumps(action[2], sort_keys=True)


def actions(log: list[dict[str, Any]]) -> dict[int, tuple[str, list[dict[str, Any]]]]:
    """Each logged call whose answer is an action: its text (the thought, as `Thought: …`) and its tool call, by
    the call's seq (its id `react_<seq>`)."""
    found: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    for entry in log:
        response = entry["response"]
        if response["tool_calls"] or not _asks_for_actions(entry["request"]):
            continue
        action = _action(response["text"])
        if action is not None:
            thought, tool, arguments = action
            found[entry["seq"]] = (f"Thought: {thought}",
                                   [{"id": f"react_{entry['seq']}", "name": tool, "arguments": arguments}])
    return found


def observations(log: list[dict[str, Any]]) -> dict[str, str]:
    """What the model was shown for each action (by its call id): the `Observation:` message after the action
    restated in a later request. The n-th restatement of an action in a request is the n-th call that wrote it."""
    written: dict[Action, list[int]] = {}
    for seq, (text, calls) in actions(log).items():
        call = calls[0]
        written.setdefault((text.removeprefix("Thought: "), call["name"],
                            json.dumps(call["arguments"], sort_keys=True)), []).append(seq)
    shown: dict[str, str] = {}
    for entry in log:
        messages = [m for m in entry["request"].get("messages") or () if isinstance(m, dict)]
        seen: dict[Action, int] = {}
        for message, after in pairwise(messages):
            action = _action(str(message.get("content") or "")) if message.get("role") == "assistant" else None
            if action is None:
                continue
            key = _key(action)
            nth = seen[key] = seen.get(key, -1) + 1
            writers = written.get(key, [])
            text = str(after.get("content") or "")
            if nth < len(writers) and after.get("role") in ("user", "tool") and text.startswith(_OBSERVATION):
                shown.setdefault(f"react_{writers[nth]}", text.removeprefix(_OBSERVATION))
    return shown
