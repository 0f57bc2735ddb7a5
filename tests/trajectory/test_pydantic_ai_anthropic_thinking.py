"""pydantic-ai's own instrumentation on an Anthropic model with extended thinking, read from its capture
(`pydantic-ai_anthropic_thinking`): pydantic-ai 2.78 on claude-sonnet-4-6 with `anthropic_thinking` (a 2048-token
budget), every answer a signed thinking block before its text and tool calls, re-sent in the history; two parallel
`get_weather` calls, one raising `ModelRetry`, another city asked for; a second run given the first's messages,
streamed, whose `packing_list` tool returns a list.

Before `pydantic_ai.map_span` read them, no step had its reasoning tokens (pydantic-ai records Anthropic's
`output_tokens_details.thinking_tokens` only as `gen_ai.usage.details.thinking_tokens`), and the list's result was
the tool span's compact JSON, which only OpenAI's chat adapter shows the model: the Anthropic one sent a text block
an item.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import pydantic_ai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "pydantic-ai_anthropic_thinking"
SESSION = "pai-anthropic-thinking-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _chat_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def _mapped(span: Span) -> LlmCall:
    call = pydantic_ai.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_each_step_is_its_call_with_its_own_thinking_and_nothing_else() -> None:
    document = _document()
    log = _log()
    steps = corpus.llm_steps(document)
    assert [step["reasoning_content"] for step in steps] == [entry["response"]["reasoning"] for entry in log]
    assert len(set(step["reasoning_content"] for step in steps)) == len(log) == 5
    # Thinking is no text, no step of its own, and its re-sent copies are no copied context.
    agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
    assert agent_steps == steps
    assert [step["message"] for step in steps] == [entry["response"]["text"] for entry in log]
    assert all(not step.get("is_copied_context") for step in document["steps"])


def test_each_step_s_reasoning_tokens_are_its_thinking_tokens() -> None:
    steps = corpus.llm_steps(_document())
    usage = [entry["response"]["usage"] for entry in _log()]
    assert [step["metrics"]["extra"]["reasoning_tokens"] for step in steps] == [u["reasoning_tokens"] for u in usage]
    # Part of the output tokens, which stay Anthropic's own count (the thinking included).
    assert [step["metrics"]["completion_tokens"] for step in steps] == [u["output_tokens"] for u in usage]


def test_a_reasoning_count_under_the_conventions_key_is_kept() -> None:
    span = _chat_spans()[0]
    both = replace(span, attributes={**span.attributes, "gen_ai.usage.reasoning.output_tokens": 5})
    assert span.attributes["gen_ai.usage.details.thinking_tokens"] == 38
    assert _mapped(both).usage.reasoning_tokens == 5


def test_a_list_result_is_the_text_blocks_the_model_was_shown() -> None:
    request = _log()[4]["request"]
    (blocks,) = [block["content"] for message in request["messages"] if isinstance(message["content"], list)
                 for block in message["content"] if block.get("tool_use_id") == "toolu_3_0"]
    assert [block["text"] for block in blocks] == ["sunscreen", "light linen shirt", "comfortable walking shoes"]
    (step,) = [s for s in corpus.llm_steps(_document()) if any(c["function_name"] == "packing_list"
                                                                 for c in s.get("tool_calls") or ())]
    (result,) = step["observation"]["results"]
    assert result["content"] == "sunscreen\nlight linen shirt\ncomfortable walking shoes"
    assert result["extra"]["content_from"] == "input history"
    # The other results were strings, shown as recorded.
    assert all(_mapped(span).shown_tool_results == {} for span in _chat_spans()[:4])


def _with_packing_result(result: Any, provider: str = "anthropic") -> Span:
    """The call after `packing_list` ran, its input's last message recording `result` for it."""
    span = _chat_spans()[4]
    messages = json.loads(span.attributes["gen_ai.input.messages"])
    (part,) = messages[-1]["parts"]
    part["result"] = result
    return replace(span, attributes={**span.attributes, "gen_ai.input.messages": json.dumps(messages),
                                     "gen_ai.provider.name": provider})


def test_only_a_list_returned_to_anthropic_is_shown_an_item_a_block() -> None:
    assert _mapped(_with_packing_result(["sunscreen", {"spf": 50}, 3])).shown_tool_results == {
        "toolu_3_0": 'sunscreen\n{"spf":50}\n3'}
    # A string that reads as a JSON array went out as one block, as it is.
    assert _mapped(_with_packing_result('["sunscreen", "hat"]')).shown_tool_results == {}
    # OpenAI's chat adapter shows the tool span's compact JSON.
    assert _mapped(_with_packing_result(["sunscreen"], provider="openai")).shown_tool_results == {}
