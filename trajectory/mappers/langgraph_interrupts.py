"""LangGraph's human in the loop as a LangChain tracer records it: a run stopping to ask a person, and the run that
carries it on with their answer.

A node that calls `interrupt(value)` (LangChain 1.x's `HumanInTheLoopMiddleware` does, in its `after_model` hook,
when the model calls a tool it was told to have reviewed) raises `GraphInterrupt`: the graph stops with its state
checkpointed, and the invocation returns the request to the application. The tracer records the exception on the
node's run (`exception.message`, the `str()` of the exception's args: `(Interrupt(value=…, id='…'),)`, a Python repr)
and ends the run OK, as it does any graph control flow. No other span records what was asked.

The application answers by invoking the graph again on the same thread with `Command(resume=<answer>)`: the tracer
records that run's input as the Command (`{"graph", "update", "resume", "goto"}`). The interrupted node runs again
from its start, `interrupt()` now returning the answer; the model call before it is not made again (its answer is
in the checkpoint).

What the person is shown: `HumanInTheLoopMiddleware`'s request (`HITLRequest`) lists the tool calls to review, each
with a description (its own, or "Tool execution requires approval" with the tool and its arguments); its per-call
mode asks one `tool_approval` with a description; any other `interrupt()` asks its value as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import Interrupt
from evalkit.trajectory.span import SpanEvent

GRAPH_INTERRUPT = "langgraph.errors.GraphInterrupt"
_INTERRUPT = "Interrupt"  # the class of each request the exception holds (`langgraph.types.Interrupt`)


def requests(events: Sequence[SpanEvent]) -> list[dict[str, Any]]:
    """The requests a run's recorded `GraphInterrupt` asked (each `Interrupt`'s `value` and `id`), in order; none if
    it recorded none, or none that reads."""
    found: list[dict[str, Any]] = []
    for event in events:
        if event.name != "exception" or event.attributes.get("exception.type") != GRAPH_INTERRUPT:
            continue
        message = event.attributes.get("exception.message")
        parsed = python_repr.object_value(message) if isinstance(message, str) else None
        for item in parsed if isinstance(parsed, list) else [parsed]:
            if isinstance(item, dict) and item.get("__class__") == _INTERRUPT and "value" in item:
                found.append({"value": item["value"], "id": item.get("id")})
    return found


def interrupt(reader: SpanReader, emitter: str) -> Interrupt | None:
    """A node's run that stopped the graph to ask a person (its recorded `GraphInterrupt`), if it did: asked when
    the exception was recorded."""
    asked = requests(reader.span.events)
    if not asked:
        return None
    reader.read_events("exception")
    time_ns = next(event.time_unix_nano for event in reader.span.events if event.name == "exception")
    return Interrupt(span=reader.span, emitter=emitter, time_ns=time_ns, asked=asked_text(asked), requests=asked)


def asked_text(asked: Sequence[dict[str, Any]]) -> str:
    """What the person was asked, as text: each request's (`requests`), a blank line between."""
    return "\n\n".join(text for request in asked if (text := _request_text(request.get("value"))))


def _request_text(value: Any) -> str:
    if isinstance(value, dict):
        actions = value.get("action_requests")
        if isinstance(actions, list) and actions:  # HumanInTheLoopMiddleware's batched HITLRequest
            return "\n\n".join(_action_text(action) for action in actions)
        if value.get("type") == "tool_approval" and isinstance(value.get("description"), str):
            return str(value["description"])  # its per-call ToolApprovalRequest
    return render(value)


def _action_text(action: Any) -> str:
    if isinstance(action, dict) and isinstance(action.get("description"), str) and action["description"]:
        return str(action["description"])
    if isinstance(action, dict):
        return f"{action.get('name')}: {render(action.get('args'))}"
    return render(action)


def resume_answer(run_input: Any) -> str | None:
    """The answer a run was resumed with, as text (the Command's `resume`, a text as it is, anything else its JSON), if
    its recorded input (JSON text) is a `Command` resuming an interrupt (`Command(goto=…)` or `Command(update=…)`
    alone resumes nothing)."""
    # The tracer dumps a Command's fields in their order: a look at the text first, since most runs' input is a state.
    if not isinstance(run_input, str) or not run_input.startswith('{"graph"'):
        return None
    return command_answer(parse_json(run_input))


def command_answer(command: Any) -> str | None:
    """The answer a run's input resumed an interrupt with (`resume_answer`), its input already decoded: the
    `Command`'s fields as a dict."""
    if not isinstance(command, dict) or set(command) != {"graph", "update", "resume", "goto"}:
        return None
    answer = command["resume"]
    return None if answer is None else render(answer)
