"""Google ADK traced by openinference-instrumentation-google-adk (`google-adk_openinference` capture).

The instrumentation's spans carry ADK's own attributes too: its TOOL spans' `output.value` is the
`FunctionResponse` ADK sent the model (`{"id", "name", "response"}`), `transfer_to_agent` is ADK's
handoff (`gen_ai.tool.type` `TransferToAgentTool`), and the `execute_tool (merged)` span of parallel calls
has no OpenInference kind at all. Read as in `google-adk_native`.
"""

from __future__ import annotations

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.trajectory.span_fixtures import capture_spans


def test_results_handoff_and_merged_span_read_as_adks() -> None:
    result = trajectory_from_spans(capture_spans("google-adk_openinference"), session_id="adk-oi-travel-1")
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    steps = document["steps"]
    # No `(merged tools)` step: the parallel calls are answered on the call that made them.
    assert not [s for s in steps if any(c["function_name"] == "(merged tools)" for c in s.get("tool_calls") or ())]
    first = next(s for s in steps if s.get("tool_calls"))
    assert [r["content"] for r in first["observation"]["results"]] == [
        '{"result": "sunny, 21°C"}', '{"result": "rainy, 9°C"}']  # the FunctionResponse's `response`
    # transfer_to_agent starts the booking agent: its calls are a subagent's, not the root's.
    transfer = next(s for s in steps
                    if any(c["function_name"] == "transfer_to_agent" for c in s.get("tool_calls") or ()))
    (handoff,) = transfer["observation"]["results"]
    assert handoff["subagent_trajectory_ref"][0]["trajectory_id"].startswith("booking_agent:")
    (booking,) = document["subagent_trajectories"]
    answered = [r["content"] for s in booking["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    assert answered == ['{"status": "error", "error_message": "Hotel Nord takes bookings of two nights or more"}',
                        '{"status": "success", "booking": "Hotel Nord in Oslo, 2 nights, ref OSL-42"}']
    # ADK's bookkeeping and restatements on the instrumentation's spans are read; only the invocation
    # CHAIN span's input and output (as every OpenInference CHAIN's) are left.
    assert result.unmapped_attributes == ["input.value", "output.value"]
