"""OpenInference's AutoGen AgentChat instrumentor on a Swarm (the `autogen-agentchat_openinference_swarm` capture).

A Swarm's `run_stream` is a team's CHAIN span, each agent's turn an AGENT span under it: the team is the session's
agent, each turn a subagent, as for a RoundRobinGroupChat. What is the Swarm's own (`trajectory/mappers/autogen.py`):
an agent hands off with a tool call (`transfer_to_<agent>`) that AutoGen's model client keeps the model's text beside
as CreateResult's `thought`, which the instrumentor writes only in `output.value` and, re-sent, as
`llm.input_messages.<i>.thought`; and a Swarm resumed with the user's HandoffMessage is given it as its `str()`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall

CAPTURE = "autogen-agentchat_openinference_swarm"
SESSION = "autogen-oi-swarm-1"
QUESTION = ("Booking QX7Y2B: Paris to Berlin, Friday 08:00. Oslo on Friday: SK4035 at 09:10 or DY1303 at 17:40. "
            "Which one?")
CHANGED = "Changed: QX7Y2B is now SK4035, Paris to Oslo, Friday 09:10."


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _calls(trajectory: dict[str, Any], *, copied: bool = False) -> list[tuple[str, list[str]]]:
    """A trajectory's LLM calls (its own, or the ones its model was re-sent) as (text, tool calls)."""
    return [(step.get("message") or "", [c["function_name"] for c in step.get("tool_calls") or ()])
            for step in trajectory["steps"] if step["source"] == "agent"
            and bool(step.get("is_copied_context")) == copied and (copied or step.get("llm_call_count") == 1)]


def test_each_turn_is_a_subagent_of_the_swarm_and_every_result_is_on_its_call() -> None:
    document = _document()
    turns = document["subagent_trajectories"]
    assert [t["agent"]["name"] for t in turns] == ["travel_agent", "flights_agent", "flights_agent", "travel_agent"]
    assert [_calls(t) for t in turns] == [
        [("", ["transfer_to_flights_agent"])],
        [("", ["get_booking", "search_flights"]), ("", ["get_booking"]), (QUESTION, ["transfer_to_user"])],
        [("", ["change_booking"]), (CHANGED, ["transfer_to_travel_agent"])],
        [("You are on SK4035 to Oslo on Friday at 09:10. Have a good trip! TERMINATE", [])]]
    # The handoff is the calling agent's tool call, answered with what AgentChat's handoff tool returned.
    results = {r["source_call_id"]: r for step in turns[0]["steps"] + turns[1]["steps"]
               for r in (step.get("observation") or {}).get("results") or ()}
    assert results["call_0_0"]["content"] == ("Transferred to flights_agent, adopting the role of flights_agent "
                                              "immediately.")
    # The booking lookup that timed out is flagged (AgentChat's is_error), its retry answered.
    assert results["call_1_0"]["extra"]["is_error"] is True
    assert results["call_1_0"]["content"] == "booking service timed out"
    assert results["call_2_0"]["content"] == "QX7Y2B: Paris to Berlin, Friday 08:00"
    assert document["extra"]["unmapped_attributes"] == []


def test_the_text_beside_a_handoff_call_is_the_step_message() -> None:
    """The flights agent asks the user to choose as it hands off to the user, and reports as it hands back: AutoGen's
    `thought` beside the call, in the LLM span's `output.value` only. The turn answers the team with it."""
    document = _document()
    _, first, second, _ = document["subagent_trajectories"]
    assert _calls(first)[-1] == (QUESTION, ["transfer_to_user"])
    assert _calls(second)[-1] == (CHANGED, ["transfer_to_travel_agent"])
    delegations = [s for s in document["steps"] if s["source"] == "system"]
    assert [s["observation"]["results"][0].get("content") for s in delegations][1:3] == [QUESTION, CHANGED]


def test_the_text_beside_a_resent_call_is_in_the_copied_history() -> None:
    """The second run's first call re-sends the first run's AssistantMessage with its thought
    (`llm.input_messages.<i>.thought`): the copied step says what the model said beside its call."""
    _, _, second, _ = _document()["subagent_trajectories"]
    assert _calls(second, copied=True) == [
        ("", ["get_booking", "search_flights"]), ("", ["get_booking"]), (QUESTION, ["transfer_to_user"])]


def test_a_swarm_resumed_with_the_users_handoff_is_asked_its_content() -> None:
    """The second run's task is the user's HandoffMessage, which the instrumentor writes as its `str()`."""
    steps = _document()["steps"]
    assert [(s["source"], s["message"]) for s in steps if s["source"] == "user"] == [
        ("user", "Please move my booking QX7Y2B to Oslo, same day."), ("user", "The 09:10 one, please.")]


def test_a_thought_beside_a_text_answer_is_its_reasoning() -> None:
    """AutoGen's model client puts a reasoning model's reasoning in `thought` beside a text answer (the travel
    agent's last answer, given a thought): reasoning, the text still the answer."""
    (span,) = [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "LLM"
               and "TERMINATE" in str(s.attributes.get("output.value"))]
    result = json.loads(str(span.attributes["output.value"]))
    thinking = replace(span, attributes={**span.attributes,
                                         "output.value": json.dumps({**result, "thought": "The change is done."})})
    call = openinference.map_span(SpanReader(thinking), ())
    assert isinstance(call, LlmCall)
    (answer,) = call.output_messages
    assert [(part.kind, part.text) for part in answer.parts] == [
        ("reasoning", "The change is done."),
        ("text", "You are on SK4035 to Oslo on Friday at 09:10. Have a good trip! TERMINATE")]
