"""Strands Agents on Anthropic with extended thinking (the `strands_native_anthropic-thinking` captures).

Every call answered with a thinking block before its text and tool calls; Strands keeps it as a Bedrock
`reasoningContent` block and re-sends it in every later call's history. Under its default conventions the block is in
the span events as it is (`messages` reads it); under `gen_ai_latest_experimental` Strands writes it as a part of its
own, `{"type": "reasoningContent", "content": {"reasoningText": …}}`, which `trajectory/mappers/strands.py` reads as
the block it restates. Either way a step's `reasoning_content` is its own call's thinking, never message text, never a
step, and the re-sent thinking is the history it was, not a copied step.
"""

from __future__ import annotations

from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

DEFAULT = "strands_native_anthropic-thinking"
LATEST = "strands_native_anthropic-thinking_latest-semconv"
SESSION = "strands-anthropic-thinking-1"


def _steps(capture: str) -> list[dict[str, Any]]:
    return corpus.llm_steps(capture_document(capture, SESSION))


@pytest.mark.parametrize("capture", [DEFAULT, LATEST])
def test_each_step_reasons_as_its_own_call_thought(capture: str) -> None:
    calls = capture_truth(capture).calls
    steps = _steps(capture)
    assert [call.reasoning for call in calls] and all(call.reasoning for call in calls)
    assert [step.get("reasoning_content") for step in steps] == [call.reasoning for call in calls]
    document = capture_document(capture, SESSION)
    for step in document["steps"]:
        # The thinking is no message text and no step of its own, and its re-sending copies no step.
        assert not any(call.reasoning in corpus.message_text(step.get("message")) for call in calls)
        assert not step.get("is_copied_context")
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]


@pytest.mark.parametrize("capture", [DEFAULT, LATEST])
def test_completion_tokens_count_the_thinking_which_strands_does_not_break_out(capture: str) -> None:
    calls = capture_truth(capture).calls
    steps = _steps(capture)
    # The fake LLM reported each call's thinking tokens (`output_tokens_details.thinking_tokens`) within its output
    # tokens; Strands' `Usage` keeps no breakdown, so a step shows them within its completion tokens and no more.
    # The day Strands records them, this fails until they are checked as reasoning tokens.
    assert [step["metrics"]["completion_tokens"] for step in steps] == [call.output_tokens for call in calls]
    assert all("reasoning_tokens" not in (step["metrics"].get("extra") or {}) for step in steps)
    assert not any("reasoning" in key for span in capture_spans(capture) for key in span.attributes)


def test_strands_own_reasoning_part_is_read_as_its_thinking_block() -> None:
    chats = [span for span in capture_spans(LATEST) if span.name == "chat"]
    last = strands.map_span(SpanReader(chats[-1]), ())
    assert isinstance(last, LlmCall)
    # The last call re-sent the four answers before it, each with its thinking, and thought anew.
    calls = capture_truth(LATEST).calls
    history = [message for message in last.input_messages if message.role == "assistant"]
    assert [message.reasoning for message in history] == [call.reasoning for call in calls[:-1]]
    assert [message.reasoning for message in last.output_messages] == [calls[-1].reasoning]
    assert not [part for message in (*last.input_messages, *last.output_messages) for part in message.parts
                if part.kind == "other"]
