"""openai-agents' streamed Chat Completions calls under OpenInference: the answer the SDK built from the stream.

A model that is not the Responses API (`OpenAIChatCompletionsModel`, the `LitellmModel` running any provider's model)
is reported by the SDK as a `generation` span, which OpenInference's openai-agents processor writes as an LLM span.
Not streamed, its output is the Chat Completions message, written as `llm.output_messages`. Streamed
(`Runner.run_streamed`), the SDK records what it built from the stream instead, `[Response]` (a Responses API
`Response` whose `output` holds the answer's items: a `message` of `output_text` parts, each `function_call` under its
`call_id`), and OpenInference writes no output messages of it: read as messages, it was one empty answer, so the
call's text and tool calls were in no step (the tools it asked for then steps of their own, no call asking for them).

Its answer is that Response's output items, one assistant answer (`openai_sdk.merge_output_items`). Its usage, as the
SDK counted it, is the Response's (`input_tokens_details.cached_tokens`, `cache_write_tokens`), which the processor
writes only as the prompt and completion counts: the cache reads and writes come from it where the span has none.

Seen in a real capture: tests/captures/openai-agents_openinference_litellm-model (openai-agents 0.25, `LitellmModel`
on `anthropic/claude-sonnet-4-5`, OpenInference's openai-agents processor 2.6.0, turn 2 `run_streamed`).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import parse_json, parse_messages
from evalkit.trajectory.mappers.openai_sdk import merge_output_items
from evalkit.trajectory.operations import LlmCall

SCOPE = "openinference.instrumentation.openai_agents"
SPAN_NAME = "generation"


def read_answer(call: LlmCall, output: Any) -> None:
    """A streamed generation's answer and cache tokens from the `[Response]` it recorded as `output.value`, where its
    output messages say nothing."""
    if any(message.parts for message in call.output_messages):
        return
    # Cheap checks first: the text is JSON of one Response (`"object": "response"`) or not read at all.
    if not isinstance(output, str) or not output.startswith("[{") or '"object": "response"' not in output:
        return
    built = parse_json(output)
    if not (isinstance(built, list) and len(built) == 1 and isinstance(response := built[0], dict)
            and response.get("object") == "response" and isinstance(items := response.get("output"), list)):
        return
    call.output_messages = [message for message in parse_messages(items, "assistant") if message.parts]
    merge_output_items(call)
    usage = response.get("usage")
    details = usage.get("input_tokens_details") if isinstance(usage, dict) else None
    if isinstance(details, dict):
        if call.usage.cache_read_tokens is None and isinstance(read := details.get("cached_tokens"), int) and read:
            call.usage.cache_read_tokens = read
        if (call.usage.cache_write_tokens is None and isinstance(written := details.get("cache_write_tokens"), int)
                and written):
            call.usage.cache_write_tokens = written
