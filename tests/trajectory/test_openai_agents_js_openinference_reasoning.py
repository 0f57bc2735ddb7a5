"""@openai/agents (JavaScript) on a reasoning model (o4-mini, `reasoning: {effort: 'medium', summary: 'auto'}`), traced
by @arizeai/openinference-instrumentation-openai-agents (the `openai-agents-js_openinference_reasoning` capture).

Every call answers with a `reasoning` item before its text or function calls. The instrumentation writes none of it
into the answer's output messages (only `output.value`, the Response, holds it), and where the SDK re-sends it as
history it writes it as an input message with no role and the reasoning as its text (`trajectory/mappers/
openai_agents_js.py`). Each step must hold its own call's reasoning beside its tool calls and text, the effort the
request asked and its reasoning tokens; the re-sent reasoning must be no question of the user's nor a step.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents-js_openinference_reasoning"
SESSION = "oa-js-oi-reasoning-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _response_spans() -> list[Span]:
    """The SDK's `response` spans (its Responses calls), in the order they were made."""
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def _questions() -> list[str]:
    """What the user asked, in order: every user item the SDK sent, once."""
    asked: list[str] = []
    for entry in _log():
        for item in entry["request"]["input"]:
            if item.get("role") == "user" and item["content"] not in asked:
                asked.append(item["content"])
    return asked


def test_each_call_is_one_step_with_its_own_reasoning_beside_its_answer() -> None:
    """The reasoning item is only in the Response the span records: each step still holds its own call's reasoning
    (never its text), its tool calls and text as the model gave them, each result on its call (the first
    `get_weather` flagged: it threw)."""
    document = _document()
    steps = [step for step in document["steps"] if step["source"] == "agent"]
    truth = capture_truth(CAPTURE)
    assert len(truth.calls) == 5
    assert len(steps) == len(truth.calls)
    for step, call in zip(steps, truth.calls, strict=True):
        assert step["llm_call_count"] == 1
        assert step["reasoning_content"] == call.reasoning
        assert step["message"] == call.text
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["id"], c["name"], c["arguments"]) for c in call.tool_calls]
        for tool_call in call.tool_calls:
            assert results_by_call(step)[tool_call["id"]]["content"] == truth.tool_results[tool_call["id"]]
    assert len({step["reasoning_content"] for step in steps}) == 5
    thrown = truth.calls[0].tool_calls[0]  # the first get_weather, named by its call_id (its item's id is fc_…)
    assert thrown["name"] == "get_weather" and thrown["id"].startswith("call_")
    assert results_by_call(steps[0])[thrown["id"]]["extra"]["is_error"] is True


def test_re_sent_reasoning_is_no_question_and_no_step() -> None:
    """The SDK re-sends each earlier answer's reasoning item as an input item: the instrumentation writes it with no
    role, its reasoning as its text. It is the reasoning that began the answer re-sent after it, not something the
    user said: the user steps are the two questions, nothing is copied context, and in the last call's input each
    reasoning is joined to the function call or text it began."""
    document = _document()
    assert [step["message"] for step in document["steps"] if step["source"] == "user"] == _questions()
    assert [step for step in document["steps"] if step.get("is_copied_context")] == []
    last = _read(_response_spans()[-1])
    assert [message.text for message in last.input_messages if message.role == "user"] == _questions()
    reasoning_messages = [message for message in last.input_messages if message.reasoning]
    assert [message.reasoning for message in reasoning_messages] == [entry["response"]["reasoning"]
                                                                     for entry in _log()[:4]]
    assert all(message.role == "assistant" and (message.tool_calls or message.text) for message in reasoning_messages)


def test_the_effort_the_requests_asked_is_each_steps() -> None:
    """The SDK sends `reasoning: {"effort": "medium", "summary": "auto"}`; the instrumentation records the Response
    echoing it as the call's invocation parameters."""
    asked = {entry["request"]["reasoning"]["effort"] for entry in _log()}
    assert asked == {"medium"}
    assert [step.get("reasoning_effort") for step in corpus.llm_steps(_document())] == ["medium"] * 5


def test_reasoning_tokens_are_within_each_steps_completion_tokens() -> None:
    """Right before the fix (the instrumentation writes `llm.token_count.completion_details.reasoning`): kept so."""
    for step, entry in zip(corpus.llm_steps(_document()), _log(), strict=True):
        usage = entry["response"]["usage"]
        assert step["metrics"]["completion_tokens"] == usage["output_tokens"]
        assert step["metrics"]["extra"]["reasoning_tokens"] == usage["reasoning_tokens"] > 0
        assert step["metrics"]["prompt_tokens"] == usage["input_tokens"]


def test_a_reasoning_item_written_with_nothing_leaves_the_other_messages_their_own_items() -> None:
    """A reasoning item whose summary is empty (the model showed nothing of its reasoning) has no `input_text` part,
    so the instrumentation writes no attribute for it: its index is a gap. The messages after it are still paired
    with their own items, so the re-sent answer after it gets its text back (its `output_text` part is only in
    `input.value`)."""
    span = _response_spans()[3]  # turn 2's first call: all of turn 1 re-sent, its answer's text too
    items = json.loads(span.attributes["input.value"])
    first_reasoning = next(i for i, item in enumerate(items) if item.get("type") == "reasoning")
    items[first_reasoning] = {**items[first_reasoning], "content": []}
    index = first_reasoning + 1  # the Response has instructions: input message 0
    gap = f"llm.input_messages.{index}."
    attributes = {key: value for key, value in span.attributes.items() if not key.startswith(gap)}
    assert len(attributes) < len(span.attributes)
    call = _read(replace(span, attributes={**attributes, "input.value": json.dumps(items)}))
    answer = _log()[2]["response"]["text"]
    assert [message.text for message in call.input_messages if message.role == "assistant" and message.text] == [
        answer]
    assert [message.text for message in call.input_messages if message.role == "user"] == _questions()


def test_a_call_continuing_a_previous_response_is_sent_only_its_new_items() -> None:
    """The invocation parameters are the Response the API returned, which names the previous response a call
    continued (`previousResponseId`): the SDK then sends only the new items, each shown to the model anew."""
    span = _response_spans()[1]
    assert _read(span).input_all_new is False
    parameters = {**json.loads(span.attributes["llm.invocation_parameters"]), "previous_response_id": "openai-resp-0"}
    continued = replace(span, attributes={**span.attributes, "llm.invocation_parameters": json.dumps(parameters)})
    assert _read(continued).input_all_new is True
