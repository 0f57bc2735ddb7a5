"""openai-agents on a reasoning model (o4-mini, `Reasoning(effort="medium", summary="auto")`), traced by OpenInference
(the `openai-agents_openinference_reasoning` capture).

Every call answers with a `reasoning` item before its text or function calls; the instrumentation writes that item as
an output message of its own, and, where the SDK re-sends it as history, as an input message of its own
(`trajectory/mappers/openai_sdk.py`). Each step must hold its own call's reasoning, its tool calls and text, the
effort the request asked and its reasoning tokens, and the re-sent items must be no steps of their own.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openai_sdk, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_reasoning"
SESSION = "oa-oi-reasoning-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _agent_steps() -> list[dict[str, Any]]:
    """Every agent step, copied context too."""
    return [step for step in capture_document(CAPTURE, SESSION)["steps"] if step["source"] == "agent"]


def _call_steps() -> list[dict[str, Any]]:
    """The steps of the LLM calls evalkit received."""
    return corpus.llm_steps(capture_document(CAPTURE, SESSION))


def _response_calls() -> list[LlmCall]:
    """openai-agents' Responses calls as the OpenInference mapper reads them, in the order they were made."""
    spans: list[Span] = sorted((span for span in capture_spans(CAPTURE)
                                if span.attributes.get("openinference.span.kind") == "LLM"),
                               key=lambda span: span.start_time_unix_nano)
    calls = [openinference.map_span(SpanReader(span), ()) for span in spans]
    assert all(isinstance(call, LlmCall) for call in calls)
    return [call for call in calls if isinstance(call, LlmCall)]


def test_each_call_is_one_step_with_its_own_reasoning_beside_its_answer() -> None:
    """The reasoning item is an output message of its own on the span: the step is still the whole answer, its
    reasoning the call's own (never its text), its tool calls and text as the model gave them, each result on its
    call (the first `book_hotel` flagged: it raised)."""
    steps = _agent_steps()
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
    # Each call and result named by its `call_id` (`call_…`, which the function_call_output names): the Response JSON
    # on the span gives each call its item's own id (`fc_…`) too, which names nothing else.
    booking = truth.calls[0].tool_calls[0]
    assert booking["item_id"].startswith("fc_") and booking["id"].startswith("call_")
    assert any(booking["item_id"] in str(span.attributes.get("output.value")) for span in capture_spans(CAPTURE))
    failed = results_by_call(steps[0])[booking["id"]]
    assert failed["extra"]["is_error"] is True


def test_re_sent_reasoning_items_are_no_steps_of_their_own() -> None:
    """Each call re-sends the earlier answers' reasoning items as input items: joined to the answer they began, they
    are that answer again, not copied context (nothing of the session is copied: every call's history is its own)."""
    document = capture_document(CAPTURE, SESSION)
    assert [step for step in document["steps"] if step.get("is_copied_context")] == []
    last = _response_calls()[-1]
    reasoning_messages = [message for message in last.input_messages if message.reasoning]
    # The four earlier answers, each re-sent as a reasoning item, then its first function call or its text.
    assert [message.reasoning for message in reasoning_messages] == [entry["response"]["reasoning"]
                                                                     for entry in _log()[:4]]
    assert all(message.tool_calls or message.text for message in reasoning_messages)


def test_the_effort_the_requests_asked_is_each_steps() -> None:
    """The SDK sends `reasoning: {"effort": "medium", "summary": "auto"}`; the instrumentation records the Response
    echoing it as the call's parameters."""
    asked = {entry["request"]["reasoning"]["effort"] for entry in _log()}
    assert asked == {"medium"}
    assert [step.get("reasoning_effort") for step in _call_steps()] == ["medium"] * 5


def test_reasoning_tokens_are_within_each_steps_completion_tokens() -> None:
    for step, entry in zip(_call_steps(), _log(), strict=True):
        usage = entry["response"]["usage"]
        assert step["metrics"]["completion_tokens"] == usage["output_tokens"]
        assert step["metrics"]["extra"]["reasoning_tokens"] == usage["reasoning_tokens"] > 0
        assert step["metrics"]["prompt_tokens"] == usage["input_tokens"]


def test_a_responses_requests_effort_is_read_from_its_reasoning_settings() -> None:
    assert openai_sdk.reasoning_effort({"reasoning": {"effort": "high", "summary": "auto"}}) == "high"
    assert openai_sdk.reasoning_effort({"reasoning": {"summary": "auto"}}) is None
    assert openai_sdk.reasoning_effort({"reasoning_effort": "low"}) is None  # Chat Completions' shape: not this one's
    assert openai_sdk.reasoning_effort(None) is None
