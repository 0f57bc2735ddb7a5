"""LiteLLM's own OTel callback on a DeepSeek-R1-style reasoning model (the `litellm_native_reasoning-content` capture).

`litellm.acompletion` on `deepseek/deepseek-r1` (an OpenAI-compatible endpoint answering `reasoning_content` beside
`content`, `reasoning_effort="medium"`), turn 1 not streamed (parallel tool calls), turn 2 streamed (a tool failing
once, retried). Every call reasons, a distinct text, its reasoning tokens counted. The callback's `litellm_request`
span records none of the reasoning, nor the effort: the `raw_gen_ai_request` child does (the provider's response for a
call not streamed; for a streamed one, only the next call's raw request re-sending the answer), read into the call by
`trajectory/mappers/litellm_raw_request.py`; the reasoning tokens are in LiteLLM's `Usage` repr
(`metadata.usage_object`), read by `trajectory/mappers/litellm.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "litellm_native_reasoning-content"
SESSION = "litellm-otel-reasoner-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _llm_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return corpus.llm_steps(document)


def test_the_session_is_the_conversation_that_happened_but_the_last_answers_reasoning() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    assert [entry["stream"] for entry in log] == [False, False, True, True, True]
    # The last answer's reasoning is recorded nowhere (the corpus test's UNRECORDED_REASONING): the rest is right.
    truth = capture_truth(CAPTURE).without_reasoning_recorded([4])
    assert corpus.compare(document, truth) == []
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent",
                                                        "agent"]
    assert not any(s.get("is_copied_context") for s in document["steps"])


def test_each_step_has_its_own_calls_reasoning_never_as_its_message() -> None:
    """Turn 1's reasoning from each call's raw response, turn 2's from the next call's raw request, which re-sends
    the streamed answer with it; the last streamed answer, re-sent by no call, has none."""
    document = capture_document(CAPTURE, SESSION)
    reasoned = [entry["response"]["reasoning"] for entry in _log()]
    assert len(set(reasoned)) == 5 and all(reasoned)
    steps = _llm_steps(document)
    assert [s.get("reasoning_content") for s in steps] == [*reasoned[:4], None]
    for step, reasoning in zip(steps, reasoned, strict=True):
        assert reasoning not in corpus.message_text(step.get("message"))
    # The premise: no attribute of a call's own span holds its reasoning.
    for span in capture_spans(CAPTURE):
        if "litellm.call_id" in span.attributes:
            assert not any(r in str(v) for r in reasoned for v in span.attributes.values())


def test_a_resent_message_that_is_not_the_calls_answer_lends_it_no_reasoning() -> None:
    """The re-sent answer is taken only where it is the answer the streamed call recorded (its text and tools)."""
    log = _log()
    altered = "Let me look for flights."
    spans = [
        replace(span, attributes={key: value.replace(altered, "Searching now.") if key.endswith(".messages") else value
                                  for key, value in span.attributes.items()})
        if span.name == "raw_gen_ai_request" else span
        for span in capture_spans(CAPTURE)
    ]
    assert log[2]["response"]["text"] == altered
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    shown = [s.get("reasoning_content") for s in _llm_steps(document)]
    assert shown[2] is None
    assert shown[3] == log[3]["response"]["reasoning"]


def test_a_streamed_calls_tool_calls_are_named_by_the_ids_the_next_call_re_sends() -> None:
    """Turn 2's streamed answers: their raw child holds no response, the next call's history re-sends each answer with
    the ids the model gave (`trajectory/mappers/litellm_call_ids.py`); each result answers its call by that id."""
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    ids = [[c["id"] for c in entry["response"].get("tool_calls") or ()] for entry in log]
    assert ids[2:4] == [["call_2_0"], ["call_3_0"]] and log[2]["stream"] and log[3]["stream"]
    steps = _llm_steps(document)
    assert [[c["tool_call_id"] for c in s.get("tool_calls") or ()] for s in steps] == ids
    assert [sorted(results_by_call(s)) for s in steps] == [sorted(i) for i in ids]
    assert corpus.compare(document, capture_truth(CAPTURE).without_reasoning_recorded([4]), call_ids=True) == []
    # The premise: no raw child of a streamed call holds a response.
    streamed = {s.span_id for s in capture_spans(CAPTURE) if s.attributes.get("llm.is_streaming") == "True"}
    assert len(streamed) == 3
    assert not any(key.endswith((".choices", ".content")) for span in capture_spans(CAPTURE)
                   if span.parent_span_id in streamed for key in span.attributes)


def test_the_reasoning_tokens_within_the_output_tokens() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"].get("reasoning_tokens"))
            for s in _llm_steps(document)] == [
        (entry["response"]["usage"]["output_tokens"], entry["response"]["usage"]["reasoning_tokens"])
        for entry in _log()]


def test_the_effort_asked_is_each_steps_reasoning_effort() -> None:
    document = capture_document(CAPTURE, SESSION)
    efforts = [entry["request"]["reasoning_effort"] for entry in _log()]
    assert efforts == ["medium"] * 5
    assert [s.get("reasoning_effort") for s in _llm_steps(document)] == efforts


def test_a_call_without_its_raw_request_keeps_what_its_span_says() -> None:
    """Without the raw child (message content off), a call has no reasoning or effort, and is still one step."""
    spans: list[Span] = [s for s in capture_spans(CAPTURE) if s.name != "raw_gen_ai_request"]
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    steps = _llm_steps(document)
    assert len(steps) == 5
    assert not any(s.get("reasoning_content") or s.get("reasoning_effort") for s in steps)
