"""A Semantic Kernel HandoffOrchestration traced by SK's own diagnostics (the `semantic-kernel_native_handoff` capture).

Each invocation runs `triage_agent` and `weather_agent` as actors on an InProcessRuntime: the runtime traces its
messaging (`agent_runtime create|publish|process|ack …`), each actor's `invoke_agent` span sits under a runtime
`process` span, and the triage agent's model calls `Handoff-transfer_to_weather_agent` (the plugin the orchestration
gives each member), after which the orchestration runs the weather agent beside it, not under it. The messages are
log records linked to each call's span. Read by `trajectory/mappers/semantic_kernel.py`: the triage agent is the
trajectory, each transfer call starts the weather agent's run as a subagent (its own conversation: it is asked the
question anew); the runtime's spans are bookkeeping.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_logs, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import semantic_kernel
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution

CAPTURE = "semantic-kernel_native_handoff"
SESSION = "semantic-kernel-handoff-1"
QUESTIONS = ["What is the weather and the local time in Paris?", "Is it picnic weather in Lyon today?"]
ANSWERS = ["Paris is sunny at 21°C, and it is 14:05 there.", "Yes: Lyon is cloudy but dry at 18°C, fine for a picnic."]
TRANSFER = "Handoff-transfer_to_weather_agent"


def _document() -> dict[str, Any]:
    """The session built offline from the trace exports and the log exports (SK's messages are log records)."""
    result = trajectory_from_spans(capture_spans(CAPTURE), capture_logs(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _calls(trajectory: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """A trajectory's own LLM calls as (text, tool calls)."""
    return [(step["message"], [c["function_name"] for c in step.get("tool_calls") or ()])
            for step in trajectory["steps"] if step.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for step in trajectory["steps"]
            for r in (step.get("observation") or {}).get("results") or ()}


def _questions(trajectory: dict[str, Any]) -> list[str]:
    return [s["message"] for s in trajectory["steps"] if s["source"] == "user" and not s.get("is_copied_context")]


def test_each_transfer_call_starts_the_weather_agent_as_a_subagent_of_the_triage_agent() -> None:
    document = _document()
    assert document["agent"]["name"] == "triage_agent"
    # The triage agent's own conversation: its instructions, each question once, each answered by a transfer.
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "You triage travel questions: hand weather and time questions over."),
        ("user", QUESTIONS[0]), ("agent", ""), ("user", QUESTIONS[1]), ("agent", "")]
    assert _calls(document) == [("", [TRANSFER]), ("", [TRANSFER])]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == ["weather_agent", "weather_agent"]
    # Each transfer call's result references the run it started (what SK's function returned, None, as recorded).
    transfers = _results(document)
    assert [r["subagent_trajectory_ref"][0]["trajectory_id"] for r in transfers.values()] == [
        s["trajectory_id"] for s in subagents]
    assert [r["content"] for r in transfers.values()] == ["None", "None"]
    # The weather agent's runs: its instructions and tools (not the triage agent's), asked the question anew in a
    # conversation of its own, its calls and its answer.
    first, second = subagents
    for weather, question in zip(subagents, QUESTIONS, strict=True):
        assert weather["steps"][0]["message"] == "You are a terse weather assistant."
        assert _questions(weather) == [question]
        assert [d["function"]["name"] for d in weather["agent"]["tool_definitions"]] == [
            "weather-get_local_time", "weather-get_weather"]
    assert "tool_definitions" not in document["agent"]  # SK records none for the triage agent (see the report)
    assert _calls(first) == [("", ["weather-get_weather", "weather-get_local_time"]),
                             ("", ["weather-get_local_time"]), (ANSWERS[0], [])]
    assert _calls(second) == [("", ["weather-get_weather"]), (ANSWERS[1], [])]
    # The timed-out call flagged where the weather agent made it, with what the model was shown; its retry answered.
    results = _results(first)
    assert results["call_1_0"]["content"] == "sunny, 21°C"
    failed = results["call_1_1"]
    assert failed["content"] == ("An error occurred while invoking the function weather-get_local_time: "
                                 "the time service timed out")
    assert failed["extra"]["is_error"] is True
    assert results["call_2_0"]["content"] == "14:05"


def test_a_transfer_span_names_the_agent_whose_run_it_starts() -> None:
    transfers = [s for s in capture_spans(CAPTURE) if s.name == f"execute_tool {TRANSFER}"]
    assert len(transfers) == 2  # one an invocation
    for span in transfers:
        execution = semantic_kernel.map_span(SpanReader(span), ())
        assert isinstance(execution, ToolExecution)
        # A run with a conversation of its own (the receiving actor's thread), not a handoff's carrying on.
        assert (execution.delegates_to, execution.handoff_to) == ("weather_agent", None)
    plain = next(s for s in capture_spans(CAPTURE) if s.name == "execute_tool weather-get_weather")
    execution = semantic_kernel.map_span(SpanReader(plain), ())
    assert isinstance(execution, ToolExecution) and execution.delegates_to is None


def test_the_runtimes_messaging_spans_are_bookkeeping_and_no_steps() -> None:
    runtime = [s for s in capture_spans(CAPTURE) if s.scope_name == "agent_runtime InProcessRuntime"]
    assert len(runtime) == 36
    for span in runtime:
        assert semantic_kernel.detect(span)
        reader = SpanReader(span)
        assert semantic_kernel.map_span(reader, ()) is None
        assert reader.unused() == set(), span.name
    document = _document()
    assert document["extra"]["unmapped_attributes"] == []
    everywhere = [s for t in [document, *document.get("subagent_trajectories", ())] for s in t["steps"]]
    assert not [s for s in everywhere if s["source"] == "agent" and s.get("llm_call_count") == 0]
