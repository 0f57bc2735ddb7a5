"""smolagents' planning steps, as OpenInference's smolagents instrumentation records them.

An agent given a `planning_interval` asks the model for a plan before its first step and for an updated plan every
interval after (`MultiStepAgent._generate_planning_step`): an LLM call of its own, under the run's span (no step's),
its `stop_sequences` smolagents' `["<end_plan>"]` (recorded in the call's `input.value`, the arguments it was given),
its answer the plan. Its prompt is smolagents' planning template, no one's question:
- an initial plan is asked in one user message, the `initial_plan` template around the run's task;
- an update is asked in a system message (`update_plan_pre_messages`), the memory in summary mode (each run's
  `New task:` and each step's tool calls and observations, no plan), and a user message closing it
  (`update_plan_post_messages`).
So the planning call's step is the plan, marked `extra.planning` ("initial plan" / "updated plan", as smolagents logs
its headline), its templates instructions (system steps), and the question an initial plan was asked the run's task,
as the memory states it to every later call (`TaskStep.to_messages`: "New task:\n" and the task), from the run's span.

The memory re-sends each plan to the action steps (`PlanningStep.to_messages`) as an assistant message wrapping it in
a text of smolagents' own ("Here are the facts I know and the plan of action…" and the plan in a code fence; an update
also restates the task), followed by the user's "Now proceed and carry out this plan.": that message is the planning
call's answer, re-sent, read as the plan the model wrote.

Seen in a real capture: tests/captures/smolagents_openinference_planning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

SCOPE = "openinference.instrumentation.smolagents"
# The stop sequence smolagents gives every planning call, and nothing else it calls a model for.
_PLAN_END = "<end_plan>"
INITIAL_PLAN = "initial plan"
UPDATED_PLAN = "updated plan"
# How the memory re-sends a plan (`_generate_planning_step`'s `plan`, stripped): the model's answer in a code fence.
_RESENT_PLANS = (
    re.compile(r"\AHere are the facts I know and the plan of action that I will follow to solve the task:\n```\n"
               r"(?P<plan>.*)\n```\Z", re.DOTALL),
    re.compile(r"\AI still need to solve the task I was given:\n```\n.*?\n```\n\nHere are the facts I know and my "
               r"new/updated plan of action to solve the task:\n```\n(?P<plan>.*)\n```\Z", re.DOTALL),
)
# How the memory states a run's task to every call after it (`TaskStep.to_messages`).
_TASK_PREFIX = "New task:\n"
_RUN_MARK = "smolagents.max_steps"  # on a run's span only (its settings)


def read_call(call: LlmCall, input_value: Any) -> None:
    """A smolagents call: a planning call's templates as instructions and its step marked; a re-sent plan as the
    planning call's answer it is. `input_value`: the call span's `input.value`, the arguments `generate` was given."""
    call.input_messages = [_resent_plan(message) for message in call.input_messages]
    if not _asks_for_plan(input_value):
        return
    messages = call.input_messages
    if any(message.role == "system" for message in messages):
        call.extra["planning"] = UPDATED_PLAN
        if messages and messages[-1].role == "user":
            messages[-1] = Message("system", messages[-1].parts, name=messages[-1].name)
    else:
        call.extra["planning"] = INITIAL_PLAN
        call.input_messages = [Message("system", m.parts, name=m.name) if m.role == "user" else m for m in messages]


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each initial plan asked the task of the run holding it (its span's `input.value`), where the planning template
    wraps it: the question, as the memory states it to the calls after."""
    initial = [call for call in calls if call.extra.get("planning") == INITIAL_PLAN]
    if not initial:
        return
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    for call in initial:
        run = _run_holding(call.span, by_key)
        task = _task_of(run) if run is not None else None
        if task and any(task in message.text for message in call.input_messages):
            call.input_messages.append(Message("user", [Part("text", text=_TASK_PREFIX + task)]))


def _asks_for_plan(input_value: Any) -> bool:
    if not isinstance(input_value, str) or _PLAN_END not in input_value:
        return False  # most calls: no JSON read
    arguments = parse_json(input_value)
    return isinstance(arguments, dict) and arguments.get("stop_sequences") == [_PLAN_END]


def _resent_plan(message: Message) -> Message:
    if message.role != "assistant" or message.tool_calls:
        return message
    for pattern in _RESENT_PLANS:
        found = pattern.match(message.text)
        if found is not None:
            return Message("assistant", [Part("text", text=found.group("plan"))], name=message.name)
    return message


def _run_holding(span: Span, by_key: dict[tuple[str, str], Span]) -> Span | None:
    parent = by_key.get((span.trace_id, span.parent_span_id))
    while parent is not None and _RUN_MARK not in parent.attributes:
        parent = by_key.get((parent.trace_id, parent.parent_span_id))
    return parent


def _task_of(run: Span) -> str | None:
    arguments = parse_json(run.attributes.get("input.value"))
    task = arguments.get("task") if isinstance(arguments, dict) else None
    return task if isinstance(task, str) and task else None
