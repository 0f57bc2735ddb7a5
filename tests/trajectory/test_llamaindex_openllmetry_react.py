"""OpenLLMetry (Traceloop SDK, opentelemetry-instrumentation-llamaindex + -openai) on a LlamaIndex ReActAgent, read
from its capture (`llamaindex_openllmetry_react`): the scenario of `llamaindex_openinference_react`, another emitter.

The model makes no native tool call: it writes `Thought: … Action: <tool> Action Input: {…}` in its text, and
LlamaIndex runs the tool (its `call_tool` step's task span, the ToolCallResult with an id of LlamaIndex's own), then
restates the loop on every later call: each action re-formatted (`Action Input: ` the parsed dict's repr), each tool's
output a user message `Observation: …`, a finished turn one assistant message of its steps joined. Each call is the
openai instrumentation's `openai.chat` span, nothing of LlamaIndex on it: its system prompt asking for ReAct's format
is what `trajectory/mappers/llamaindex_react.py` reads it by, as under OpenInference.
Turn 1: the weather in Oslo, the stock quote whose tool raises (the model is shown the exception text), the quote
again, the answer; turn 2, streamed: the weather in Paris, the answer.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "llamaindex_openllmetry_react"
SESSION = "li-ll-react-1"
FAILURE_SHOWN = "quote service unavailable for ACME; try again"  # what ReActAgent sent as the Observation


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _agent_steps() -> list[dict[str, Any]]:
    return [step for step in _document()["steps"] if step["source"] == "agent"]


def _call_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.name == "openai.chat"),
                  key=lambda span: span.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    call = openllmetry.map_span(SpanReader(span), [])
    assert isinstance(call, LlmCall)
    return call


def test_each_action_is_the_tool_call_of_the_step_that_wrote_it() -> None:
    """One step per LLM call: an action's step says its thought and makes the call its text named, the `call_tool`
    step's ToolCallResult its result (matched by name and arguments: LlamaIndex's own tool id is on no call); no tool
    a step of its own."""
    steps = _agent_steps()
    assert all(step.get("llm_call_count") == 1 for step in steps)
    assert [(step["message"], [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()],
             [r["content"] for r in step.get("observation", {}).get("results") or ()]) for step in steps] == [
        ("Thought: I need the weather in Oslo first.", [("get_weather", {"city": "Oslo"})], ["rainy, 9°C"]),
        ("Thought: Now the ACME quote.", [("lookup_stock", {"ticker": "ACME"})], [FAILURE_SHOWN]),
        ("Thought: The quote service failed; I will try once more.", [("lookup_stock", {"ticker": "ACME"})],
         ["ACME last traded at 41.20 USD"]),
        ("Thought: I have both.\nAnswer: Oslo is rainy (9°C) and ACME last traded at 41.20 USD.", [], []),
        ("Thought: The user wants Paris too.", [("get_weather", {"city": "Paris"})], ["sunny, 21°C"]),
        ("Thought: I know the weather in Paris.\nAnswer: Paris is sunny (21°C).", [], []),
    ]
    for step in steps:
        for call, result in zip(step.get("tool_calls") or (), step.get("observation", {}).get("results") or (),
                                strict=True):
            assert result["source_call_id"] == call["tool_call_id"]


def test_the_raising_tool_is_flagged_on_the_step_that_asked_for_it() -> None:
    """The failed run's ToolOutput (`is_error`, the exception text the model was shown) is the result of the call
    whose text named it, not of a step no LLM call made."""
    [(step, failed)] = [(step, result) for step in _agent_steps()
                        for result in step.get("observation", {}).get("results") or ()
                        if result.get("extra", {}).get("is_error")]
    assert (step["message"], step["llm_call_count"]) == ("Thought: Now the ACME quote.", 1)
    assert failed["content"] == FAILURE_SHOWN


def test_the_restated_loop_is_no_step_and_each_question_is_asked_once() -> None:
    """The re-formatted actions, the `Observation:` user messages and turn 1's steps joined in the memory are the
    steps and results already there: no copied-context step, no user step but the two questions."""
    document = _document()
    assert not [step for step in document["steps"] if step.get("is_copied_context")]
    assert [step["message"] for step in document["steps"] if step["source"] == "user"] == [
        "What's the weather in Oslo, and the last ACME quote?", "And in Paris?"]


def test_the_session_is_the_conversation_the_log_shows() -> None:
    """Against the fake LLM's log, read as a text-format agent's (`tests/captures/react_text.py`): each answer's
    thought and action, each action's observation on its call, the streamed turn's tokens."""
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert sum(1 for call in truth.calls if call.tool_calls) == 4
    assert corpus.compare(_document(), truth) == []


def test_a_call_not_asking_for_the_react_format_is_read_as_written() -> None:
    """An `openai.chat` answer that looks like an action is no tool call unless its system prompt asked for ReAct's
    format."""
    first = _call_spans()[0]
    assert [part.kind for part in _call(first).output_messages[0].parts] == ["text", "tool_call"]
    messages = json.loads(first.attributes["gen_ai.input.messages"])
    assert messages[0]["role"] == "system"
    messages[0]["parts"] = [{"type": "text", "content": "You are a travel assistant."}]
    plain = replace(first, attributes={**first.attributes, "gen_ai.input.messages": json.dumps(messages)})
    [answer] = _call(plain).output_messages
    assert [part.kind for part in answer.parts] == ["text"]
    assert answer.text == json.loads(first.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"]
