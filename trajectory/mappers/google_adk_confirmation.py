"""Google ADK's tool confirmation (its human in the loop) as ADK's own tracing records it: a run ending to ask a person
to confirm its tool calls, and the run carrying it on with their answers.

A `FunctionTool(func, require_confirmation=True)` is not run when the model calls it: ADK runs the tool's span all
the same, its result the tool's stand-in answer `{"error": "This tool call requires confirmation, please approve or
reject."}` (`FunctionTool.run_async`), and ends the invocation with an `adk_request_confirmation` function call for
each such call (its `originalFunctionCall`, a `toolConfirmation` with ADK's hint), an event no span records. The model
is never shown the stand-in: the next call's input holds the result the call got once answered.

The application answers in a new invocation of the same session (`Runner.run_async`), its message a
`FunctionResponse` for each request (`{"confirmed": true | false}`), which no span records either. ADK then runs each
answered call again, under the same call id (ADK's own, `adk-…`, on the tool's span): a confirmed call runs its
function, a rejected one answers `{"error": "This tool call is rejected."}` (its span's status an error). Those
spans are what the person decided.

A tool asking for confirmation itself (`tool_context.request_confirmation(hint=…)`) answers as it chooses, and ADK
records no sign of the request on any span: not read here.

Seen in a real capture: tests/captures/google-adk_native_confirmation (two parallel calls needing confirmation, one
confirmed, one rejected).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.trajectory.mappers.messages import parse_arguments, render
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import AgentRun, Interrupt
from evalkit.trajectory.span import Span

# `FunctionTool.run_async`'s answers (google/adk/tools/function_tool.py): a call waiting for its confirmation, and a
# rejected one.
CONFIRMATION_ASKED = {"error": "This tool call requires confirmation, please approve or reject."}
REJECTED = {"error": "This tool call is rejected."}
_RESULT = "gen_ai.tool.call.result"
_CALL_ID = "gen_ai.tool.call.id"


@dataclass(frozen=True, slots=True)
class _Execution:
    span: Span
    call_id: str
    tool: str
    arguments: Any
    result: Any


def asks_confirmation(result: Any) -> bool:
    """Whether a tool's recorded result (its span's JSON) is ADK's stand-in for a call waiting for confirmation."""
    return isinstance(result, str) and result.startswith('{"error"') and parse_json(result) == CONFIRMATION_ASKED


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The runs of the session that ended asking a person to confirm tool calls (`AgentRun.interrupt`: each call
    asked for, when the last was), and the runs carrying them on, given the answers (`AgentRun.resumed_with`: each
    call confirmed or rejected, as ADK's run of it again shows)."""
    executions = [execution for span in spans if (execution := _execution(span)) is not None]
    asked = [execution for execution in executions if asks_confirmation(execution.span.attributes.get(_RESULT))]
    if not asked:
        return
    asked_ids = {execution.call_id for execution in asked}
    answered = [execution for execution in executions
                if execution.call_id in asked_ids and not asks_confirmation(execution.span.attributes.get(_RESULT))]
    for run in runs:
        mine = [execution for execution in asked if _within(execution.span, run.span)]
        if mine and run.interrupt is None:
            run.interrupt = Interrupt(
                span=run.span, emitter=run.emitter, time_ns=max(e.span.end_time_unix_nano for e in mine),
                asked="\n".join(f"Confirmation asked for {e.tool} {_arguments(e.arguments)}" for e in mine),
                requests=[{"call_id": e.call_id, "tool": e.tool, "arguments": e.arguments} for e in mine])
        decided = [execution for execution in answered if _within(execution.span, run.span)]
        if decided and run.resumed_with is None:
            run.resumed_with = "\n".join(_decision(execution) for execution in decided)


def _execution(span: Span) -> _Execution | None:
    call_id = span.attributes.get(_CALL_ID)
    if not isinstance(call_id, str) or _RESULT not in span.attributes:
        return None
    return _Execution(span, call_id, str(span.attributes.get("gen_ai.tool.name")),
                      parse_arguments(span.attributes.get("gen_ai.tool.call.arguments")),
                      parse_json(span.attributes.get(_RESULT)))


def _within(span: Span, run: Span) -> bool:
    """Whether a tool's span ran in an agent's run: its child, as ADK opens it (`execute_tool` under `invoke_agent`)."""
    return span.trace_id == run.trace_id and span.parent_span_id == run.span_id


def _decision(execution: _Execution) -> str:
    """What the person decided for a call, as ADK's run of it after their answer shows."""
    asked = f"{execution.tool} {_arguments(execution.arguments)}"
    return f"Rejected {asked}" if execution.result == REJECTED else f"Confirmed {asked}"


def _arguments(arguments: Any) -> str:
    return render(arguments if arguments is not None else {})
