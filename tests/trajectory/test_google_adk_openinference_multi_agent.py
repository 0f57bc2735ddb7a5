"""A Google ADK multi-agent system under OpenInference's ADK instrumentation (`google-adk_openinference_multi-agent`).

The coordinator calls two function tools and an `AgentTool` (`events_guide`, run by a runner and session of its own)
at once; in the second turn, streamed (SSE), it transfers to `booking_agent`, whose tool raises once (ADK's
`ReflectAndRetryToolPlugin` answers the model in its stead) and is retried, and which hands over to its sibling
`activities_agent`. The instrumentation's `call_llm` span records a streamed answer whole, its function calls under
the ids ADK ran them with (`adk-…`), which the next call's input re-sends with none; its TOOL span ends OK when the
plugin answered (`trajectory/mappers/google_adk.py`: `openinference_call`, `openinference_tool`).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import google_adk
from tests.captures import corpus

CAPTURE = "google-adk_openinference_multi-agent"
SESSION = "adk-oi-multi-agent-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results") or ()]


def _by_agent(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["agent"]["name"]: t for t in corpus.all_trajectories(document)}


def test_each_call_is_one_step_of_the_agent_that_made_it() -> None:
    """Ten calls, each one step with the model's text and calls, in the trajectory of the agent that made it: the
    coordinator's four, the AgentTool's run's two, the booking agent's three, its sibling's one pair."""
    document = _document()
    log = corpus.load(CAPTURE).llm_log
    agents = _by_agent(document)
    assert list(agents) == ["trip_coordinator", "events_guide", "booking_agent", "activities_agent"]
    made_by = {"trip_coordinator": [0, 3, 4], "events_guide": [1, 2], "booking_agent": [5, 6, 7],
               "activities_agent": [8, 9]}
    for agent, seqs in made_by.items():
        steps = _llm_steps(agents[agent])
        assert [corpus.message_text(s["message"]) for s in steps] == [log[k]["response"]["text"] for k in seqs]
        assert [[(c["function_name"], c["arguments"]) for c in s.get("tool_calls") or ()] for s in steps] == [
            [(c["name"], c["arguments"]) for c in log[k]["response"]["tool_calls"]] for k in seqs], agent
        assert [s["metrics"]["prompt_tokens"] for s in steps] == [
            log[k]["response"]["usage"]["input_tokens"] for k in seqs]
    assert corpus.compare(document, corpus.GroundTruth.of(log)) == []
    assert document["final_metrics"]["total_prompt_tokens"] == sum(e["response"]["usage"]["input_tokens"] for e in log)


def test_a_streamed_answers_calls_are_not_repeated_as_copied_steps() -> None:
    """The streamed turn's calls carry ADK's `adk-…` ids on their `call_llm` span; the next call's input re-sends
    them id-less. Forgotten, the re-sent answer is the call's: no step rebuilt from the input history, and each
    tool's span answers its call."""
    document = _document()
    spans = capture_spans(CAPTURE)
    assert any(str(v).startswith("adk-") for s in spans if s.name == "call_llm"
               for k, v in s.attributes.items() if k.endswith("tool_call.id"))  # as recorded
    copied = [s for t in corpus.all_trajectories(document) for s in t["steps"]
              if (s.get("extra") or {}).get("reconstructed_from")]
    assert copied == []
    booking = _by_agent(document)["booking_agent"]
    for step in _llm_steps(booking)[:2]:  # each book_hotel call answered on itself, by its own tool span
        ((call,), (result,)) = step["tool_calls"], step["observation"]["results"]
        assert result["source_call_id"] == call["tool_call_id"]


def test_the_tool_the_plugin_answered_for_is_flagged_with_its_error() -> None:
    """`book_hotel` raised `TimeoutError`; `ReflectAndRetryToolPlugin` answered the model in its stead and the TOOL
    span ended OK. That answer is the result, flagged as the failure it reports; no other result is."""
    document = _document()
    flagged = [r for t in corpus.all_trajectories(document) for r in _results(t) if r["extra"].get("is_error")]
    (failed,) = flagged
    assert json.loads(failed["content"])["response_type"] == google_adk.REFLECTED_FAILURE
    assert failed["extra"]["error"] == {"status": "error", "message": "the reservation system did not answer",
                                        "type": "TimeoutError"}
    (first_booking, *_) = _llm_steps(_by_agent(document)["booking_agent"])
    assert failed["source_call_id"] == first_booking["tool_calls"][0]["tool_call_id"]
    (span,) = [s for s in capture_spans(CAPTURE) if s.name == "execute_tool book_hotel"
               and google_adk.REFLECTED_FAILURE in str(s.attributes.get("output.value"))]
    assert span.status_code != 2 and not span.events  # the span says nothing failed: the result is the only sign


def test_hand_overs_and_the_agent_tool_are_subagents_on_their_calls() -> None:
    """The AgentTool call's result is the guide's answer as the coordinator's model was sent it, its run the call's
    subagent (its own request its user step); each `transfer_to_agent` starts the agent it names; the user's questions
    are the coordinator's, once each, and the only user steps."""
    document = _document()
    log = corpus.load(CAPTURE).llm_log
    agents = _by_agent(document)

    def started_by(trajectory: dict[str, Any], tool: str) -> list[str]:
        return [ref["trajectory_id"] for s in trajectory["steps"] for c, r in zip(
            s.get("tool_calls") or (), (s.get("observation") or {}).get("results") or (), strict=True)
            if c["function_name"] == tool for ref in r.get("subagent_trajectory_ref") or ()]

    guide = agents["events_guide"]
    assert started_by(document, "events_guide") == [guide["trajectory_id"]]
    (asked,) = [r for r in _results(document) if r.get("subagent_trajectory_ref")
                and r["subagent_trajectory_ref"][0]["trajectory_id"] == guide["trajectory_id"]]
    assert json.loads(asked["content"]) == {"result": log[2]["response"]["text"]}
    assert [s["message"] for s in guide["steps"] if s["source"] == "user"] == [
        log[0]["response"]["tool_calls"][2]["arguments"]["request"]]
    assert started_by(document, "transfer_to_agent") == [agents["booking_agent"]["trajectory_id"]]
    assert started_by(agents["booking_agent"], "transfer_to_agent") == [agents["activities_agent"]["trajectory_id"]]
    # ADK's "For context:" messages, another agent's events it hands over, are no user steps (a system step each).
    questions = [s["message"] for t in corpus.all_trajectories(document) for s in t["steps"] if s["source"] == "user"]
    assert questions == [log[0]["request"]["contents"][0]["parts"][0]["text"], log[4]["request"]["contents"][-1][
        "parts"][0]["text"], log[0]["response"]["tool_calls"][2]["arguments"]["request"]]
