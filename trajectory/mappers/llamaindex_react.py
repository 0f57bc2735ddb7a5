"""LlamaIndex's `ReActAgent`: the text-format agent, its actions in the model's text and its loop restated.

ReActAgent makes no native tool call. Its system prompt (`agent/react/templates/system_header_template.md`) asks the
model to answer `Thought: …\\nAction: <tool>\\nAction Input: <the kwargs as JSON>`, or `Thought: …\\nAnswer: …` when it
is done. LlamaIndex parses the action from the text (`ReActOutputParser`, whose span beside the model call's records
the parse), makes it a ToolSelection with an id of its own, and runs the tool (the workflow's `call_tool` step, the
tool's span under it): the action is the tool call of the step whose text wrote it, the tool's span its result, as a
native call's would be. The step's text is then the thought (`Thought: …`, as LlamaIndex itself restates the step).

Every later call restates the turn's reasoning after the chat history (`ReActChatFormatter.format`): each action an
assistant message re-formatted from the parse (`ActionReasoningStep.get_content`: `Action Input: ` the parsed dict's
Python repr, not the JSON the model wrote), each tool's output a message `Observation: <text>` (role user unless the
formatter's `observation_role` says otherwise), no ids. A finished turn goes into the memory as one assistant message,
its steps joined by newlines (`ReActAgent.finalize`), which the next turns send. Read back, these are the steps and
results the trajectory already has: each action the thought and call its step made, each observation an id-less
result of the action before it (what the model was shown: a raising tool's error text).
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.operations import LlmCall, Message, Part

# From the default header's output format: a call whose system prompt asks for it is a ReActAgent's. (An application
# that replaces the header (`react_header`) is read as any other call: its actions are then steps of their own.)
_FORMAT = "Action Input: the input to the tool, in a JSON format representing the kwargs"
# `react/output_parser.py` `extract_tool_use`: the thought (with or without its label), the tool, the kwargs object.
_ACTION = re.compile(r"(?:\s*Thought: (.*?)|(.+))\n+Action: ([^\n() ]+).*?\n+Action Input: .*?(\{.*\})", re.DOTALL)
_ANSWER = re.compile(r"^Answer:", re.MULTILINE)
# A joined turn's steps (`finalize`): each starts a line with its label.
_STEP_START = re.compile(r"\n(?=Thought: |Observation: )")
_OBSERVATION = "Observation: "


def is_react(call: LlmCall) -> bool:
    """Whether the call is a ReActAgent's: its system prompt asks for the ReAct format. Only the leading system messages
    are read (`ReActChatFormatter` sends its header first): asked of every OpenLLMetry call, this must not walk a
    re-sent history."""
    for message in call.input_messages:
        if message.role != "system":
            return False
        if _FORMAT in message.text:
            return True
    return False


def read_call(call: LlmCall) -> None:
    """A ReActAgent call's answer as the thought and the tool call its text wrote, its restated loop as those steps
    and their results again; any other call left as it is."""
    if not is_react(call):
        return
    call.output_messages = [_answer(message) if message.role == "assistant" else message
                            for message in call.output_messages]
    call.input_messages = _history(call.input_messages)


def _action(text: str) -> Message | None:
    """A ReAct step that names an action (one naming it before any answer, as LlamaIndex reads it): its thought,
    labelled as LlamaIndex restates it, and the call."""
    found = _ACTION.search(text)
    answer = _ANSWER.search(text)
    if found is None or (answer is not None and answer.start() < found.start(3)):
        return None
    arguments = _kwargs(found.group(4))
    if arguments is None:
        return None
    thought = (found.group(1) or found.group(2)).strip()
    return Message("assistant", [Part("text", text=f"Thought: {thought}"),
                                 Part("tool_call", name=found.group(3).strip(), arguments=arguments)])


def _kwargs(text: str) -> dict[str, Any] | None:
    """The action's input: the JSON the model wrote, or the dict's repr LlamaIndex restates it as."""
    try:
        value = json.loads(text)
    except ValueError:
        value = python_repr.literal(text)
    return value if isinstance(value, dict) else None


def _answer(message: Message) -> Message:
    if message.tool_calls:
        return message
    action = _action(message.text)
    return message if action is None else Message("assistant", action.parts, name=message.name)


def _history(messages: list[Message]) -> list[Message]:
    read: list[Message] = []
    tool: str | None = None  # the tool of the action just restated: an observation next is its result
    for message in messages:
        if message.role == "assistant" and not message.tool_calls:
            steps = _steps(message.text)
            if steps is not None:
                read.extend(steps)
                tool = _last_tool(steps)
                continue
        elif tool is not None and message.role in ("user", "tool") and message.text.startswith(_OBSERVATION):
            read.append(_observation(message.text, tool))
            tool = None
            continue
        read.append(message)
        tool = None
    return read


def _steps(text: str) -> list[Message] | None:
    """An assistant message of ReAct steps (one restated action, or a finished turn's steps joined) as the answers
    and results they restate; None when it is not made of actions and their observations."""
    pieces = _STEP_START.split(text)
    read: list[Message] = []
    tool: str | None = None
    for piece in pieces:
        if piece.startswith(_OBSERVATION):
            if tool is None:
                return None
            read.append(_observation(piece, tool))
            tool = None
            continue
        action = _action(piece)
        if action is not None:
            read.append(action)
            tool = action.tool_calls[0].name
        elif read:
            read.append(Message("assistant", [Part("text", text=piece)]))  # the turn's answer, as its call wrote it
            tool = None
        else:
            return None
    return read if any(message.tool_calls for message in read) else None


def _last_tool(steps: list[Message]) -> str | None:
    last = steps[-1]
    return last.tool_calls[0].name if last.tool_calls else None


def _observation(text: str, tool: str) -> Message:
    return Message("tool", [Part("tool_result", name=tool, text=text.removeprefix(_OBSERVATION))])
