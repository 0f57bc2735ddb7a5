"""A LangChain chat model's call as OpenInference's Python LangChain tracer records it: what the flattened attributes
leave out of a reasoning model's answer, read back from the run's serialised output.

- The tracer flattens a message's content blocks keeping only `text` and `image_url` ones
  (`_get_attributes_from_message_content`): the thinking a reasoning model answers with (Anthropic's `thinking`
  blocks, which langchain-anthropic keeps in the AIMessage's content, signature and all; a Responses API `reasoning`
  item, which langchain-openai keeps as it came, `{"type": "reasoning", "id": "rs_…", "summary": [{"type":
  "summary_text", "text": …}]}`) is in no `llm.output_messages.*` attribute, its block's index skipped (the text
  after it is `contents.1`).
- It reads a call's token counts from the provider's raw usage (`llm_output.usage`) where there is one, as a
  non-streamed ChatAnthropic call has, and reads no reasoning count there (Anthropic's
  `output_tokens_details.thinking_tokens`); a streamed call has only LangChain's `usage_metadata`, whose
  `output_token_details.reasoning` it records.

`output.value` is the whole LLMResult: each generation's message as LangChain's `dumpd` serialises it, its content
blocks and its `usage_metadata` (langchain-anthropic fills `output_token_details.reasoning` from the thinking tokens)
included. The thinking re-sent in a later call's history needs nothing: a re-sent answer is known by its text and
tool calls, never by its reasoning.

The tracer records the chat model's invocation parameters as given (`llm.invocation_parameters`): ChatOpenAI's
`reasoning={"effort": …, "summary": …}` (the Responses API's shape, sent as is) names the effort there, not as the
`reasoning_effort` the OpenInference mapper reads.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openai_sdk
from evalkit.trajectory.mappers.langchain import serialized_kwargs, serialized_messages
from evalkit.trajectory.mappers.messages import parse_part
from evalkit.trajectory.mappers.reader import dig
from evalkit.trajectory.operations import LlmCall, Message, Part


def _reasoning_parts(content: Any) -> list[Part]:
    """The reasoning blocks with text of a serialised message's content (a `thinking` block's text; a
    `redacted_thinking` block has none to show; a Responses `reasoning` item's summary)."""
    if not isinstance(content, list):
        return []
    parts = [_content_part(block) for block in content if isinstance(block, dict)]
    return [part for part in parts if part is not None and part.kind == "reasoning" and part.text]


def _content_part(block: dict[str, Any]) -> Part | None:
    if block.get("type") == "reasoning" and "summary" in block:
        # langchain-openai's Responses `reasoning` item (a summary always, maybe empty): its text in its items.
        return Part("reasoning", text=openai_sdk.reasoning_item_text(block))
    return parse_part(block)


def _reasoning_tokens(kwargs: dict[str, Any], output_tokens: int | None) -> int | None:
    """LangChain's count of the answer's reasoning tokens, when its output count is the one the span recorded."""
    usage = kwargs.get("usage_metadata")
    reasoning = dig(usage, "output_token_details", "reasoning")
    if type(reasoning) is not int or reasoning <= 0 or dig(usage, "output_tokens") != output_tokens:
        return None
    return reasoning


def read_request(call: LlmCall) -> None:
    """The effort the invocation parameters set the Responses API's way (`reasoning.effort`), where they set no
    `reasoning_effort`."""
    if call.reasoning_effort is None:
        call.reasoning_effort = openai_sdk.reasoning_effort(call.extra.get("request"))


def read_output(call: LlmCall, output_value: Any) -> None:
    """Give the call's answer the reasoning and reasoning tokens its serialised generation holds, where the flattened
    attributes have none. Only when the generations are as many as the output messages."""
    # A look at the text first: this runs for every LangChain call, and most answers have no reasoning to read back.
    if not isinstance(output_value, str) or '"generations"' not in output_value or (
            '"thinking"' not in output_value and '"reasoning"' not in output_value):
        return
    serialized = serialized_messages(output_value, "generations")
    if not isinstance(serialized, list) or len(serialized) != len(call.output_messages):
        return
    for index, (message, raw) in enumerate(zip(call.output_messages, serialized, strict=True)):
        kwargs = serialized_kwargs(raw)
        if kwargs is None:
            continue
        if not message.reasoning and (thinking := _reasoning_parts(kwargs.get("content"))):
            # A new message: messages may be shared with other calls (`MessageMemo`), never changed in place.
            call.output_messages[index] = Message(message.role, [*thinking, *message.parts], name=message.name)
        if index == 0 and call.usage.reasoning_tokens is None:
            call.usage.reasoning_tokens = _reasoning_tokens(kwargs, call.usage.output_tokens)
