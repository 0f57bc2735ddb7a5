"""BeeAI Framework's conventions, as OpenInference's BeeAI instrumentation records them.

openinference-instrumentation-beeai listens to BeeAI's emitter and, when a top-level run ends, builds
a span for each run inside it (an agent, a chat model call, a tool, a requirement; `processors/`),
with conventions of its own:

- An event of a run that its processor does not read itself becomes a child span named after the
  event (`SpanWrapper.child`, `_span.py`): of its parent's kind, started and ended at the event's
  time, the event as `input.value`, the event's meta as `metadata.id` / `metadata.path` /
  `metadata.context.*` / `metadata.trace.*`. RequirementAgent's `final_answer` event (the answer
  streamed out of the final_answer tool call) arrives so as an AGENT span, a tool's `error` and
  `retry` events as TOOL spans. They record events, not operations: no agent ran, no tool was
  called again. A run's own span never has `metadata.path`, and always `metadata.class_name`.
- A failed tool's span has the error's explanation as `output.value` (`SpanWrapper.record_exception`:
  `OUTPUT_VALUE: error.explain()`), not what the model was shown: the agent wraps it in its own
  template (RequirementAgent's `tool_error`: "The tool has failed; the error log is shown below. …"),
  which the next call's input carries.
- A tool message's call id is written inside its content part, `message.contents.<i>.message.tool_call_id`
  (`processors/chat.py`, `_process_messages`: `MessageAttributes.MESSAGE_TOOL_CALL_ID` among the
  part's keys), not as `message.tool_call_id`.
- `metadata.*` on a run's span is the processor's bookkeeping or a copy of what other attributes say:
  `class_name`, the agent's `memory.*` and `steps.*` (its tool calls again), `result.*` (its answer
  again), a call's `usage.*` (its token counts again) and `chunks_count`, a tool's `output_class`
  and `is_empty`.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.reader import SpanReader, dig, indexed
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import STATUS_ERROR

SCOPE = "openinference.instrumentation.beeai"


def is_beeai(reader: SpanReader) -> bool:
    return reader.span.scope_name == SCOPE


def is_event(reader: SpanReader) -> bool:
    """A span recording an event of its parent's run (`SpanWrapper.child`), not a run of its own."""
    return is_beeai(reader) and reader.has("metadata.path") and not reader.has("metadata.class_name")


def consume(reader: SpanReader) -> None:
    """Read on purpose: bookkeeping, or what the span's other attributes (its event's, its parent's) say."""
    if is_beeai(reader):
        reader.consume_prefix("metadata.")
    if is_event(reader):
        reader.consume_prefix("input.", "output.", "tool.", "llm.", "agent.")
        reader.read_events("exception")  # an `error` event's exception: its run's span records it too


def tool_execution(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    if reader.span.status_code == STATUS_ERROR:
        # The error's explanation, not the result the model was shown: left empty for the next call's
        # input to fill (the exception, message and stack, stays on the result's error).
        execution.result = None
    return execution


def content_tool_call_id(message: Any) -> str | None:
    """A tool message's call id where BeeAI writes it: in a content part (`contents.<i>.message.tool_call_id`)."""
    for part in indexed(dig(message, "contents")):
        found = dig(part, "message", "tool_call_id")
        if found is not None and found != "":
            return str(found)
    return None
