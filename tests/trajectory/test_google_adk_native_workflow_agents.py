"""Google ADK's workflow agents under ADK's own tracing (the `google-adk_native_workflow-agents` capture's exports).

A `SequentialAgent` (`trip_planner`) of a `ParallelAgent` (`research`: `weather_agent`, `hotel_agent`) and a
`summariser`, two turns of one ADK session, the second streamed through LiteLlm (`trajectory/mappers/google_adk.py`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import google_adk
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "google-adk_native_workflow-agents"
SESSION = "adk-workflow-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s.get("llm_call_count") == 1]


def _shape(trajectory: dict[str, Any]) -> list[Any]:
    """Each subagent trajectory by its agent's name, with its own subagents' and how many calls it made."""
    return [(sub["agent"]["name"], len(_llm_steps(sub)), _shape(sub))
            for sub in trajectory.get("subagent_trajectories") or ()]


def test_each_agent_run_is_a_subagent_of_the_workflow_agent_that_ran_it() -> None:
    document = _document()
    assert document["agent"]["name"] == "trip_planner"
    # Each turn: the ParallelAgent's run holding its two agents' runs, then the summariser's; every call once,
    # in the trajectory of the agent that made it (none in the workflow agents', which call no model).
    turn = [("research", 0, [("weather_agent", 2, []), ("hotel_agent", 2, [])]), ("summariser", 1, [])]
    streamed_turn = [("research", 0, [("weather_agent", 1, []), ("hotel_agent", 1, [])]), ("summariser", 1, [])]
    assert _shape(document) == turn + streamed_turn
    assert not _llm_steps(document)
    assert len(corpus.llm_steps(document)) == len(corpus.load(CAPTURE).llm_log) == 8
    # The root started each run: a step referencing it, in the order they ran.
    assert [s["message"] for s in document["steps"]] == ["Delegated to subagent research",
                                                        "Delegated to subagent summariser"] * 2
    # A sub-agent's calls and tool results are in its own trajectory: the parallel calls and the error dict.
    weather, hotel = document["subagent_trajectories"][0]["subagent_trajectories"]
    assert [r["content"] for r in _llm_steps(weather)[0]["observation"]["results"]] == [
        json.dumps({"result": "sunny, 18°C"}, ensure_ascii=False), json.dumps({"result": "rainy, 11°C"},
                                                                              ensure_ascii=False)]
    assert json.loads(_llm_steps(hotel)[0]["observation"]["results"][0]["content"])["status"] == "error"


def _streamed_calls() -> list[Span]:
    """ADK's spans of the streamed turn's calls: several output messages each, its responses."""
    return [span for span in capture_spans(CAPTURE) if span.name.startswith("generate_content")
            and len(json.loads(span.attributes["gen_ai.output.messages"])) > 1]


def _answer(span: Span) -> LlmCall:
    call = google_adk.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_a_streamed_call_is_one_answer_not_its_chunks_and_their_whole() -> None:
    """LiteLlm streams the chunks, then hands ADK the whole answer: ADK reports each of them."""
    spans = _streamed_calls()
    assert len(spans) == 3
    answers = [m.text for m in (_answer(span).output_messages[0] for span in spans)]
    assert sorted(answers) == sorted(c["response"]["text"] for c in corpus.load(CAPTURE).llm_log if c["stream"])
    assert all(len(_answer(span).output_messages) == 1 for span in spans)
    streamed = [s for t in corpus.all_trajectories(_document()) for s in _llm_steps(t) if s["message"] in answers]
    assert len(streamed) == 3 and not [s for s in streamed if "other_choices" in s["extra"]]


def test_a_stream_of_pieces_alone_is_their_answer() -> None:
    """A model that gives ADK only the pieces (Gemini's own stream: its last chunk carries the finish reason) is
    reported as the pieces: the answer is them joined. The captured stream without LiteLlm's whole answer."""
    span = _streamed_calls()[0]
    *pieces, whole = json.loads(span.attributes["gen_ai.output.messages"])
    pieces[-1] = {**pieces[-1], "finish_reason": whole["finish_reason"]}
    call = _answer(replace(span, attributes={**span.attributes, "gen_ai.output.messages": json.dumps(pieces)}))
    assert [m.text for m in call.output_messages] == [whole["parts"][0]["content"]]
