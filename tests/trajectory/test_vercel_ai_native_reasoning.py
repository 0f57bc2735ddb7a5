"""The Vercel AI SDK on Anthropic with extended thinking, in @ai-sdk/otel's LegacyOpenTelemetry.

The capture `vercel-ai_native_reasoning`: AI SDK 7's generateText then streamText on `@ai-sdk/anthropic` with
`providerOptions.anthropic.thinking` enabled, every call thinking before its text and tool calls. Each LLM call's span
records the thinking as `ai.response.reasoning` and the thinking tokens as `ai.usage.reasoningTokens`; the next
calls re-send it, a `reasoning` part (its signature in `providerOptions.anthropic`) of the assistant message in
`ai.prompt.messages`. Read as it is (`trajectory/mappers/vercel_ai.py`, `messages.py`), the trajectory was right
already: these tests keep it so.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import vercel_ai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "vercel-ai_native_reasoning"
SESSION = "vercel-anthropic-thinking-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def test_each_step_reasons_as_its_own_calls_thinking() -> None:
    calls = capture_truth(CAPTURE).calls
    document = _document()
    steps = corpus.llm_steps(document)
    assert len(calls) == 5 and all(call.reasoning for call in calls)
    assert len({call.reasoning for call in calls}) == len(calls)  # distinct, so a step cannot show another's
    assert [step.get("reasoning_content") for step in steps] == [call.reasoning for call in calls]
    for step in document["steps"]:
        # The thinking is no message text and no step of its own, and its re-sending copies no step.
        assert not any(call.reasoning in corpus.message_text(step.get("message")) for call in calls)
        assert not step.get("is_copied_context")
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]


def test_completion_tokens_count_the_thinking_and_break_it_out() -> None:
    calls = capture_truth(CAPTURE).calls
    steps = corpus.llm_steps(_document())
    # The fake LLM reported each call's thinking tokens within its output tokens; @ai-sdk/anthropic reads them
    # (`outputTokenDetails.reasoningTokens`) and the step shows them beside its completion tokens, not added again.
    assert [(step["metrics"]["completion_tokens"], step["metrics"]["extra"]["reasoning_tokens"]) for step in steps] == [
        (call.output_tokens, call.reasoning_tokens) for call in calls]
    assert all(call.reasoning_tokens for call in calls)


def test_the_resent_thinking_is_the_history_it_was() -> None:
    calls = capture_truth(CAPTURE).calls
    last_span = [span for span in capture_spans(CAPTURE) if span.name == "ai.streamText.doStream"][-1]
    last = vercel_ai.map_span(SpanReader(last_span), ())
    assert isinstance(last, LlmCall)
    # The last call re-sent the four answers before it, each with its thinking (a `reasoning` part), and thought anew.
    history = [message for message in last.input_messages if message.role == "assistant"]
    assert [message.reasoning for message in history] == [call.reasoning for call in calls[:-1]]
    assert [message.reasoning for message in last.output_messages] == [calls[-1].reasoning]
    assert not any(call.reasoning in message.text for call in calls for message in history)
    # The one part read as neither text, thinking nor tool is the streamed step's `custom` part: @ai-sdk/anthropic's
    # bookkeeping of the stream's message_start (its id, model and first usage), kept in the step's content and so
    # re-sent in the next step's prompt, which the provider never sends the model. It is in no step.
    others = [part.text or "" for message in last.input_messages for part in message.parts if part.kind == "other"]
    assert len(others) == 1 and '"kind": "anthropic.message_start"' in others[0]
    assert "message_start" not in json.dumps(_document())


def test_the_thinking_configuration_is_in_no_span() -> None:
    # LegacyOpenTelemetry records a call's settings as `ai.settings.*` (maxRetries alone for generateText and
    # streamText) and never its providerOptions, so the thinking budget the request set cannot be a step's request
    # parameter. The day it is recorded, this fails until it is read.
    assert corpus.load(CAPTURE).llm_log[0]["request"]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    for span in capture_spans(CAPTURE):
        assert not [key for key, value in span.attributes.items()
                    if "thinking" in key or "budget" in str(value).lower() or "providerOptions" in key]
