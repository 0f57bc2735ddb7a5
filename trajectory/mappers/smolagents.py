"""smolagents' conventions, as they arrive through OpenInference's smolagents instrumentation.

smolagents keeps its conversation as messages of its own roles, which OpenInference writes as
they are: `tool-call` (the calls an answer made, as the text "Calling tools:\n" and the Python
repr of a list of OpenAI-style calls) and `tool-response` (what the tools gave, "Observation:\n…"
or "Error:\n…", no call id). smolagents sends them to the model as assistant and user messages.
A step's memory (`ActionStep.to_messages`) writes its answer as two messages: an `assistant` one with
the model's text (`model_output`: none for a call of tools alone, but "" for a streamed one, which
OpenInference writes as an assistant message with no content) and the `tool-call` one.
An agent run is an AGENT span named `<agent name>.run`, or `<class name>.run` for an unnamed one.

A step's observation images (`ActionStep.observations_images`) are a `user` message of images alone, written right
before the step's `tool-response` (`to_messages`), which the client merges with it into one user message: the images the
model was shown with the step's observation, no one's question. smolagents sets them on every action step of a run
given `images=` (the task's images again after each step, `_run_stream`), and a step callback may set them (its vision
browser example's screenshot; a tool's AgentImage, of which ToolCallingAgent tells the model only "Stored 'image.png'
in memory."). They are read as the parts of the result that message gives (`Part.result_parts`: the observation's text,
then the images), so that the call's result is what the model was shown, never a user step.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.mappers.messages import parse_arguments, render
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Message, Part

TOOL_CALL_ROLE = "tool-call"
TOOL_RESPONSE_ROLE = "tool-response"
_CALLS_PREFIX = "Calling tools:"
# How smolagents labels a step's observations in its memory: what the step's one call gave follows it.
_OBSERVATION_PREFIX = "Observation:\n"
_RUN_SUFFIX = ".run"
# A CodeAgent's memory re-states the code the model wrote as a call of this tool: the code is
# already the step's text, so the re-statement is no message of its own.
_CODE_TOOL = "python_interpreter"
_BOUND_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def _calls_of(text: str) -> list[Part] | None:
    listed = text.strip().removeprefix(_CALLS_PREFIX).strip()
    calls = python_repr.literal(listed)  # a Python literal: it is a repr, not JSON
    if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
        return None
    parts = []
    for call in calls:
        function: dict[str, Any] = call.get("function") if isinstance(call.get("function"), dict) else {}
        call_id = call.get("id")
        name = function.get("name")
        parts.append(Part("tool_call", call_id=str(call_id) if call_id else None,
                          name=str(name) if name else None, arguments=parse_arguments(function.get("arguments"))))
    return parts


def read_roles(messages: list[Message]) -> list[Message]:
    """smolagents' `tool-call` messages as the assistant's calls they re-state (with the text the
    `assistant` message right before it wrote: one answer), `tool-response` as the result of the call
    before it (when it made exactly one; several results come as one text)."""
    if not any(m.role in (TOOL_CALL_ROLE, TOOL_RESPONSE_ROLE) for m in messages):
        return messages
    read: list[Message] = []
    last_calls: list[Part] = []
    shown_images: list[Part] = []  # a step's observation images, written before its observation
    for index, message in enumerate(messages):
        if _observation_images(messages, index):
            shown_images = list(message.parts)
        elif message.role == TOOL_CALL_ROLE:
            calls = _calls_of(message.text)
            last_calls = calls or []
            if calls and all(call.name == _CODE_TOOL for call in calls):
                # What the code printed answers no call of the model's: the code step's observation.
                last_calls = [Part("tool_call", name=_CODE_TOOL)]
                continue
            answer = read[-1] if read and read[-1].role == "assistant" and not read[-1].tool_calls else None
            if calls and answer is not None:
                # The step's text and its calls: the answer the model gave, as its call recorded it (a streamed
                # step's empty text alone would be an answer of nothing, made by no call evalkit received).
                read[-1] = Message("assistant", [*answer.parts, *calls], name=answer.name)
            else:
                read.append(Message("assistant", calls if calls else message.parts, name=message.name))
        elif message.role == TOOL_RESPONSE_ROLE:
            call = last_calls[0] if len(last_calls) == 1 else None
            text = message.text
            if call is not None and call.call_id is not None:
                # The observation of the step's one call is what that call gave (as a tool span records it, and
                # as a managed agent's report is the call's result), not smolagents' label for it.
                text = text.removeprefix(_OBSERVATION_PREFIX)
            # As the model was shown them: the observation's text, then the images (the tool span's record of an
            # image tool is a temporary file's path).
            shown = [Part("text", text=text), *shown_images] if shown_images else None
            read.append(Message("tool", [Part("tool_result", call_id=call.call_id if call else None,
                                                name=call.name if call else None, text=text, result_parts=shown)]))
            last_calls = []
            shown_images = []
        else:
            read.append(message)
            last_calls = []
    return read


def _observation_images(messages: list[Message], index: int) -> bool:
    """`messages[index]` is a step's observation images: a user message of media alone, right before a
    `tool-response` (a task's images come with its text, "New task:…")."""
    message = messages[index]
    return (message.role == "user" and bool(message.parts) and all(part.kind == "media" for part in message.parts)
            and index + 1 < len(messages) and messages[index + 1].role == TOOL_RESPONSE_ROLE)


def tool_arguments(value: Any) -> Any:
    """A tool's arguments as smolagents' tool span binds them (`{"args": [], "kwargs": {...},
    "sanitize_inputs_outputs": …}`) -> the arguments the model gave."""
    if not isinstance(value, dict) or not set(value) <= _BOUND_KEYS or not isinstance(value.get("kwargs"), dict):
        return value
    args = value.get("args")
    return dict(value["kwargs"]) if not args else {"args": args, **value["kwargs"]}


def agent_name(reader: SpanReader) -> str | None:
    """A named agent's name from its run span (`weather_agent.run`); a class name is no agent's."""
    if not reader.has("smolagents.max_steps", "smolagents.tools_names"):
        return None
    reader.consume_prefix("smolagents.")  # its settings: max steps, tool and managed agent names
    name = reader.span.name.removesuffix(_RUN_SUFFIX)
    if name == reader.span.name or not name or (name[0].isupper() and name.endswith("Agent")):
        return None
    return render(name)
