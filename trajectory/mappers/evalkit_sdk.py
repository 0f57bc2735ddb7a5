"""The evalkit SDK's own run span (sdk/tracing.py): what a task was asked, what it answered, how it failed.

It is not an agent's span: a task's own instrumentation nests under it, and the trajectory is made from
that. Only a session where nothing of an agent's was recorded (a task whose code emits no spans, or one
that failed before its agent began) takes its steps from this span, so that its trajectory still says what
the run was asked, what it answered and why it failed, not only that no LLM activity was recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ErrorInfo
from evalkit.trajectory.span import Span

NAME = "evalkit-sdk"
# As sdk/tracing.py writes them (a test holds the two together).
SCOPE = "evalkit.sdk"
RUN_SPAN = "evalkit.run"
INPUT = "evalkit.input"
OUTPUT = "evalkit.output"


@dataclass(frozen=True)
class SdkRun:
    span: Span
    input_text: str | None
    output_text: str | None
    error: ErrorInfo | None


def sdk_runs(spans: Iterable[Span]) -> list[SdkRun]:
    """The SDK's run spans among a session's, with what they recorded."""
    runs = []
    for span in spans:
        if span.scope_name != SCOPE or span.name != RUN_SPAN:
            continue
        asked, answered = span.attributes.get(INPUT), span.attributes.get(OUTPUT)
        runs.append(SdkRun(span, None if asked in (None, "") else str(asked),
                           None if answered is None else str(answered), span_error(SpanReader(span))))
    return runs
