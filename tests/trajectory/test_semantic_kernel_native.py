"""Semantic Kernel's own diagnostics (the `semantic-kernel_native` and `semantic-kernel_native_handoff` captures).

A chat call asked for functions runs in SK's `AutoFunctionInvocationLoop` span, which holds the calls and the
functions they ask for. Its log records are SK's debug lines (no event name): read as a call's messages they made
the loop an LLM call wrapping the real ones, dropped again with a warning on every SK trajectory.
"""

from __future__ import annotations

from typing import Any

import pytest
from span_fixtures import capture_logs, capture_spans, capture_truth

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import semantic_kernel
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.span import LogRecord

SESSIONS = {"semantic-kernel_native": "semantic-kernel-weather-1",
            "semantic-kernel_native_handoff": "semantic-kernel-handoff-1"}
LOOP = "AutoFunctionInvocationLoop"


def _calls(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    """A trajectory's LLM call steps, its subagents' included."""
    own = [step for step in trajectory["steps"] if step.get("llm_call_count") == 1]
    return own + [call for sub in trajectory.get("subagent_trajectories") or () for call in _calls(sub)]


@pytest.mark.parametrize("capture", sorted(SESSIONS))
def test_the_function_invocation_loop_is_no_llm_call(capture: str) -> None:
    spans, logs = capture_spans(capture), capture_logs(capture)
    loops = [span for span in spans if span.name == LOOP]
    assert loops
    for span in loops:
        own: list[LogRecord] = [log for log in logs if (log.trace_id, log.span_id) == (span.trace_id, span.span_id)]
        assert own and all(log.event_name == "" for log in own)  # SK's debug lines, e.g. "processing 2 tool calls…"
        reader = SpanReader(span)
        assert semantic_kernel.detect(span)
        assert semantic_kernel.map_span(reader, own) is None
        assert reader.unused() == set()  # `sk.available_functions`: the functions the model may call

    result = trajectory_from_spans(spans, logs, session_id=SESSIONS[capture])
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert not [w for w in document["extra"].get("warnings") or () if "wrapping another LLM span" in w]
    # Every call the fake LLM answered, once.
    truth = capture_truth(capture)
    calls = _calls(document)
    assert len(calls) == len(truth.calls)
    assert sum(step["metrics"]["prompt_tokens"] for step in calls) == truth.input_tokens
