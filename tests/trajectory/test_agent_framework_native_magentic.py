"""A Microsoft Agent Framework Magentic orchestration, traced by its own spans (the `agent-framework_native_magentic`
capture).

`MagenticBuilder(manager_agent=manager)`: the workflow's start executor is a `MagenticOrchestrator` whose
`StandardMagenticManager` runs the manager agent itself (`executor.process magentic_orchestrator` > `invoke_agent
manager` > `chat`), a fresh session each call on the context it keeps: the facts survey and the plan (the task
ledger), a JSON progress ledger each round naming the participant to act and the instruction it is given, the final
answer. The researcher (two parallel tool calls, one raising, retried) then the writer; one run, streamed. Read by
`trajectory/mappers/agent_framework.py` (`orchestrator_runs`) and the builder: the manager's calls are the workflow's
own steps, each ledger that chose a participant answered by its run; what the manager is shown of a participant's
work (its whole response: tool calls, their results, its answer) and the instruction it gave it are that delegation's,
not the workflow's steps again.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import agent_framework
from tests.captures import corpus

CAPTURE = "agent-framework_native_magentic"
SESSION = "agent-framework-magentic-1"
TASK = "Check the weather and the local time in Paris, then write me a one-line note for the afternoon."


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _manager_calls() -> list[dict[str, Any]]:
    """The manager's calls in the log: those under the manager's instructions."""
    log = _log()
    instructions = log[0]["request"]["messages"][0]["content"]
    return [entry for entry in log if entry["request"]["messages"][0]["content"] == instructions]


def _ledgers() -> list[dict[str, Any]]:
    """The manager's progress ledgers, as it answered them."""
    found = []
    for entry in _manager_calls():
        text = entry["response"]["text"]
        if text.startswith("{"):
            found.append(json.loads(text))
    return found


def _own_calls(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in trajectory["steps"] if step.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for step in trajectory["steps"]
            for r in (step.get("observation") or {}).get("results") or () if "source_call_id" in r}


def test_the_managers_calls_are_the_workflows_steps_each_ledger_answered_by_the_participant_it_chose() -> None:
    document = _document()
    manager_calls = _manager_calls()
    assert len(manager_calls) == 6 and len(_log()) == 10
    assert document["agent"]["name"] == "travel_notes"
    # The manager's calls, as it made them (facts, plan, three ledgers, the final answer), are the workflow's own
    # steps, under the manager's instructions; the last is the final answer the workflow gave.
    own = _own_calls(document)
    assert [step["message"] for step in own] == [entry["response"]["text"] for entry in manager_calls]
    first = document["steps"][0]
    assert (first["source"], first["message"]) == ("system", manager_calls[0]["request"]["messages"][0]["content"])
    assert document["steps"][-1] is own[-1]
    # Each ledger that chose a participant answered by that participant's run, in order; the manager is no subagent.
    chosen = [ledger["next_speaker"]["answer"] for ledger in _ledgers() if not ledger["is_request_satisfied"]["answer"]]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == chosen == ["researcher", "writer"]
    delegating = [step for step in own if (step.get("observation") or {}).get("results")]
    assert [step["message"] for step in delegating] == [entry["response"]["text"] for entry in manager_calls[2:4]]
    answered = [step["observation"]["results"] for step in delegating]
    assert [[r["subagent_trajectory_ref"][0]["trajectory_id"] for r in results] for results in answered] == [
        [s["trajectory_id"]] for s in subagents]
    assert [results[0]["content"] for results in answered] == [_own_calls(s)[-1]["message"] for s in subagents]
    # Each participant asked what the ledger that chose it said; the researcher's own work stays its own: the
    # parallel calls, the timed-out one flagged with what the model was shown, its retry answered.
    instructions = [ledger["instruction_or_question"]["answer"] for ledger in _ledgers()[:2]]
    assert [next(step["message"] for step in s["steps"] if step["source"] == "user") for s in subagents] == (
        instructions)
    researcher = subagents[0]
    assert [[c["function_name"] for c in step.get("tool_calls") or ()] for step in _own_calls(researcher)] == [
        ["get_weather", "get_local_time"], ["get_weather"], []]
    results = _results(researcher)
    assert results["call_3_0"]["content"] == "Error: Function failed." and results["call_3_0"]["extra"]["is_error"]
    assert (results["call_3_1"]["content"], results["call_4_0"]["content"]) == ("14:05", "sunny, 21°C")


def test_a_participants_calls_and_results_resent_to_the_manager_are_that_participants() -> None:
    """The manager is shown each participant's whole response (its tool calls, their results, its answer), as the
    log says: none of it is the workflow's, which called no tool."""
    resent = [m for m in _manager_calls()[3]["request"]["messages"] if m.get("tool_calls") or m["role"] == "tool"]
    assert len(resent) == 5  # two answers of tool calls, three results
    document = _document()
    steps = document["steps"]
    assert not [step for step in steps if step.get("tool_calls")]
    assert not _results(document)
    researcher_calls = {c["tool_call_id"] for step in document["subagent_trajectories"][0]["steps"]
                        for c in step.get("tool_calls") or ()}
    assert {call["id"] for m in resent for call in m.get("tool_calls") or ()} == researcher_calls


def test_the_instruction_a_ledger_gave_resent_to_the_manager_is_that_delegations_request() -> None:
    """The orchestration re-sends each instruction to the manager as its own (assistant) message: it is what the
    workflow asked the participant, that participant's user step, not a copied step of the workflow's after the
    participant answered. What is left copied is the task ledger the orchestration rendered from the facts and the
    plan."""
    document = _document()
    steps = document["steps"]
    instructions = [ledger["instruction_or_question"]["answer"] for ledger in _ledgers()[:2]]
    resent = [m.get("content") for m in _manager_calls()[-1]["request"]["messages"] if m["role"] == "assistant"]
    assert set(instructions) <= set(resent)
    assert not [step for step in steps if step["message"] in instructions]
    copied = [step["message"] for step in steps if step.get("is_copied_context")]
    assert len(copied) == 1 and copied[0].startswith("\nWe are working to address the following user request:")
    assert [step["message"] for step in steps if step["source"] == "user" and step["message"] == TASK] == [TASK]


def test_the_magentic_orchestrators_agent_runs_are_found_by_the_executor_that_ran_them() -> None:
    spans = capture_spans(CAPTURE)
    found = agent_framework.orchestrator_runs(spans)
    by_key = {(s.trace_id, s.span_id): s for s in spans}
    assert sorted(by_key[key].name for key in found) == ["invoke_agent manager"] * 6
    assert {by_key[by_key[key].trace_id, by_key[key].parent_span_id].attributes["executor.type"] for key in found} == {
        "MagenticOrchestrator"}
    participants = [s for s in spans if s.name in ("invoke_agent researcher", "invoke_agent writer")]
    assert len(participants) == 2 and not {(s.trace_id, s.span_id) for s in participants} & found
