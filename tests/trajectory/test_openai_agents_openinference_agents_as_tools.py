"""openai-agents' agents as tools (`Agent.as_tool`), traced by OpenInference: the
`openai-agents_openinference_agents-as-tools` capture's trace exports.

The travel desk asks a booking agent and a weather agent in parallel, each a function tool of its own
(`ask_booking_agent`, `ask_weather_agent`) whose execution is a nested `Runner.run`: OpenInference records the
specialist's AGENT span inside the desk's TOOL span for that call, and the tool span's `output.value` is the
specialist's final output, which the desk's model is sent. Each specialist is therefore a subagent started by
its call (the builder's tool-span rule, `build.attach_subagent`), not steps of the desk's; the corpus comparison
would pass either way, so these tests hold the shape a person expects.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_openinference_agents-as-tools"
SESSION = "oa-oi-agents-as-tools-1"
SPECIALISTS = {"ask_booking_agent": "Booking agent", "ask_weather_agent": "Weather agent"}

Json = dict[str, Any]


def _document() -> Json:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _calls_by_agent() -> dict[str, list[dict[str, Any]]]:
    """The fake LLM's log, each call under the agent whose instructions it was sent (the ground truth)."""
    instructions = {"You answer travel questions": "Travel desk", "You book hotels": "Booking agent",
                    "You check the weather": "Weather agent"}
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in corpus.load(CAPTURE).llm_log:
        sent = str(entry["request"].get("instructions") or "")
        (agent,) = [name for start, name in instructions.items() if sent.startswith(start)]
        found.setdefault(agent, []).append(entry)
    return found


def _llm_steps(trajectory: Json) -> list[Json]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def _results(step: Json) -> list[Json]:
    return list((step.get("observation") or {}).get("results") or ())


def test_each_specialist_is_a_subagent_answering_the_call_that_asked_it() -> None:
    document = _document()
    calls = _calls_by_agent()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    # Each function call has two ids, as the Responses API gives them: its `call_id` (`call_…`, which its output
    # names, the key of `truth.tool_results`) and its item's own `id` (`fc_…`); the calls below are the call_ids.
    made = [c for calls in _calls_by_agent().values() for e in calls for c in e["response"]["tool_calls"]]
    assert made and all(c["id"].startswith("call_") and c["item_id"].startswith("fc_") for c in made)
    assert document["agent"]["name"] == "Travel desk"
    # The desk's own trajectory holds its three calls only: the specialists' are in theirs.
    assert len(_llm_steps(document)) == len(calls["Travel desk"]) == 3
    subagents = {sub["trajectory_id"]: sub for sub in document["subagent_trajectories"]}
    assert sorted(sub["agent"]["name"] for sub in subagents.values()) == ["Booking agent", "Weather agent"]

    (asking,) = [s for s in _llm_steps(document) if s.get("tool_calls")]
    assert [c["function_name"] for c in asking["tool_calls"]] == list(SPECIALISTS)  # in parallel, in one answer
    results = {r["source_call_id"]: r for r in _results(asking)}
    for call in asking["tool_calls"]:
        result = results[call["tool_call_id"]]
        (ref,) = result["subagent_trajectory_ref"]
        specialist = subagents[ref["trajectory_id"]]
        assert specialist["agent"]["name"] == SPECIALISTS[call["function_name"]]
        assert len(_llm_steps(specialist)) == len(calls[specialist["agent"]["name"]])
        # Asked what the desk's model wrote as the tool's input; its answer the result the desk's model was shown.
        (asked,) = [s for s in specialist["steps"] if s["source"] == "user"]
        assert asked["message"] == call["arguments"]["input"]
        answer = _llm_steps(specialist)[-1]["message"]
        assert result["content"] == answer == truth.tool_results[call["tool_call_id"]]


def test_the_specialists_failed_tool_is_flagged_in_its_own_trajectory() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    (booking,) = [sub for sub in document["subagent_trajectories"] if sub["agent"]["name"] == "Booking agent"]
    results = [r for step in _llm_steps(booking) for r in _results(step)]
    assert [(r["extra"].get("is_error", False), r["content"]) for r in results] == [
        (True, truth.tool_results[results[0]["source_call_id"]]),  # the SDK's failure text, sent to the model
        (False, truth.tool_results[results[1]["source_call_id"]]),
    ]
    # The desk's calls of its specialists went well: the failure is the booking agent's, not the desk's.
    assert not any((r.get("extra") or {}).get("is_error") for step in document["steps"] for r in _results(step))


def test_the_second_turn_is_its_question_and_answer_only() -> None:
    document = _document()
    desk = _calls_by_agent()["Travel desk"]
    # Turn two's call re-sends turn one (the SQLiteSession's history, the specialists' calls and results in it):
    # nothing of it is shown again.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent"]
    assert not any(s.get("is_copied_context") for s in document["steps"])
    asked = [entry["request"]["input"][-1] for entry in desk]
    questions = [item["content"] for item in asked if item.get("role") == "user"]
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == questions
    assert document["steps"][-1]["message"] == desk[-1]["response"]["text"]
