"""Strands Agents' interrupts (its human in the loop) as its own tracing records them: a run stopping to ask a person,
and the run carrying it on with their answers.

A hook on `BeforeToolCallEvent` calling `event.interrupt(name, reason=…)` (Strands' docs' approval hook), or a tool
calling `tool_context.interrupt(name, reason=…)`, stops the agent loop when it has no answer yet: `agent(...)`
returns with `stop_reason == "interrupt"` and `result.interrupts`. The agent span records them as its answer
(`end_agent_span` writes `str(AgentResult)`: with interrupts, `str([interrupt.to_dict() …])`, a Python repr of each
one's `id`, `name`, `reason` and `response`) with the finish reason "interrupt": in its `gen_ai.choice` event, or under
the latest conventions in its output messages. An interrupt's id names what raised it (`strands/hooks/events.py`,
`types/tools.py` `_interrupt_id`): `v1:before_tool_call:<tool call id>:<uuid>` a hook before that call ran,
`v1:tool_call:<tool call id>:<uuid>` the tool itself, others (`v1:before_tools:…`, a model call's hook, middleware)
no call.

The application resumes by invoking the agent again with `interruptResponse` blocks, which no span records: the
resumed run's agent span has no input message (`Agent._convert_prompt_to_messages` gives none while interrupted), and
its traces are new. Strands does not call the model again: it replays the stopped cycle's calls, keeping the results
of those that had finished. What the spans do record of the answers: a call a hook let run has its `execute_tool` span
in the resumed run; one it refused (`event.cancel_tool = message`) runs no span, its result the message the model is
sent in the resumed run's next call (a toolResult); a tool that asked runs again, under the same call id. The answer
itself (the response) is in no span.

Seen in a real capture: tests/captures/strands_native_interrupt (a hook approving one booking, refusing another, a
tool asking about a deposit).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.trajectory.mappers import python_repr, strands
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, Interrupt, LlmCall
from evalkit.trajectory.span import Span

INTERRUPT = "interrupt"  # the finish reason of a run that stopped for interrupts (`StopReason`)
# What raised an interrupt, by its id's kind (`_interrupt_id`): a hook before the call ran, or the tool itself.
BEFORE_TOOL_CALL = "before_tool_call"
TOOL_CALL = "tool_call"
_INTERRUPT_FIELDS = frozenset({"id", "name", "reason", "response"})  # `Interrupt.to_dict()`
_OUTPUT_MESSAGES = "gen_ai.output.messages"
_DETAILS = "gen_ai.client.inference.operation.details"


@dataclass(frozen=True, slots=True)
class _Asked:
    id: str
    name: str
    reason: Any
    raised_by: str | None  # BEFORE_TOOL_CALL, TOOL_CALL, or None (no call: a cycle's or a model call's hook)
    call_id: str | None


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    arguments: Any


def _stopped_for(span: Span) -> list[_Asked]:
    """The interrupts an agent span's run stopped for, in order; none if it answered (or they do not read)."""
    found: list[_Asked] = []
    for item in _recorded_interrupts(span):
        if not isinstance(item, dict) or set(item) != _INTERRUPT_FIELDS or not isinstance(item["id"], str):
            continue
        raised_by, call_id = _raised_by(item["id"])
        found.append(_Asked(item["id"], str(item["name"]), item["reason"], raised_by, call_id))
    return found


def _recorded_interrupts(span: Span) -> list[Any]:
    """The run's recorded answer, read as `str(result.interrupts)` (a reason that is an object, its repr: read as its
    fields), when its finish reason is "interrupt"."""
    for event in span.events:
        if event.name == "gen_ai.choice" and event.attributes.get("finish_reason") == INTERRUPT:
            value = _repr_value(event.attributes.get("message"))
            return value if isinstance(value, list) else []
    # The latest conventions: one assistant message whose text is the same repr, on the span or its details event.
    details = [event.attributes for event in span.events if event.name == _DETAILS]
    for attributes in (span.attributes, *details):
        messages = parse_json(attributes.get(_OUTPUT_MESSAGES))
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, dict) and message.get("finish_reason") == INTERRUPT:
                text = "".join(str(part.get("content", "")) for part in message.get("parts") or ()
                               if isinstance(part, dict) and part.get("type") == "text")
                value = _repr_value(text)
                return value if isinstance(value, list) else []
    return []


def _repr_value(text: object) -> Any:
    return python_repr.object_value(text) if isinstance(text, str) else None


def _raised_by(interrupt_id: str) -> tuple[str | None, str | None]:
    """What raised an interrupt and the tool call it is about, from its id: `v1:<kind>:<call id>:<uuid>`."""
    version, _, rest = interrupt_id.partition(":")
    kind, _, rest = rest.partition(":")
    call_id, _, _uuid = rest.rpartition(":")
    if version != "v1" or kind not in (BEFORE_TOOL_CALL, TOOL_CALL) or not call_id:
        return None, None
    return kind, call_id


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's Strands runs that stopped for interrupts, ending with what they asked (`AgentRun.interrupt`, no
    answer of theirs), and the runs carrying them on given what the person decided (`AgentRun.resumed_with`)."""
    runs = sorted((run for run in runs if run.span.scope_name == strands.SCOPE),
                  key=lambda run: run.span.start_time_unix_nano)
    stopped = [(run, asked) for run in runs if (asked := _stopped_for(run.span))]
    if not stopped:
        return
    chats = _chats(spans)
    calls = {part.call_id: _Call(str(part.name), part.arguments)
             for _, chat in chats for message in chat.output_messages for part in message.tool_calls if part.call_id}
    for run, asked in stopped:
        about = [(request, calls.get(request.call_id) if request.call_id is not None else None) for request in asked]
        run.interrupt = Interrupt(
            span=run.span, emitter=run.emitter, time_ns=run.span.end_time_unix_nano,
            asked="\n".join(_asked_text(request, call) for request, call in about),
            requests=[_request(request, call) for request, call in about])
        carried_on = next((later for later in runs if later is not run and later.resumed_with is None
                           and later.name == run.name
                           and later.span.start_time_unix_nano >= run.span.end_time_unix_nano), None)
        if carried_on is not None:
            decisions = [decision for request, call in about
                         if (decision := _decision(request, call, carried_on.span, spans, chats))]
            if decisions:
                carried_on.resumed_with = "\n".join(decisions)


def _chats(spans: Sequence[Span]) -> list[tuple[Span, LlmCall]]:
    """The session's Strands model calls as the Strands mapper reads them (either conventions), in time order."""
    found = []
    for span in sorted(spans, key=lambda span: span.start_time_unix_nano):
        if span.scope_name == strands.SCOPE and span.attributes.get("gen_ai.operation.name") == "chat":
            call = strands.map_span(SpanReader(span), ())
            if isinstance(call, LlmCall):
                found.append((span, call))
    return found


def _asked_text(request: _Asked, call: _Call | None) -> str:
    """One interrupt as the person was asked it: its name, the call it is about, its reason (a text as it is)."""
    about = ""
    if call is not None:
        where = "before" if request.raised_by == BEFORE_TOOL_CALL else "asked by"
        about = f" ({where} {call.tool} {_arguments(call.arguments)})"
    reason = f": {render(request.reason)}" if request.reason is not None else ""
    return f"{request.name}{about}{reason}"


def _request(request: _Asked, call: _Call | None) -> dict[str, Any]:
    found: dict[str, Any] = {"id": request.id, "name": request.name, "reason": request.reason}
    if request.call_id is not None:
        found["tool_call_id"] = request.call_id
    if call is not None:
        found.update(tool=call.tool, arguments=call.arguments)
    return found


def _decision(request: _Asked, call: _Call | None, run: Span, spans: Sequence[Span],
              chats: Sequence[tuple[Span, LlmCall]]) -> str | None:
    """What the person decided, as the run carrying the interrupt on shows it: a call a hook asked about ran (approved)
    or was answered with the hook's refusal (denied, with what the model was told); a tool that asked ran again
    (answered; the answer is in no span); any other interrupt answered. None where the run shows neither."""
    if request.raised_by is None:
        return f"Answered {request.name}"
    if request.call_id is None or call is None:
        return None
    described = f"{call.tool} {_arguments(call.arguments)}"
    ran = any(_finished_execution(span, request.call_id) and _within(span, run) for span in spans)
    if request.raised_by == TOOL_CALL:
        return f"Answered {request.name} for {described}" if ran else None
    if ran:
        return f"Approved {described}"
    shown = next((part.text for span, chat in chats if _within(span, run) for message in chat.input_messages
                  for part in message.tool_results if part.call_id == request.call_id), None)
    return f"Denied {described}: {shown}" if shown is not None else None


def _finished_execution(span: Span, call_id: str) -> bool:
    """A Strands tool span of the call that ran to a result (`gen_ai.tool.status`: an interrupted one has none)."""
    return (span.scope_name == strands.SCOPE and span.attributes.get("gen_ai.tool.call.id") == call_id
            and strands.TOOL_STATUS in span.attributes)


def _within(span: Span, run: Span) -> bool:
    """Whether a span ran in an agent's run: in its trace, within its time."""
    return (span.trace_id == run.trace_id
            and run.start_time_unix_nano <= span.start_time_unix_nano <= run.end_time_unix_nano)


def _arguments(arguments: Any) -> str:
    return render(arguments if arguments is not None else {})
