"""A Strands Agents Graph traced by Strands' own spans (the `strands_native_graph` capture).

Each graph run's root is an `invoke_graph` span (the session id and the task on it), its nodes' agents'
`invoke_agent` spans under it in the order the graph ran them: `research`, then `weather`, whose input the graph
writes ("Original Task: …", "Inputs from previous nodes:", the research node's answer). The graph keeps its node
agents' messages from one run to the next, so turn two's calls re-send turn one. Read by
`trajectory/mappers/strands_multiagent.py` (its `invoke_graph` rule, until this capture checked only against a
Swarm's), the graph is the trajectory: each task a user step, each node's agent run a subagent it delegated to.
The fake LLM's log is the ground truth the steps are checked against.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from tests.captures import corpus

CAPTURE = "strands_native_graph"
SESSION = "strands-graph-trip-1"
TASKS = ["I'm in Lyon tomorrow. Should I pack an umbrella?", "What should I wear there?"]
# The node agents in the order the graph ran them, each turn (research -> weather).
NODE_AGENTS = ["researcher", "weather_specialist"]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _answers() -> list[str]:
    """Each node run's answer: the text of the log's calls that made no tool call, in order."""
    return [e["response"]["text"] for e in _log() if not e["response"]["tool_calls"]]


def _results(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results") or ()]


def test_the_graph_is_the_trajectory_and_each_node_agent_run_a_subagent_in_order() -> None:
    document = _document()
    assert document["agent"]["name"] == "graph"
    delegated = [("system", f"Delegated to subagent {name}") for name in NODE_AGENTS]
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", TASKS[0]), *delegated, ("user", TASKS[1]), *delegated]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == NODE_AGENTS * 2
    # Each delegation refers to its node's run and answers with that agent's last answer.
    delegations = [s["observation"]["results"][0] for s in document["steps"] if s["source"] == "system"]
    assert [r["subagent_trajectory_ref"][0]["trajectory_id"] for r in delegations] == [
        s["trajectory_id"] for s in subagents]
    assert [r["content"] for r in delegations] == _answers()
    # The root made no call of its own: every step with a call is a node agent's, each call once.
    assert not any(s.get("llm_call_count") for s in document["steps"])
    assert len(corpus.llm_steps(document)) == len(_log())


def test_the_weather_node_is_told_the_research_answer_and_its_parallel_tools_answer_their_calls() -> None:
    _, weather, _, _ = _document()["subagent_trajectories"]
    # Its user step is the message the graph wrote it: the task, then the research node's answer.
    (asked,) = [s["message"] for s in weather["steps"] if s["source"] == "user"]
    assert asked.startswith(f"Original Task: {TASKS[0]}\n\nInputs from previous nodes:\n\nFrom research:")
    assert _answers()[0] in asked
    # The two parallel calls and the retry, each answered on its own call id with what the model was shown; the
    # raising one flagged.
    truth = corpus.GroundTruth.of(_log())
    calls = [c for s in weather["steps"] for c in s.get("tool_calls") or ()]
    assert [(c["function_name"], c["arguments"]) for c in calls] == [
        ("get_weather", {"city": "Lyon"}), ("get_forecast", {"city": "Lyon", "days": 1}),
        ("get_forecast", {"city": "Lyon", "days": 1})]
    results = _results(weather)
    assert [r["source_call_id"] for r in results] == [c["tool_call_id"] for c in calls]
    assert [r["content"] for r in results] == [truth.tool_results[c["tool_call_id"]] for c in calls]
    assert [bool(r.get("extra", {}).get("is_error")) for r in results] == [False, True, False]
    assert results[1]["content"] == "Error: TimeoutError - forecast service timed out"


def test_a_node_agent_run_again_shows_the_earlier_run_as_copied_context() -> None:
    document = _document()
    for earlier, later in zip(document["subagent_trajectories"][:2], document["subagent_trajectories"][2:],
                              strict=True):
        # Turn two's run re-sent turn one: its question and answers are copied context, its own answer the only call.
        resent = [s["message"] for s in earlier["steps"] if s["source"] in ("user", "agent")]
        copied = [s["message"] for s in later["steps"] if s.get("is_copied_context")]
        assert copied == resent
        (own,) = [s for s in later["steps"] if s.get("llm_call_count") == 1]
        assert own == later["steps"][-1]
        assert own["message"] in _answers()[2:]
    # Each call's tokens once, the copied steps none: the session's totals are the log's.
    truth = corpus.GroundTruth.of(_log())
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        truth.input_tokens, truth.output_tokens)


def test_each_graph_run_is_an_orchestrator_run_with_its_task_and_the_session() -> None:
    spans = sorted((s for s in capture_spans(CAPTURE) if s.name == "invoke_graph"),
                   key=lambda s: s.start_time_unix_nano)
    assert len(spans) == 2  # one a turn, each its trace's root
    assert all(s.parent_span_id == "" for s in spans)
    for span, task in zip(spans, TASKS, strict=True):
        reader = SpanReader(span)
        run = strands.map_span(reader, ())
        assert isinstance(run, AgentRun)
        assert (run.name, run.input_text, run.error) == ("graph", task, None)
        assert reader.unused() == set()  # the session id is the builder's, the rest read
        assert span.attributes["session.id"] == SESSION
