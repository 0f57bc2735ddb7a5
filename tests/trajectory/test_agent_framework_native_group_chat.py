"""A Microsoft Agent Framework group chat managed by an agent, traced by its own spans (the
`agent-framework_native_group-chat` capture).

`GroupChatBuilder(orchestrator_agent=manager)`: the workflow's start executor is an `AgentBasedGroupChatOrchestrator`
that runs the manager agent itself each round (`executor.process manager` > `invoke_agent manager` > `chat`) and asks
the participant it chose (`executor.process researcher` > `invoke_agent researcher` …). Turn one the manager picks
the researcher (two parallel tool calls, one raising, retried), then the writer; turn two, a second `workflow.run` on
the same workflow, the writer again. Read by `trajectory/mappers/agent_framework.py` (`orchestrator_runs`) and the
builder: the manager's calls are the workflow's own steps, each decision answered by the run of the participant it
chose; a participant's answer, re-sent to the manager, is that delegation's result, not a message of the workflow's.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import agent_framework
from tests.captures import corpus

CAPTURE = "agent-framework_native_group-chat"
SESSION = "agent-framework-group-chat-1"
QUESTIONS = ["Check the weather and the local time in Paris, then write me a one-line note for the afternoon.",
             "Make the note mention a café."]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _decisions() -> list[dict[str, Any]]:
    """The manager's calls in the log: those asked for the orchestration's structured decision."""
    return [entry for entry in _log() if entry["request"].get("response_format")]


def _own_calls(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in trajectory["steps"] if step.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for step in trajectory["steps"]
            for r in (step.get("observation") or {}).get("results") or () if "source_call_id" in r}


def test_the_managers_decisions_are_the_workflows_steps_each_answered_by_the_participant_it_chose() -> None:
    document = _document()
    decisions = _decisions()
    assert len(decisions) == 3
    assert document["agent"]["name"] == "travel_notes"
    # The manager's calls, as it made them, are the workflow's own steps, under the manager's instructions.
    own = _own_calls(document)
    assert [step["message"] for step in own] == [entry["response"]["text"] for entry in decisions]
    first = document["steps"][0]
    assert (first["source"], first["message"]) == ("system", decisions[0]["request"]["messages"][0]["content"])
    # Each decision answered by the run of the participant it named, in order; the manager is no subagent.
    chosen = [json.loads(entry["response"]["text"])["next_speaker"] for entry in decisions]
    subagents = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in subagents] == chosen == ["researcher", "writer", "writer"]
    answered = [step["observation"]["results"] for step in own]
    assert [[r["subagent_trajectory_ref"][0]["trajectory_id"] for r in results] for results in answered] == [
        [s["trajectory_id"]] for s in subagents]
    assert [results[0]["content"] for results in answered] == [_own_calls(s)[-1]["message"] for s in subagents]
    # The participants' own work stays theirs: the researcher's parallel calls, the timed-out one flagged with what
    # the model was shown, its retry answered.
    researcher = subagents[0]
    assert [[c["function_name"] for c in step.get("tool_calls") or ()] for step in _own_calls(researcher)] == [
        ["get_weather", "get_local_time"], ["get_weather"], []]
    results = _results(researcher)
    assert results["call_1_0"]["content"] == "Error: Function failed." and results["call_1_0"]["extra"]["is_error"]
    assert (results["call_1_1"]["content"], results["call_2_0"]["content"]) == ("14:05", "sunny, 21°C")


def test_a_participants_answer_resent_to_the_manager_is_that_delegations_result() -> None:
    """The manager's session re-sends what each participant said as assistant messages (the span drops their author
    names): each is the result of the decision that chose the participant, not a message of the workflow's again.
    What is left copied is the orchestration's own completion message, which ended turn one."""
    document = _document()
    steps = document["steps"]
    copied = [step["message"] for step in steps if step.get("is_copied_context")]
    assert copied == ["The group chat has reached its termination condition."]
    # Each question once, in the order asked.
    assert [step["message"] for step in steps if step["source"] == "user" and step["message"] in QUESTIONS] == (
        QUESTIONS)
    participants_said = {_own_calls(s)[-1]["message"] for s in document["subagent_trajectories"]}
    assert not [step for step in steps if step["source"] == "agent" and step["message"] in participants_said]


def test_the_orchestrators_agent_runs_are_found_by_the_executor_that_ran_them() -> None:
    spans = capture_spans(CAPTURE)
    found = agent_framework.orchestrator_runs(spans)
    by_key = {(s.trace_id, s.span_id): s for s in spans}
    assert sorted(by_key[key].name for key in found) == ["invoke_agent manager"] * 3
    participants = [s for s in spans if s.name in ("invoke_agent researcher", "invoke_agent writer")]
    assert len(participants) == 3 and not {(s.trace_id, s.span_id) for s in participants} & found


def test_each_decision_prompt_is_one_user_step_as_the_managers_conversation_carries_on() -> None:
    """Each round asks the manager the same "Decide what to do next" prompt at the end of its conversation, which
    re-sends every earlier round's prompt and decision where they were: each asking is one user step before its
    decision, none of the re-sent ones again (the n-th copy of a message in a call is new only when fewer than n
    were seen; unlike Magentic's ledger calls, no context rebuilt around the prompt)."""
    decisions = _decisions()
    prompt = decisions[0]["request"]["messages"][-1]["content"]
    assert [entry["request"]["messages"][-1]["content"] for entry in decisions] == [prompt] * 3
    assert decisions[0]["response"]["text"] in [m.get("content") for m in decisions[1]["request"]["messages"]]
    steps = _document()["steps"]
    asked = [i for i, step in enumerate(steps) if step["source"] == "user" and step["message"] == prompt]
    assert [steps[i + 1]["message"] for i in asked] == [entry["response"]["text"] for entry in decisions]
