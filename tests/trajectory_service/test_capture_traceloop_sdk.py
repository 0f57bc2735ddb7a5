"""The Traceloop SDK capture, beyond `corpus.compare`: its decorator spans are no steps, its failing tool is flagged."""

from __future__ import annotations

from tests.trajectory_service.conftest import Service
from tests.trajectory_service.test_capture_sdks_and_sessions import _replayed


async def test_traceloop_sdk_workflow_agent_and_tool_spans_two_turns_one_session(svc: Service) -> None:
    _agent, document = await _replayed(svc, "openai-sdk_traceloop-sdk")
    # Two traces (one @workflow per turn) grouped by the `session_id` association property.
    assert document["extra"]["settlement"]["trace_count"] == 2
    # The @workflow and @agent spans (their entity input is the history, their output the answer) are no steps:
    # the system prompt and each question once, though turn 2 re-sends turn 1, and one agent step per call.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert [s["message"] for s in document["steps"] if s["source"] != "agent"] == [
        "You are a terse travel assistant.", "What is the weather in Lisbon and Porto?",
        "Book me a hotel in Porto for 2 nights."]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    assert document["agent"]["name"] == "trip_assistant"
    # The @tool spans answer their calls by id: the parallel weather results, and the raising hotel tool flagged
    # with its exception, its content the error text the loop sent the model.
    results = {r["source_call_id"]: r for s in document["steps"]
               for r in (s.get("observation") or {}).get("results", ())}
    assert [(r["content"], bool(r["extra"].get("is_error"))) for r in results.values()] == [
        ("sunny, 24°C", False), ("cloudy, 18°C", False), ("Error: no rooms free in Porto for 2 nights", True)]
    assert results["call_2_0"]["extra"]["error"]["exceptions"][0]["type"] == "RuntimeError"
    # The streamed calls (turn 2, include_usage) have their tokens like the others.
    assert all(s["metrics"]["completion_tokens"] > 0 for s in document["steps"] if s["source"] == "agent")
    assert document["extra"]["unmapped_attributes"] == []
