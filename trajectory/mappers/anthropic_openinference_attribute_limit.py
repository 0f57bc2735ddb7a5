"""A Messages call whose span OpenTelemetry's attribute limit clipped, as OpenInference's anthropic instrumentation
records it: the message it cut into read as the assistant's answer it is.

OpenTelemetry's SDK keeps at most 128 attributes on a span by default (`OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`) and, past
that, drops the oldest one for each it adds. `openinference-instrumentation-anthropic` (3.1.0) flattens the request's
messages into attributes, several a block (a `tool_use` block twice: under `message.tool_calls.<k>` and as
`message.contents.<j>` with its `tool_call.id`, `.function.name` and `.function.arguments`), before the answer's; a
conversation that re-sends answers of many blocks (a server tool's calls and results: code execution, web fetch)
passes the limit, and the span keeps its last 128: the request's first attributes are gone (`input.value`,
`llm.provider`, `session.id`, the system message and the first ones), and the message at the edge is cut, its first
attributes first: its `message.role`, which the instrumentation writes before anything of a message, then its first
tool calls' ids and names under `message.tool_calls`. Read as it is, that message is a user's (no role), holding the
re-sent answer's blocks as text: a user step of the answer's JSON.

Read here (`read_clipped_messages`), from the span's attributes: a message of the request that kept no role but holds a
`tool_use` content is the assistant's (only the model's message calls tools: a client's re-sent answer), its tool calls
read from its `tool_use` contents, which the limit reaches last, each whole (id, name, arguments) in its block's order;
its other parts as read. The trajectory then knows it for the answer it re-sends. What the limit dropped whole stays
unknown (an earlier message, the session id: the application's agent span carries that one).

Seen in a real capture: tests/captures/anthropic-sdk_openinference_code-execution (the streamed turn's call).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import dig, indexed, unflatten
from evalkit.trajectory.operations import LlmCall, Message, Part

_INPUT_MESSAGES = "llm.input_messages."
_TOOL_USE = "tool_use"  # the content type the instrumentation gives a `tool_use` (and `server_tool_use`) block


def read_clipped_messages(call: LlmCall, attributes: dict[str, Any]) -> None:
    """`call`'s input messages with the one the attribute limit cut into read as the assistant's (module docstring);
    `attributes`: its span's."""
    tree = unflatten({key[len(_INPUT_MESSAGES):]: value for key, value in attributes.items()
                      if key.startswith(_INPUT_MESSAGES)})
    recorded = [message for node in indexed(tree) if isinstance(message := dig(node, "message"), dict)]
    if len(recorded) != len(call.input_messages) or all(dig(message, "role") is not None for message in recorded):
        return  # nothing clipped, or messages the mapper did not read one for one
    for position, message in enumerate(recorded):
        if dig(message, "role") is not None:
            continue
        calls = [_tool_call(content) for content in indexed(dig(message, "contents"))
                 if dig(content, "message_content", "type") == _TOOL_USE]
        if calls:
            read = call.input_messages[position]
            call.input_messages[position] = Message(
                "assistant", [*(part for part in read.parts if part.kind != "tool_call"), *calls], name=read.name)


def _tool_call(content: Any) -> Part:
    called = dig(content, "tool_call")
    call_id, name = dig(called, "id"), dig(called, "function", "name")
    return Part("tool_call", call_id=str(call_id) if call_id is not None else None,
                name=str(name) if name is not None else None,
                arguments=parse_arguments(dig(called, "function", "arguments")))
