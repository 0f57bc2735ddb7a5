"""Agno's human in the loop as OpenInference's Agno instrumentation records it: a run pausing to ask a person about
its tool calls, and the run carrying it on with their decisions.

A tool made with `@tool(requires_confirmation=True)` (or `requires_user_input`, `external_execution`) is not run when
the model calls it: the run pauses (`RunOutput.is_paused`), its content Agno's placeholder (`get_paused_content`: "I
have tools to execute, but I need confirmation." and its variants), which is all the run's span records as its
`output.value`. What it asks about are the paused run's last model call's tool calls whose tool is so marked: the
call span's tool definitions (`llm.tools.N.tool.json_schema`) carry Agno's flag beside the function.

The application decides each (`RunRequirement.confirm()` / `.reject(note)`) and calls `agent.continue_run(run_id=…,
requirements=…)`, a span of its own (`<agent>.continue_run`, a trace of its own) with the paused run's `agno.run.id`.
No span records the decisions themselves; what the spans do record: a confirmed call runs in the continued run (its
TOOL span, which names the tool and its arguments but no call id), a rejected one does not, and the continued run's
first model call is sent each as a tool message (its `input.value`, Agno's messages: `tool_call_id`, `content`,
`tool_call_error`), a rejected call's content the person's note (or Agno's "Tool call was rejected").

Seen in a real capture: tests/captures/agno_openinference_confirmation (two parallel bookings needing confirmation, one
confirmed, one rejected with a note).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.trajectory.mappers import agno
from evalkit.trajectory.mappers.messages import parse_arguments, render
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import AgentRun, Interrupt
from evalkit.trajectory.span import Span

_KIND = "openinference.span.kind"
_RUN_ID = "agno.run.id"
# Every text Agno's `get_paused_content` gives a paused run starts so.
_PAUSED = "I have tools to execute, but "
# What a marked tool waits for, by its flag in the tool's definition, as the step asking for it says.
_ASKED = {"requires_confirmation": "Confirmation asked for", "requires_user_input": "Input asked for",
          "external_execution": "Result asked for"}


@dataclass(frozen=True, slots=True)
class _Paused:
    flag: str  # a key of `_ASKED`
    tool: str
    arguments: Any


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's paused Agno runs ending with what they asked (`AgentRun.interrupt`, no answer of theirs), and the
    runs carrying them on given the person's decisions (`AgentRun.resumed_with`)."""
    runs = [run for run in runs if run.span.scope_name == agno.SCOPE]
    paused_runs = [run for run in runs if _is_paused(run.span)]
    if not paused_runs:
        return
    children: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        children.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    for paused_run in paused_runs:
        asked = _asked(children.get((paused_run.span.trace_id, paused_run.span.span_id), []))
        if not asked:
            continue
        paused_run.output_text = None  # Agno's placeholder, no answer of the model's
        paused_run.interrupt = Interrupt(
            span=paused_run.span, emitter=paused_run.emitter, time_ns=paused_run.span.end_time_unix_nano,
            asked="\n".join(f"{_ASKED[call.flag]} {call.tool} {render(call.arguments)}" for call in asked.values()),
            requests=[{"tool_call_id": call_id, "tool": call.tool, "arguments": call.arguments,
                       "asked": call.flag} for call_id, call in asked.items()])
        run_id = paused_run.span.attributes.get(_RUN_ID)
        carried_on = next((run for run in runs if run is not paused_run and run.resumed_with is None and run_id
                           and run.span.attributes.get(_RUN_ID) == run_id
                           and run.span.start_time_unix_nano >= paused_run.span.end_time_unix_nano), None)
        if carried_on is not None:
            decisions = _decisions(children.get((carried_on.span.trace_id, carried_on.span.span_id), []), asked)
            if decisions:
                carried_on.resumed_with = "\n".join(decisions)


def _is_paused(span: Span) -> bool:
    output = span.attributes.get("output.value")
    return (span.attributes.get(_KIND) == "AGENT" and isinstance(output, str) and output.startswith(_PAUSED))


def _llm_spans(children: Sequence[Span]) -> list[Span]:
    return sorted((span for span in children if span.attributes.get(_KIND) == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _asked(children: Sequence[Span]) -> dict[str, _Paused]:
    """The tool calls a paused run waits on, by call id: its last model call's calls of a tool marked for a person."""
    calls = _llm_spans(children)
    if not calls:
        return {}
    attributes = calls[-1].attributes
    flags: dict[str, str] = {}  # tool name -> the flag its definition carries
    index = 0
    while (schema := attributes.get(f"llm.tools.{index}.tool.json_schema")) is not None:
        definition = parse_json(schema)
        function = definition.get("function") if isinstance(definition, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            flag = next((flag for flag in _ASKED if function.get(flag) is True), None)
            if flag is not None:
                flags[function["name"]] = flag
        index += 1
    asked: dict[str, _Paused] = {}
    prefix = "llm.output_messages.0.message.tool_calls."
    index = 0
    while (name := attributes.get(f"{prefix}{index}.tool_call.function.name")) is not None:
        call_id = attributes.get(f"{prefix}{index}.tool_call.id")
        if isinstance(call_id, str) and name in flags:
            arguments = parse_arguments(attributes.get(f"{prefix}{index}.tool_call.function.arguments"))
            asked[call_id] = _Paused(flags[name], str(name), arguments)
        index += 1
    return asked


def _decisions(children: Sequence[Span], asked: dict[str, _Paused]) -> list[str]:
    """What the person decided for each call the run was carried on with, in the order its first model call was sent
    them: confirmed (its tool ran in this run), rejected (with what the model was told), or answered."""
    calls = _llm_spans(children)
    sent = parse_json(calls[0].attributes.get("input.value")) if calls else None
    messages = sent.get("messages") if isinstance(sent, dict) else None
    ran = [(span.attributes.get("tool.name"), parse_arguments(span.attributes.get("input.value")))
           for span in children if span.attributes.get(_KIND) == "TOOL"]
    decisions: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict) or message.get("role") != "tool" or message.get("tool_call_id") not in asked:
            continue
        call = asked[message["tool_call_id"]]
        described = f"{call.tool} {render(call.arguments)}"
        if call.flag != "requires_confirmation":
            decisions.append(f"Answered {described}: {render(message.get('content'))}")
        elif (call.tool, call.arguments) in ran:
            decisions.append(f"Confirmed {described}")
        else:
            decisions.append(f"Rejected {described}: {render(message.get('content'))}")
    return decisions
