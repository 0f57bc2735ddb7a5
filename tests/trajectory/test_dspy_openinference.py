"""OpenInference's DSPy and LiteLLM instrumentation on a `dspy.ReAct`, read from its capture (`dspy_openinference`).

The model makes no native tool call: ChatAdapter asks it for `[[ ## next_thought ## ]]`, `[[ ## next_tool_name ## ]]`
and `[[ ## next_tool_args ## ]]` in its text, and ReAct runs the tool it names (a `<tool>.__call__` TOOL span), `finish`
included, then re-renders the loop in every later call's `[[ ## trajectory ## ]]` field (`trajectory/mappers/dspy.py`).
Question 1: the weather in Paris, `finish`, the extract call's answer; question 2: a flight search that raises (ReAct
shows the model "Execution error in lookup_flight: …"), the search again, `finish`, the answer.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus, dspy_react
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "dspy_openinference"
SESSION = "dspy-oi-trip-1"
SYSTEM = "llm.input_messages.0.message.content"
ANSWER = "llm.output_messages.0.message.content"
RAISED = "ConnectionError: flight search timed out for Oslo"  # the last line of what ReAct showed the model


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _agent_steps() -> list[dict[str, Any]]:
    return [step for step in _document()["steps"] if step["source"] == "agent"]


def _completions() -> list[Span]:
    """LiteLLM's spans, the calls the trajectory counts (DSPy's `LM.__call__` around each records no tokens)."""
    return sorted((span for span in capture_spans(CAPTURE)
                   if span.attributes.get("openinference.span.kind") == "LLM" and span.name == "completion"),
                  key=lambda span: span.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), [])
    assert isinstance(call, LlmCall)
    return call


def _last_line(content: Any) -> str:
    return str(content).strip().splitlines()[-1]


def test_each_named_tool_is_the_tool_call_of_the_step_that_wrote_it() -> None:
    """One step per LLM call: a ReAct step's message is its thought and its call the tool its fields name, the tool
    span's output its result on that call; no tool a step of its own, no field markers left in a ReAct step's text."""
    steps = _agent_steps()
    assert all(step.get("llm_call_count") == 1 for step in steps)
    assert [(step["message"] if not step["message"].startswith("[[ ## reasoning") else "extract",
             [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()],
             [_last_line(r["content"]) for r in step.get("observation", {}).get("results") or ()])
            for step in steps] == [
        ("I should look up the weather in Paris.", [("get_weather", {"city": "Paris"})], ["sunny, 21°C"]),
        ("I know the weather in Paris.", [("finish", {})], ["Completed."]),
        ("extract", [], []),
        ("I should look up flights to Oslo.", [("lookup_flight", {"city": "Oslo"})], [RAISED]),
        ("The flight search failed; I will try again.", [("lookup_flight", {"city": "Oslo"})],
         ["SK4411, departing 09:40"]),
        ("I have the flight.", [("finish", {})], ["Completed."]),
        ("extract", [], []),
    ]
    for step in steps:
        for call, result in zip(step.get("tool_calls") or (), step.get("observation", {}).get("results") or (),
                                strict=True):
            assert result["source_call_id"] == call["tool_call_id"]
            assert call["extra"]["synthesized_id"] is True  # named in text: no id but the one made up for it


def test_finish_is_the_call_of_the_tool_react_runs_to_end_its_loop() -> None:
    """ReAct lists `finish` among its tools, runs it (a `finish.__call__` span returning "Completed.") and shows the
    extract call that observation: the call of the step naming it, answered by that span; the answer is the extract
    call's, which calls nothing."""
    finishes = {span.span_id for span in capture_spans(CAPTURE) if span.name == "finish.__call__"}
    steps = _agent_steps()
    answered = [(step["message"], result["extra"]["span_id"]) for step in steps
                for call, result in zip(step.get("tool_calls") or (), step.get("observation", {}).get("results") or (),
                                        strict=True) if call["function_name"] == "finish"]
    assert [message for message, _ in answered] == ["I know the weather in Paris.", "I have the flight."]
    assert {span_id for _, span_id in answered} == finishes
    after = [steps[index + 1] for index, step in enumerate(steps)
             if [c["function_name"] for c in step.get("tool_calls") or ()] == ["finish"]]
    assert [(step.get("tool_calls"), "[[ ## answer ## ]]" in step["message"]) for step in after] == [
        (None, True), (None, True)]


def test_the_raising_tool_is_flagged_on_its_step_with_the_error_react_showed_the_model() -> None:
    """The tool span failed with no output: the result of the step that named the tool is flagged, its content the
    observation the next call re-rendered ("Execution error in lookup_flight: …" and the traceback)."""
    [step] = [step for step in _agent_steps() if step["message"] == "I should look up flights to Oslo."]
    [result] = step["observation"]["results"]
    shown = dspy_react.observations(corpus.load(CAPTURE).llm_log)
    assert result["content"] == shown["dspy_3"]
    assert result["content"].startswith("Execution error in lookup_flight: ")
    assert result["extra"]["is_error"] is True and result["extra"]["content_from"] == "input history"


def test_the_re_rendered_loop_is_those_steps_and_results_again() -> None:
    """The second call's `[[ ## trajectory ## ]]` field is the first call's answer (its thought and call, read the
    same) and the tool's result: no copied agent step, and only each question's first rendering (and the extract
    call's, a new instruction) a user step; the extract's is copied context, the question re-sent with the loop after
    it (`questions.py`: the extract asks nothing anew)."""
    first, second = (_call(span) for span in _completions()[:2])
    assert [message.role for message in second.input_messages] == ["system", "user", "assistant", "tool"]
    assert second.input_messages[2].parts == first.output_messages[0].parts
    [result] = second.input_messages[3].tool_results
    assert (result.name, result.text, result.call_id) == ("get_weather", "sunny, 21°C", None)
    document = _document()
    assert not [step for step in document["steps"] if step["source"] == "agent" and step.get("is_copied_context")]
    users = [step for step in document["steps"] if step["source"] == "user"]
    assert ["[[ ## thought_0 ## ]]" in user["message"] for user in users] == [False] * 4
    assert ["What is the weather in Paris?" in user["message"] for user in users] == [True, True, False, False]
    assert [bool(user.get("is_copied_context")) for user in users] == [False, True, False, True]


def test_the_session_is_the_conversation_the_log_shows() -> None:
    """Against the fake LLM's log read as DSPy ReAct's (`tests/captures/dspy_react.py`): each step's thought and the
    tool it named, each call's observation on it, the tokens."""
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert [call.tool_calls[0]["name"] for call in truth.calls if call.tool_calls] == [
        "get_weather", "finish", "lookup_flight", "lookup_flight", "finish"]
    assert corpus.compare(_document(), truth) == []


def test_a_call_not_asking_for_react_s_fields_is_read_as_written() -> None:
    """An answer naming a tool in its fields is a tool call only when the system prompt asked for them; the extract
    call's answer is its text."""
    first, extract = _completions()[0], _completions()[2]
    assert [part.kind for part in _call(first).output_messages[0].parts] == ["text", "tool_call"]
    plain = replace(first, attributes={**first.attributes, SYSTEM: "You are a travel assistant."})
    [answer] = _call(plain).output_messages
    assert [part.kind for part in answer.parts] == ["text"]
    assert answer.text == first.attributes[ANSWER]
    [extracted] = _call(extract).output_messages
    assert (extracted.tool_calls, extracted.text) == ([], extract.attributes[ANSWER])


def test_a_json_answer_names_its_tool_as_the_fields_do() -> None:
    """JSONAdapter's answer (ChatAdapter's fallback when its parse fails) is the same thought and call."""
    first = _completions()[0]
    written = json.dumps({"next_thought": "I should look up the weather in Paris.", "next_tool_name": "get_weather",
                          "next_tool_args": {"city": "Paris"}})
    as_json = replace(first, attributes={**first.attributes, ANSWER: written})
    assert _call(as_json).output_messages[0].parts == _call(first).output_messages[0].parts
