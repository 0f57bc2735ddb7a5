"""OpenInference's smolagents instrumentation on a managed agent (the `smolagents_openinference_managed-agent` capture).

An unnamed ToolCallingAgent (`stream_outputs=True`: its calls streamed) with a tool and a managed ToolCallingAgent,
`weather_agent`, two runs of one memory (the second `run(…, reset=False, stream=True)`); the weather agent calls two
tools in one answer, one timing out, and asks for both again. OpenInference writes each call's input as smolagents'
memory, in its own roles (`trajectory/mappers/smolagents.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "smolagents_openinference_managed-agent"
SESSION = "smol-oi-managed-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    return list((step.get("observation") or {}).get("results") or ())


def _text(message: dict[str, Any]) -> str:
    return corpus.message_text(message["content"])


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), corpus.GroundTruth.of(_log())) == []


def test_a_streamed_step_s_empty_text_and_its_calls_are_one_answer() -> None:
    """smolagents writes a step's answer into its memory as two messages, the model's text and the restated calls; a
    streamed answer of calls alone has text "" (not None), which OpenInference records as an assistant message with
    no content. Read apart, that message was an answer no received call made: an empty copied agent step before
    each later question of the manager (two). Read with the calls after it, it is the answer its call recorded."""
    document = _document()
    every_step = [s for t in corpus.all_trajectories(document) for s in t["steps"]]
    assert not [s for s in every_step if s.get("is_copied_context")]
    streamed = [e for e in _log() if e["stream"]]
    assert len(streamed) == 4  # the manager's calls
    manager = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s.get("llm_call_count") for s in manager] == [1] * len(streamed)
    assert [(s["message"], [c["function_name"] for c in s["tool_calls"]]) for s in manager] == [
        (e["response"]["text"], [c["name"] for c in e["response"]["tool_calls"]]) for e in streamed]
    # The manager's questions, each once, though the second run and its last call re-send the first.
    asked = [next(_text(m) for m in e["request"]["messages"] if m["role"] == "user") for e in streamed[:1]]
    asked.append(_text(streamed[2]["request"]["messages"][-1]).split("\n", 2)[-1])  # after run one's observation
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == asked
    # The call re-sending run one's last answer (text "", final_answer) reads it as one assistant message.
    (span,) = [s for s in capture_spans(CAPTURE)
               if s.attributes.get("llm.output_messages.0.message.tool_calls.0.tool_call.id") == "call_6_0"]
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    answers = [m for m in call.input_messages if m.role == "assistant"]
    assert [(m.text, [p.call_id for p in m.tool_calls]) for m in answers] == [
        ("", ["call_0_0"]), ("", ["call_1_0"]), ("I'll ask the weather desk about Paris this afternoon.", ["call_2_0"])]


def test_the_managed_agent_is_a_subagent_whose_report_answers_its_call() -> None:
    """The weather agent's run (no tool span between it and the manager's step) is the subagent the manager's
    `weather_agent` call started: its task smolagents' managed-agent prompt, its answer its final_answer. The call's
    result is what smolagents reported of it, as the model was shown it after the "Observation:" label smolagents
    gives a step's observations (as a tool span's output is, and as OpenLIT's tool span records the same report)."""
    document = _document()
    (weather,) = document["subagent_trajectories"]
    assert weather["agent"]["name"] == "weather_agent"
    (asking,) = [s for s in document["steps"] if any(c["function_name"] == "weather_agent"
                                                    for c in s.get("tool_calls") or ())]
    (report,) = _results(asking)
    assert report["source_call_id"] == asking["tool_calls"][0]["tool_call_id"]
    assert [ref["trajectory_id"] for ref in report["subagent_trajectory_ref"]] == [weather["trajectory_id"]]
    shown = _text(_log()[-1]["request"]["messages"][-1])
    assert shown.startswith("Observation:\n")
    assert report["content"] == shown.removeprefix("Observation:\n")
    assert report["content"].startswith("Here is the final answer from your managed agent 'weather_agent':\n")
    # Its task as the manager's prompt put it, and its final answer the end of that report.
    task = _text(_log()[3]["request"]["messages"][-1])
    assert [s["message"] for s in weather["steps"] if s["source"] == "user"] == [task]
    assert asking["tool_calls"][0]["arguments"]["task"] in task
    answer = _results(weather["steps"][-1])[0]["content"]
    assert report["content"].endswith("\n" + answer)


def test_the_timed_out_parallel_call_is_flagged_with_what_the_model_was_shown() -> None:
    """get_air_quality raised beside get_weather: smolagents fails the whole step and sends the model only the error
    (merged into the user message after the task; the step's calls and get_weather's output are not restated).
    get_weather's result is its tool span's; the raising call's the error text, flagged; then both again."""
    (weather,) = _document()["subagent_trajectories"]
    first, again = (s for s in weather["steps"] if s["source"] == "agent" and len(s.get("tool_calls") or ()) == 2)
    shown = _text(_log()[4]["request"]["messages"][-1])
    error = shown[shown.index("Error:\n"):]
    returned, failed = _results(first)
    assert (returned["source_call_id"], returned["content"]) == (first["tool_calls"][0]["tool_call_id"], "sunny, 21°C")
    assert "is_error" not in returned["extra"]
    assert failed["source_call_id"] == first["tool_calls"][1]["tool_call_id"] and failed["content"] == error
    assert failed["extra"]["is_error"] is True and "air-quality service timed out" in error
    assert [(r["content"], "is_error" in r["extra"]) for r in _results(again)] == [
        ("sunny, 21°C", False), ("good (AQI 42)", False)]
