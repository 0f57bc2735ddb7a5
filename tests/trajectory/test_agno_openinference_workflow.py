"""An Agno Workflow traced by OpenInference's Agno instrumentation (the `agno_openinference_workflow` capture).

The workflow `trip-brief` has two agent steps: `research` (an agent with two tools, called in parallel, one raising
once and called again) and `write` (an agent writing from the research step's output). It runs twice in one session,
the second time streamed. The instrumentation records each run as a CHAIN span named by the workflow
(`agno.workflow.*`), each step as a CHAIN span under it, and each step's agent run as an AGENT span under its step
(`trajectory/mappers/agno.py`). The ground truth is the fake LLM's log: each agent run is the calls sent the same
instructions and question, in order.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import SessionTrajectory, trajectory_from_spans
from evalkit.trajectory.mappers import agno, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "agno_openinference_workflow"
SESSION = "agno-oi-workflow-1"


def _built() -> SessionTrajectory:
    built = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert built.valid, [str(issue) for issue in built.issues]
    return built


def _agent_runs() -> list[tuple[str, str, list[corpus.Call]]]:
    """The agent runs the model saw, in order: each its instructions, what it was asked, and its calls."""
    log = corpus.load(CAPTURE).llm_log
    runs: list[tuple[str, str, list[corpus.Call]]] = []
    for entry, call in zip(log, corpus.GroundTruth.of(log).calls, strict=True):
        instructions, asked = (message["content"] for message in entry["request"]["messages"][:2])
        if not runs or runs[-1][:2] != (instructions, asked):
            runs.append((instructions, asked, []))
        runs[-1][2].append(call)
    return runs


def _is_workflow(span: Span) -> bool:
    """A workflow run's span, as the instrumentation writes it (`_workflow_attributes`): the workflow's steps."""
    return span.scope_name == agno.SCOPE and "agno.workflow.steps" in span.attributes


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in trajectory["steps"] if step["source"] == "agent" and step.get("llm_call_count") == 1]


def test_the_workflow_is_the_agent_and_each_steps_agent_run_a_subagent_answering_with_its_output() -> None:
    document = _built().document()
    runs = _agent_runs()
    assert len(runs) == 4  # research, write; research, write (streamed)
    workflow_span = next(span for span in capture_spans(CAPTURE) if _is_workflow(span))
    assert document["agent"]["name"] == workflow_span.attributes["graph.node.name"] == "trip-brief"
    # Each run's question once, asked of the workflow; its calls are its steps' agents', none the workflow's, and its
    # answer its last step's: no agent step of its own.
    questions = [runs[0][1], runs[2][1]]
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == questions
    assert not [s for s in document["steps"] if s["source"] == "agent"]
    subagents = {sub["trajectory_id"]: sub for sub in document["subagent_trajectories"]}
    delegations = [(step, result) for step in document["steps"] for result in
                   (step.get("observation") or {}).get("results") or () if result.get("subagent_trajectory_ref")]
    assert len(delegations) == len(runs) == len(subagents)
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    for position, ((_step, result), (instructions, asked, calls)) in enumerate(zip(delegations, runs, strict=True)):
        (ref,) = result["subagent_trajectory_ref"]
        subagent = subagents.pop(ref["trajectory_id"])
        assert ref["session_id"] == SESSION
        assert subagent["agent"]["name"] == ("researcher", "writer")[position % 2]
        # Its own instructions and what its step gave it (the writer: the research step's output), once each.
        assert [(s["source"], s["message"]) for s in subagent["steps"] if s["source"] != "agent"] == [
            ("system", instructions), ("user", asked)]
        steps = _llm_steps(subagent)
        assert [(corpus.message_text(s.get("message")), [(c["tool_call_id"], c["function_name"]) for c in
                                                          s.get("tool_calls") or ()]) for s in steps] == [
            (c.text, [(t["id"], t["name"]) for t in c.tool_calls]) for c in calls]
        # Every tool result on its call, as the model was shown it; the raised one (and only it) flagged.
        for step in steps:
            results = {r["source_call_id"]: r for r in step["observation"]["results"]} if step.get("tool_calls") else {}
            assert set(results) == {c["tool_call_id"] for c in step.get("tool_calls") or ()}
            for call_id, found in results.items():
                assert found["content"] == truth.tool_results[call_id]
                raised = found["content"] == "booking system busy, try again"
                assert bool((found.get("extra") or {}).get("is_error")) is raised
        # The step's agent answers with its output: the researcher what the writer was then asked, the writer its
        # brief (the workflow's answer).
        answer = runs[position + 1][1] if position % 2 == 0 else calls[-1].text
        assert result["content"] == answer
    assert not subagents


def test_a_step_span_is_bookkeeping_read_and_no_run_of_its_own() -> None:
    steps = [span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "CHAIN"
             and not _is_workflow(span)]
    assert sorted(span.name for span in steps) == ["research.execute", "research.execute_stream", "write.execute",
                                                   "write.execute_stream"]
    for span in steps:
        reader = SpanReader(span)
        assert openinference.map_span(reader, ()) is None
        # Its node ids and its copies of its agent run's input and output: read, nothing left unmapped.
        assert reader.unused() == set()
    assert _built().unmapped_attributes == []
