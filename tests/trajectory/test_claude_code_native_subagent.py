"""Claude Code's subagents (its `Agent` tool running an `AgentDefinition`), in the CLI's own export.

The subagent runs inside its call's `claude_code.tool.execution` span: its requests and tools are that span's
children, and what its query loop emits about its run as a whole (`subagent_completed`) stays linked there
(trajectory/mappers/claude_code.py). The capture `claude-code_native_subagent`: the main agent calls `get_weather`
and `Agent` (forecaster) at once; the subagent's `get_forecast` raises once, is retried, and it reports; the main
agent answers; a second turn of one tool call.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import claude_code
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import STATUS_OK, LogRecord, Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans

CAPTURE = "claude-code_native_subagent"
AGENT_CALL = "toolu_0_1"  # the main agent's Agent call (the fake LLM's ids: call 0, its second tool call)
TRACE = "8d3bce56b86decfefd9ef47bc522dd76"
EXECUTION = "3000000000000002"
AGENT_ID = "afe3ffeadbf5a1cf4"


def _document() -> dict[str, Any]:
    built = trajectory_from_spans(capture_spans(CAPTURE), capture_logs(CAPTURE))
    assert built.valid, built.issues
    return built.data


def _texts(trajectory: dict[str, Any]) -> list[str]:
    return [corpus.message_text(step.get("message")) for step in trajectory["steps"]
            if step["source"] == "agent" and step.get("llm_call_count") == 1]


def test_the_subagents_calls_are_its_own_trajectory_started_by_the_agent_call() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    subagent_calls = [call for call in truth.calls if call.seq in (1, 2, 3)]  # the requests its system prompt made
    # The main agent's conversation: its own four calls, not the subagent's three between them.
    assert _texts(document) == [call.text for call in truth.calls if call not in subagent_calls]
    (subagent,) = document["subagent_trajectories"]
    assert subagent["agent"]["name"] == "forecaster"
    assert _texts(subagent) == [call.text for call in subagent_calls]
    assert [d["function"]["name"] for d in subagent["agent"]["tool_definitions"]] == ["mcp__weather__get_forecast"]
    # Referenced from the result of the call that started it, beside the report the main agent was shown.
    (delegating,) = [step for step in document["steps"]
                     if AGENT_CALL in {call["tool_call_id"] for call in step.get("tool_calls") or ()}]
    (result,) = [r for r in delegating["observation"]["results"] if r["source_call_id"] == AGENT_CALL]
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [subagent["trajectory_id"]]
    assert "Tomorrow Lisbon will be sunny" in corpus.message_text(result["content"])
    # The subagent's failing tool is flagged in its own trajectory.
    flagged = [r["source_call_id"] for step in subagent["steps"] for r in (step.get("observation") or {}).get(
        "results", ()) if (r.get("extra") or {}).get("is_error")]
    assert flagged == ["toolu_1_0"]


def test_the_subagents_id_and_type_are_read() -> None:
    # Its id on its calls and tools, its type on the Agent call: Claude Code's names for what the span tree and
    # the run's name say, not attributes left unmapped.
    assert _document()["extra"]["unmapped_attributes"] == []


def _execution() -> Span:
    return Span(trace_id=TRACE, span_id=EXECUTION, parent_span_id="2000000000000001", name="claude_code.tool.execution",
                kind=1, start_time_unix_nano=1, end_time_unix_nano=9, status_code=STATUS_OK,
                scope_name=claude_code.SCOPE,
                attributes={"span.type": "tool.execution", "tool_use_id": "toolu_1", "gen_ai.tool.call.id": "toolu_1",
                            "success": True, "session.id": "s1"})


def _event(name: str, **attributes: Any) -> LogRecord:
    return LogRecord(time_unix_nano=5, trace_id=TRACE, span_id=EXECUTION, event_name=name,
                     body=f"claude_code.{name}", scope_name=claude_code.EVENTS_SCOPE,
                     attributes={"event.name": name, **attributes})


def test_an_execution_span_is_a_subagents_run_only_by_what_its_query_loop_left_there() -> None:
    completed = claude_code.map_span(SpanReader(_execution()), [
        _event("api_error", agent_id=AGENT_ID, **{"agent.name": "forecaster-by-request"}),
        _event("subagent_completed", agent_type="forecaster", agent_id=AGENT_ID)])
    assert isinstance(completed, AgentRun) and completed.name == "forecaster"  # the completion names its type
    failed = claude_code.map_span(SpanReader(_execution()), [
        _event("api_error", agent_id=AGENT_ID, **{"agent.name": "forecaster"})])
    assert isinstance(failed, AgentRun) and failed.name == "forecaster"  # it never completed: its request's name
    # Any other tool's execution: nothing of a subagent's, or what a subagent's own tool emitted while it ran.
    assert claude_code.map_span(SpanReader(_execution()), ()) is None
    assert claude_code.map_span(SpanReader(_execution()), [_event("tool_decision", agent_id=AGENT_ID)]) is None
    assert claude_code.map_span(SpanReader(_execution()), [_event("api_error")]) is None
