"""LiteLLM's own OTel callback (the `litellm_native` capture): each tool call named by the provider's id.

`litellm.acompletion` in a hand-written loop: turn 1 on `openai/gpt-4o` (two parallel calls, then a streamed answer),
turn 2 on `anthropic/claude-sonnet-4-5` (a tool failing once, retried). The call spans write the answers' tool calls
without their ids; `trajectory/mappers/litellm_call_ids.py` names them from each call's `raw_gen_ai_request` child
(the provider's response: OpenAI's `choices`, Anthropic's `content` blocks) or from the next call's history
re-sending the answer.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "litellm_native"
SESSION = "litellm-otel-trip-1"
RAW = "raw_gen_ai_request"


def _model_ids() -> list[list[str]]:
    """The ids the model gave each call's tool calls (the fake LLM's log)."""
    return [[c["id"] for c in entry["response"].get("tool_calls") or ()] for entry in corpus.load(CAPTURE).llm_log]


def _step_ids(document: dict[str, Any]) -> list[list[str]]:
    return [[c["tool_call_id"] for c in s.get("tool_calls") or ()] for s in corpus.llm_steps(document)]


def _document(spans: list[Span]) -> dict[str, Any]:
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_each_call_and_result_is_named_by_the_providers_id() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    ids = _model_ids()
    assert ids == [["call_0_0", "call_0_1"], [], ["toolu_2_0"], ["toolu_3_0"], []]
    steps = corpus.llm_steps(document)
    assert _step_ids(document) == ids
    # Each result answers its call by that id; no re-sent answer is a step of its own.
    assert [sorted(results_by_call(step)) for step in steps] == [sorted(i) for i in ids]
    assert not any(s.get("is_copied_context") for s in document["steps"])
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent",
                                                        "agent"]


def test_a_call_re_sent_by_no_call_is_named_by_its_raw_response() -> None:
    """Each call alone with its raw child (no later history): OpenAI's `choices`, Anthropic's `content` blocks."""
    spans = capture_spans(CAPTURE)
    calls = [s for s in spans if "litellm.call_id" in s.attributes]
    ids = _model_ids()
    for index in (0, 2):
        call = calls[index]
        own = [s for s in spans if s is call or s.parent_span_id == call.span_id or s.span_id == call.parent_span_id]
        assert _step_ids(_document(own)) == [ids[index]]
        # The premise: the call's own span records none of them.
        assert not any(i in str(value) for i in ids[index] for value in call.attributes.values())


def test_without_the_raw_children_the_ids_come_from_the_history_re_sending_each_answer() -> None:
    spans = [s for s in capture_spans(CAPTURE) if s.name != RAW]
    document = _document(spans)
    assert _step_ids(document) == _model_ids()
    assert not any(s.get("is_copied_context") for s in document["steps"])


def _without_system_message_after_the_first_call(span: Span) -> Span:
    """The span as if the app had dropped its system message from the history after the first call."""
    if span.attributes.get("gen_ai.response.id") in (None, "openai-resp-0"):
        return span
    messages = [m for m in json.loads(span.attributes["gen_ai.input.messages"]) if m["role"] != "system"]
    return replace(span, attributes={**span.attributes, "gen_ai.input.messages": json.dumps(messages)})


def test_an_answer_whose_ids_are_found_nowhere_still_matches_its_re_sent_copy() -> None:
    """No raw response, and no history re-sends the first call's messages (the app dropped its system message): its
    answer keeps no id, and the re-sent copy with the ids is still that answer, its results paired by name, in
    order; the later answers, found re-sent, keep the provider's ids."""
    spans = [_without_system_message_after_the_first_call(s) for s in capture_spans(CAPTURE) if s.name != RAW]
    document = _document(spans)
    steps = corpus.llm_steps(document)
    assert len(steps) == 5
    assert not any(s.get("is_copied_context") for s in document["steps"])
    first = [c["tool_call_id"] for c in steps[0]["tool_calls"]]
    assert not set(first) & set(_model_ids()[0])  # named by evalkit, by span and position
    assert [(c["arguments"]["city"], results_by_call(steps[0])[c["tool_call_id"]]["content"])
            for c in steps[0]["tool_calls"]] == [("Paris", "sunny, 21°C"), ("Oslo", "rainy, 9°C")]
    assert _step_ids(document)[1:] == _model_ids()[1:]
