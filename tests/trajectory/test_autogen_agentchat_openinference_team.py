"""OpenInference's AutoGen AgentChat instrumentor on a team (the `autogen-agentchat_openinference_team` capture).

A RoundRobinGroupChat's `run_stream` is a CHAIN span with the team's `participant_names`, each participant's turn
an AGENT span under it (`trajectory/mappers/autogen.py`): the team is the session's agent, each turn a subagent.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document

CAPTURE = "autogen-agentchat_openinference_team"
SESSION = "autogen-oi-team-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _own_calls(trajectory: dict[str, Any]) -> list[str]:
    """The LLM calls a trajectory made itself (not the history its model was re-sent), as the model's text."""
    return [step.get("message") or "+".join(c["function_name"] for c in step["tool_calls"])
            for step in trajectory["steps"] if step["source"] == "agent" and step.get("llm_call_count") == 1
            and not step.get("is_copied_context")]


def test_the_team_is_the_agent_and_each_turn_a_subagent() -> None:
    document = _document()
    # The team's task, not its run_stream's bound arguments; then a delegation per turn, each answering with the
    # turn's last message.
    assert document["steps"][0] == {**document["steps"][0], "source": "user",
                                    "message": "Weather and local time in Paris?"}
    delegations = document["steps"][1:]
    assert [s["message"] for s in delegations] == ["Delegated to subagent researcher", "Delegated to subagent critic",
                                                   "Delegated to subagent researcher", "Delegated to subagent critic"]
    assert [s["observation"]["results"][0]["content"] for s in delegations] == [
        "Paris: sunny, 21°C, 14:05 local time.", "Good. Add Oslo's weather too.",
        "Paris: sunny, 21°C, 14:05 local time. Oslo: rainy, 9°C.", "APPROVE"]
    turns = document["subagent_trajectories"]
    assert [t["agent"]["name"] for t in turns] == ["researcher", "critic", "researcher", "critic"]
    assert [_own_calls(t) for t in turns] == [
        ["get_weather+get_local_time", "Paris: sunny, 21°C, 14:05 local time."],
        ["Good. Add Oslo's weather too."],
        ["get_weather", "Paris: sunny, 21°C, 14:05 local time. Oslo: rainy, 9°C."],
        ["APPROVE"]]
    assert document["extra"]["unmapped_attributes"] == []


def test_a_turn_shows_what_its_model_was_sent() -> None:
    """The critic's model is sent the researcher's report as a user message (AutoGen's UserMessage with the
    researcher as its source, which the instrumentor does not record): its trajectory says so, under its own system
    prompt; the researcher's second turn re-sends its first, copied context."""
    researcher, critic = _document()["subagent_trajectories"][2:]
    assert [(s["source"], s.get("message")) for s in critic["steps"][:3]] == [
        ("system", "You review the researcher's report. Say APPROVE when it is complete."),
        ("user", "Weather and local time in Paris?"), ("user", "Paris: sunny, 21°C, 14:05 local time.")]
    copied = [s for s in researcher["steps"] if s.get("is_copied_context")]
    assert [r["content"] for s in copied for r in (s.get("observation") or {}).get("results") or ()] == [
        "sunny, 21°C", "14:05"]
