"""Semantic Kernel's spans without its message records: what its non-sensitive diagnostics send.

`SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS` (not `…_SENSITIVE`) writes the same spans as
the `semantic-kernel_native` capture and none of the log records that hold the messages: the capture's
trace exports alone are that run.
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans


def test_without_choice_records_the_finish_reasons_are_read_from_sks_own_attribute() -> None:
    result = trajectory_from_spans(capture_spans("semantic-kernel_native"), session_id="semantic-kernel-weather-1")
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    calls = [step for step in document["steps"] if step.get("llm_call_count") == 1]
    # `gen_ai.response.finish_reason` is "FinishReason.TOOL_CALLS": the provider's value is "tool_calls".
    assert [step["extra"]["finish_reasons"] for step in calls] == [["tool_calls"], ["stop"], ["tool_calls"], ["stop"]]
    assert "gen_ai.response.finish_reason" not in document["extra"]["unmapped_attributes"]
