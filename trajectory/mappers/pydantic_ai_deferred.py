"""Pydantic AI's deferred tools (its human in the loop) as its own instrumentation records them: a run ending to ask a
person, and the run carrying it on with their decisions.

A tool registered with `requires_approval=True` (or raising `ApprovalRequired`) is not run when the model calls it:
the run ends with a `DeferredToolRequests` output (`approvals`, and `calls` for a tool run outside the agent, from
`CallDeferred`), which the run's span records as its `final_result`, the dataclass's JSON (`calls`, `approvals`,
`metadata`, `validated_args`, each call a `ToolCallPart` dump). Nothing else records that the run stopped to ask.

The application answers in a new run, with the first run's messages as `message_history` and a `DeferredToolResults`
(`approvals={tool_call_id: True | ToolApproved(override_args=…) | ToolDenied(message)}`, `calls={tool_call_id:
result}`), which no span records. What the spans do record: the new run's messages (`pydantic_ai.all_messages`, the
new ones from `pydantic_ai.new_message_index`) open with a tool return for each deferred call answered; an approved
call runs in that run (its `execute_tool` span, with the arguments it ran with), a denied one does not, its return the
denial's message (the model is shown it as the call's result, `ToolReturnPart(outcome='denied')`, an outcome the
OTel messages drop), an external call's return the result the application gave.

Seen in a real capture: tests/captures/pydantic-ai_openai_deferred-approval (two parallel calls needing approval, one
approved, one denied with a message).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.trajectory.mappers.messages import parse_arguments, render
from evalkit.trajectory.mappers.reader import as_int, parse_json
from evalkit.trajectory.operations import AgentRun, Interrupt
from evalkit.trajectory.span import Span

# `DeferredToolRequests`' fields, as its JSON dump always has them (`_kinds` only when a call is a question).
_REQUEST_FIELDS = frozenset({"calls", "approvals", "metadata"})
_ALL_MESSAGES = "pydantic_ai.all_messages"
_NEW_MESSAGE_INDEX = "pydantic_ai.new_message_index"
# What a deferred call waits for (`DeferredToolRequests.kind`), as the step asking for it says.
_ASKED = {"approval": "Approval asked for", "external": "Result asked for", "question": "Answer asked for"}
_NOT_RUN = object()  # no tool span ran the call


@dataclass(frozen=True, slots=True)
class _Deferred:
    kind: str  # a key of `_ASKED`
    tool: str
    arguments: Any  # as the model gave them
    validated: Any  # as the tool would receive them (`DeferredToolRequests.validated_args`), None if not recorded


def deferred_requests(final_result: Any) -> dict[str, Any] | None:
    """A run's `final_result` (its recorded JSON) if it is a `DeferredToolRequests`: the run ended asking."""
    value = parse_json(final_result)
    if not isinstance(value, dict) or not _REQUEST_FIELDS <= set(value):
        return None
    pending = _pending(value)
    return value if pending else None


def interrupt(span: Span, emitter: str, requests: dict[str, Any]) -> Interrupt:
    """The run ending to ask for what its `DeferredToolRequests` lists, when its span ends."""
    asked = "\n".join(f"{_ASKED[call.kind]} {call.tool} {_arguments(call.arguments)}"
                      for call in _pending(requests).values())
    return Interrupt(span=span, emitter=emitter, time_ns=span.end_time_unix_nano, asked=asked, requests=[requests])


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The runs of the session carrying on a run that ended asking, given the answers they were given
    (`AgentRun.resumed_with`): each deferred call approved (run, as its tool span shows), denied (with what the model
    was told) or answered with a result."""
    runs = list(runs)
    pending: dict[str, _Deferred] = {}
    for run in runs:
        requests = deferred_requests(run.span.attributes.get("final_result"))
        if requests is not None:
            pending.update(_pending(requests))
    if not pending:
        return
    ran: dict[tuple[str, str], Any] = {}  # (trace id, tool call id) -> the arguments its tool ran with
    for span in spans:
        call_id = span.attributes.get("gen_ai.tool.call.id")
        if isinstance(call_id, str) and call_id in pending:
            ran[(span.trace_id, call_id)] = parse_arguments(span.attributes.get("gen_ai.tool.call.arguments"))
    for run in runs:
        if run.resumed_with is not None:
            continue
        answered = _answered(run.span, pending)
        if answered:
            run.resumed_with = "\n".join(
                _decision(pending[call_id], result, ran.get((run.span.trace_id, call_id), _NOT_RUN))
                for call_id, result in answered)


def _pending(requests: dict[str, Any]) -> dict[str, _Deferred]:
    """Each deferred call of a `DeferredToolRequests`, by its id."""
    kinds = requests.get("_kinds")
    kinds = kinds if isinstance(kinds, dict) else {}
    validated = requests.get("validated_args")
    validated = validated if isinstance(validated, dict) else {}
    found: dict[str, _Deferred] = {}
    for field, default in (("approvals", "approval"), ("calls", "external")):
        calls = requests.get(field)
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and call.get("part_kind") == "tool-call" and isinstance(
                    call.get("tool_call_id"), str):
                call_id = call["tool_call_id"]
                kind = default if field == "approvals" else str(kinds.get(call_id, default))
                found[call_id] = _Deferred(kind if kind in _ASKED else default, str(call.get("tool_name")),
                                           parse_arguments(call.get("args")), validated.get(call_id))
    return found


def _answered(span: Span, pending: dict[str, _Deferred]) -> list[tuple[str, Any]]:
    """The deferred calls a run was given answers for, in order, with the result the model was shown: the tool
    returns its new messages open with (before its model answered anything)."""
    messages = parse_json(span.attributes.get(_ALL_MESSAGES))
    start = as_int(span.attributes.get(_NEW_MESSAGE_INDEX))
    if not isinstance(messages, list) or start is None:
        return []
    answered: list[tuple[str, Any]] = []
    for message in messages[start:]:
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        parts = message.get("parts")
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get("type") == "tool_call_response" and part.get("id") in pending:
                answered.append((part["id"], part.get("result")))
    return answered


def _decision(call: _Deferred, result: Any, ran_with: Any) -> str:
    """What was decided for a deferred call: an approval's outcome (denied: no tool ran it, the model shown the
    denial's message as its result), else the result given."""
    asked = f"{call.tool} {_arguments(call.arguments)}"
    if call.kind != "approval":
        return f"Result for {asked}: {render(result)}"
    if ran_with is _NOT_RUN:
        return f"Denied {asked}: {render(result)}"
    if ran_with is not None and ran_with not in (call.arguments, call.validated):  # `ToolApproved(override_args=…)`
        return f"Approved {asked} with {_arguments(ran_with)}"
    return f"Approved {asked}"


def _arguments(arguments: Any) -> str:
    return render(arguments if arguments is not None else {})
