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
from itertools import pairwise
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import agent_framework
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions

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


def test_each_progress_ledger_is_asked_its_prompt_again_on_the_context_the_orchestrator_rebuilt() -> None:
    """Each round's ledger call is a fresh session of the context the orchestrator keeps, ending in the same prompt
    ("Recall we are working on the following request…"): the prompt is asked again each round, not re-sent history,
    though an earlier call was sent the same text. What tells it: the call is sent what the ledger call before it was
    not (the participant's work since), before the prompt, and not the ledger answered then (no chain re-sending it)."""
    ledger_calls = [entry for entry in _manager_calls() if entry["response"]["text"].startswith("{")]
    prompts = [entry["request"]["messages"][-1]["content"] for entry in ledger_calls]
    assert len(ledger_calls) == 3 and len(set(prompts)) == 1
    for before, after in pairwise(ledger_calls):
        sent = [json.dumps(m, sort_keys=True) for m in after["request"]["messages"]]
        assert before["response"]["text"] not in [m.get("content") for m in after["request"]["messages"]]
        assert not set(sent) <= {json.dumps(m, sort_keys=True) for m in before["request"]["messages"]}
    document = _document()
    steps = document["steps"]
    ledgers = [i for i, step in enumerate(steps)
               if step.get("llm_call_count") == 1 and step["message"].startswith("{")]
    assert [steps[i]["message"] for i in ledgers] == [entry["response"]["text"] for entry in ledger_calls]
    assert [(steps[i - 1]["source"], steps[i - 1]["message"], steps[i - 1].get("is_copied_context"))
            for i in ledgers] == [("user", prompts[0], None)] * 3
    assert questions.missing_questions(document, _log()) == []


def _chat(span_id: str, at: int, inputs: list[dict[str, Any]], answer: str) -> Span:
    """An agent's LLM call under the latest GenAI conventions, in the agent's run."""
    start = 1_800_000_000_000_000_000 + at * 1_000_000_000
    return Span(trace_id="0af7651916cd43dd8448eb211c80319c", span_id=span_id, parent_span_id="a000000000000001",
                name="chat gpt-4o", kind=3, start_time_unix_nano=start, end_time_unix_nano=start + 500_000_000,
                status_code=0, attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4o", "gen_ai.conversation.id": "conv-1",
                    "gen_ai.input.messages": json.dumps(inputs),
                    "gen_ai.output.messages": json.dumps([_text("assistant", answer)])})


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _askings(*calls: list[dict[str, Any]]) -> list[str]:
    """The user steps of one agent run whose calls were sent `calls` in turn."""
    start = 1_800_000_000_000_000_000
    run = Span(trace_id="0af7651916cd43dd8448eb211c80319c", span_id="a000000000000001", parent_span_id="",
               name="invoke_agent helper", kind=1, start_time_unix_nano=start,
               end_time_unix_nano=start + 10_000_000_000, status_code=0,
               attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper",
                           "gen_ai.conversation.id": "conv-1"})
    spans = [run, *(_chat(f"b00000000000000{i}", i, inputs, f"Answer {i}.") for i, inputs in enumerate(calls, 1))]
    document = trajectory_from_spans(spans, session_id="conv-1").document()
    return [step["message"] for step in document["steps"] if step["source"] == "user"]


def test_a_question_asked_again_on_a_changed_context_is_asked_again_one_sent_the_same_is_not() -> None:
    """The rule on its own: a question the call before was asked last, asked last again after what that call was
    not sent (a window that dropped the first asking, here) is asked again; sent the same (a retry, or an emitter
    recording the run's input alone for each call) it is not."""
    question = _text("user", "Weather in Paris?")
    assert _askings([question], [_text("assistant", "Answer 1."), question]) == [
        "Weather in Paris?", "Weather in Paris?"]
    assert _askings([question], [question]) == ["Weather in Paris?"]
