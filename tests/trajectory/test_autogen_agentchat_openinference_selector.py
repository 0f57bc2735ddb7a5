"""OpenInference's AutoGen AgentChat instrumentor on a SelectorGroupChat (the `autogen-agentchat_openinference_selector`
capture).

The team's `run_stream` is a CHAIN span with its `participant_names`, each participant's turn an AGENT span under it:
the team is the session's agent, each turn a subagent, as for a RoundRobinGroupChat. What is the SelectorGroupChat's
own: before every turn its group chat manager asks the team's model client who speaks next. That LLM span is a child
of the team's span, in no turn's (the manager is no participant), its prompt AgentChat's selector prompt: the team's
own step, answered by the turn it picked. A turn that ends on its tool calls answers the team with AgentChat's
ToolCallSummaryMessage, recorded only in the team's TaskResult (`autogen.turn_answers`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import autogen
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "autogen-agentchat_openinference_selector"
SESSION = "autogen-oi-selector-1"
PARTICIPANTS = ("planner", "flights_agent", "hotels_agent")
HOTEL = "Thon Hotel Opera, Oslo (by Oslo S): a room on Friday night, 1,450 NOK"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _own_calls(trajectory: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The LLM calls a trajectory made itself (not the history its model was re-sent) as (text, tool calls)."""
    return [(step.get("message") or "", [c["function_name"] for c in step.get("tool_calls") or ()])
            for step in trajectory["steps"] if step["source"] == "agent" and step.get("llm_call_count") == 1
            and not step.get("is_copied_context")]


def test_the_selectors_calls_are_the_teams_steps_each_answered_by_the_turn_it_picked() -> None:
    """The selector's five calls are the team's own steps, under the selector prompt they were sent; each is answered
    by the turn of the participant it named; no participant's trajectory holds one."""
    document = _document()
    selections = [entry for entry in _log() if entry["response"]["text"] in PARTICIPANTS]
    assert len(selections) == 5
    assert _own_calls(document) == [(entry["response"]["text"], []) for entry in selections]
    steps = document["steps"]
    prompts = [s["message"] for s in steps if s["source"] == "system"]
    assert prompts == [entry["request"]["messages"][0]["content"] for entry in selections]
    assert all(prompt.startswith("You are in a role play game.") for prompt in prompts)
    turns = document["subagent_trajectories"]
    assert [t["agent"]["name"] for t in turns] == [entry["response"]["text"] for entry in selections]
    picks = [s for s in steps if s["source"] == "agent"]
    assert [s["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"] for s in picks] == [
        t["trajectory_id"] for t in turns]
    # Each participant's turn holds its own calls only: the rest of the log, in order.
    members = [entry for entry in _log() if entry not in selections]
    assert [call for t in turns for call in _own_calls(t)] == [
        (entry["response"]["text"], [c["name"] for c in entry["response"]["tool_calls"]]) for entry in members]
    assert document["extra"]["unmapped_attributes"] == []


def test_a_turn_ending_on_its_tool_calls_answers_the_team_with_its_summary() -> None:
    """hotels_agent's turn ends on its tool call (no reflection): AgentChat answers the team with the tool's result
    (a ToolCallSummaryMessage), which the planner's model is sent next. The selector's step picking it shows that."""
    steps = _document()["steps"]
    (pick,) = [s for s in steps if s["source"] == "agent" and s["message"] == "hotels_agent"]
    assert pick["observation"]["results"][0]["content"] == HOTEL
    assert _log()[-1]["request"]["messages"][-1] == {"role": "user", "name": "hotels_agent", "content": HOTEL}
    # Every turn answers the team with its chat message, in the TaskResults' order.
    picks = [s for s in steps if s["source"] == "agent"]
    results = [json.loads(str(span.attributes["output.value"])) for span in _team_spans(capture_spans(CAPTURE))]
    answered = [m["content"] for result in results for m in result["messages"]
                if m["source"] in PARTICIPANTS and not m["type"].endswith("Event")]
    assert [s["observation"]["results"][0]["content"] for s in picks] == answered


def _team_spans(spans: list[Span]) -> list[Span]:
    return sorted((s for s in spans if s.name == "SelectorGroupChat.run_stream"),
                  key=lambda s: s.start_time_unix_nano)


def test_a_turns_answer_is_the_teams_record_of_it() -> None:
    """The answer is the TaskResult's message, not the tool's result: a `tool_call_summary_format` of the app's is
    what the team got; and only the task's messages are skipped (`output_task_messages=False` lists none)."""
    spans = capture_spans(CAPTURE)
    second = _team_spans(spans)[1]
    (hotels_turn,) = [s for s in spans if s.name == "hotels_agent.on_messages_stream"]
    key = (hotels_turn.trace_id, hotels_turn.span_id)
    assert autogen.turn_answers(spans)[key] == HOTEL

    result = json.loads(str(second.attributes["output.value"]))
    summary = next(m for m in result["messages"] if m["type"] == "ToolCallSummaryMessage")
    formatted = {**result, "messages": [{**m, "content": f"find_hotel: {HOTEL}"} if m is summary else m
                                        for m in result["messages"]]}
    assert autogen.turn_answers(_with_team(spans, second, formatted))[key] == f"find_hotel: {HOTEL}"

    arguments = json.loads(str(second.attributes["input.value"]))
    untold = {**result, "messages": result["messages"][1:]}
    answers = autogen.turn_answers(_with_team(spans, second, untold, {**arguments, "output_task_messages": False}))
    assert answers == autogen.turn_answers(spans)


def _with_team(spans: list[Span], team: Span, result: dict[str, Any],
               arguments: dict[str, Any] | None = None) -> list[Span]:
    attributes = {**team.attributes, "output.value": json.dumps(result)}
    if arguments is not None:
        attributes["input.value"] = json.dumps(arguments)
    return [replace(s, attributes=attributes) if s is team else s for s in spans]


def test_every_result_is_on_its_call_the_failure_flagged_each_question_once() -> None:
    document = _document()
    assert [(s["source"], s["message"]) for s in document["steps"] if s["source"] == "user"] == [
        ("user", "Move my booking QX7Y2B to a Friday flight to Oslo."),
        ("user", "SK4035, please. And a hotel near Oslo S for Friday night.")]
    flights = document["subagent_trajectories"][1]
    results = {r["source_call_id"]: r for s in flights["steps"] for r in (s.get("observation") or {}).get("results")
               or ()}
    assert results["call_3_0"]["content"] == "booking service timed out"
    assert results["call_3_0"]["extra"]["is_error"] is True
    assert results["call_3_1"]["content"] == "SK4035 09:10, DY1303 17:40"
    assert "is_error" not in (results["call_3_1"].get("extra") or {})
    # The streamed call (hotels_agent's, create_stream) with its tokens.
    streamed = next(entry for entry in _log() if entry["stream"])
    (step,) = [s for s in document["subagent_trajectories"][3]["steps"] if s.get("llm_call_count") == 1]
    assert (step["metrics"]["prompt_tokens"], step["metrics"]["completion_tokens"]) == (
        streamed["response"]["usage"]["input_tokens"], streamed["response"]["usage"]["output_tokens"])


def test_a_swarm_turn_ending_on_its_handoff_answers_with_the_handoff_message() -> None:
    """The same rule on a Swarm (the `autogen-agentchat_openinference_swarm` capture): the travel agent's first turn
    only calls its handoff tool, and answers the team with AgentChat's HandoffMessage."""
    delegations = [s for s in capture_document("autogen-agentchat_openinference_swarm", "autogen-oi-swarm-1")["steps"]
                   if s["source"] == "system"]
    assert delegations[0]["observation"]["results"][0]["content"] == (
        "Transferred to flights_agent, adopting the role of flights_agent immediately.")
