"""Mastra's working memory: the system message `@mastra/memory` writes into every turn's prompt, shown once.

An agent whose `Memory` has `workingMemory.enabled` keeps a Markdown (or JSON) note on the user or thread, which the
model rewrites by calling the `updateWorkingMemory` tool Mastra gives it (an ordinary tool call of its step). At the
start of each turn @mastra/core's `WorkingMemory` input processor loads the note and adds to the prompt a second system
message after the agent's instructions: Mastra's instructions for the tool (`WORKING_MEMORY_SYSTEM_INSTRUCTION:` …), the
template, and the note as then stored between `<working_memory_data>` tags (`null` before the first update). Every call
of the turn is sent that same message; the next turn's holds the note as the last update left it, so the message
changes at each turn after an update, some two thousand characters of which only the note differs.

The run span records only the agent's instructions (`gen_ai.system_instructions`); the message is in each model step's
input preview (`mastra.model_step.input`, whose system messages are whole). The builder makes every distinct system
text a system step: given each turn's message it would repeat Mastra's instructions in a new system step at every turn
the note changed. So the message is its agent's system step once, where a run was first sent it (after the agent's
instructions, before the turn's question), and a later turn sent the same instructions with another note has that note
on its first step (`extra.working_memory`, the text between the tags as sent): what the model was told it knew that
turn, which may come from another thread of the same resource (the default scope) and so from no call of the session.
A message whose instructions differ (a read-only memory's) is a system step again.

Read in @mastra/core 1.71 (`WorkingMemory.getWorkingMemoryToolInstruction` and its read-only and vNext variants) and
@mastra/memory 1.31; seen in the `mastra_native_memory` capture.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalkit.trajectory.mappers import mastra
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall
from evalkit.trajectory.span import Span

MARK = "WORKING_MEMORY_SYSTEM_INSTRUCTION"  # how each variant of the message begins
EXTRA_KEY = "working_memory"
_NOTE = re.compile(r"(<working_memory_data>\n?)(.*?)(\n?</working_memory_data>)", re.S)
_STEP_INPUT = "mastra.model_step.input"
_STEP_INDEX = "mastra.model_step.step_index"
_AGENT_RUN = "agent_run"
_MODEL_STEP = "model_step"

SpanKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class _Turn:
    """An agent run sent a working-memory message: the run, its first model step, the message and its note."""

    run: SpanKey
    first_step: SpanKey
    message: str
    note: str

    @property
    def instructions(self) -> str:
        """The message with its note left out: Mastra's instructions and the template."""
        return _NOTE.sub(r"\1\3", self.message, count=1)


@dataclass(frozen=True, slots=True)
class Shown:
    """Where each run's working memory is shown: the message as a system step of the run, or the note on the step of
    its first call."""

    system_steps: dict[SpanKey, str]
    notes: dict[SpanKey, str]  # by the first model step's span


def shown(spans: Sequence[Span]) -> Shown:
    """Each run's working-memory message as a system step when its agent was not sent the same instructions before in
    the session, else its note when that changed."""
    system_steps: dict[SpanKey, str] = {}
    notes: dict[SpanKey, str] = {}
    last: dict[str, _Turn] = {}  # by agent
    for agent, turn in _turns(spans):
        before = last.get(agent)
        last[agent] = turn
        if before is None or before.instructions != turn.instructions:
            system_steps[turn.run] = turn.message
        elif before.note != turn.note:
            notes[turn.first_step] = turn.note
    return Shown(system_steps, notes)


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """A run first sent its agent's working-memory message given it as instructions after the agent's own."""
    mastra_runs = [run for run in runs if run.emitter == mastra.NAME]
    if not mastra_runs:
        return
    system_steps = shown(spans).system_steps
    for run in mastra_runs:
        message = system_steps.get((run.span.trace_id, run.span.span_id))
        if message is not None and message not in run.system_instructions:
            run.system_instructions.append(message)


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """The first call of a run sent another note than its agent's last given it (`extra.working_memory`), on the model
    step's report and its `chat` span's, whichever the builder keeps."""
    mastra_calls = [call for call in calls if call.emitter == mastra.NAME]
    if not mastra_calls:
        return
    notes = shown(spans).notes
    if not notes:
        return
    for call in mastra_calls:
        span = call.span
        note = notes.get((span.trace_id, span.span_id))
        if note is None:
            note = notes.get((span.trace_id, span.parent_span_id or ""))
        if note is not None:
            call.extra[EXTRA_KEY] = note


def _turns(spans: Sequence[Span]) -> list[tuple[str, _Turn]]:
    """The session's runs sent a working-memory message, with their agents, in the order they started."""
    by_key = {(s.trace_id, s.span_id): s for s in spans if s.scope_name == mastra.SCOPE}
    first_steps: dict[SpanKey, Span] = {}
    for span in by_key.values():
        if span.attributes.get(mastra.SPAN_TYPE) != _MODEL_STEP:
            continue
        run = _run_of(span, by_key)
        if run is None:
            continue
        known = first_steps.get(run)
        if known is None or _step_order(span) < _step_order(known):
            first_steps[run] = span
    turns: list[tuple[int, str, _Turn]] = []
    for run, step in first_steps.items():
        message = _working_memory_message(step)
        if message is None:
            continue
        match = _NOTE.search(message)
        run_span = by_key[run]
        agent = str(run_span.attributes.get("gen_ai.agent.id") or run_span.attributes.get("gen_ai.agent.name") or "")
        turn = _Turn(run, (step.trace_id, step.span_id), message, match.group(2) if match else "")
        turns.append((run_span.start_time_unix_nano, agent, turn))
    turns.sort(key=lambda found: found[0])
    return [(agent, turn) for _, agent, turn in turns]


def _run_of(span: Span, by_key: dict[SpanKey, Span]) -> SpanKey | None:
    """The agent run a model step belongs to: its nearest `agent_run` ancestor."""
    parent = by_key.get((span.trace_id, span.parent_span_id or ""))
    while parent is not None:
        if parent.attributes.get(mastra.SPAN_TYPE) == _AGENT_RUN:
            return (parent.trace_id, parent.span_id)
        parent = by_key.get((parent.trace_id, parent.parent_span_id or ""))
    return None


def _step_order(span: Span) -> tuple[int, int]:
    index = span.attributes.get(_STEP_INDEX)
    return (index if isinstance(index, int) else 0, span.start_time_unix_nano)


def _working_memory_message(step: Span) -> str | None:
    """The system message of a model step's input preview that is Mastra's working memory, if any."""
    raw = step.attributes.get(_STEP_INPUT)
    if isinstance(raw, str) and MARK not in raw:
        return None  # no working memory sent: the preview (the run's whole input) is not parsed for nothing
    preview = parse_json(raw)
    if not isinstance(preview, list):
        return None
    for message in preview:
        if not isinstance(message, dict) or message.get("role") != "system":
            continue
        content = message.get("content")
        if isinstance(content, str) and content.startswith(MARK):
            return content
    return None
