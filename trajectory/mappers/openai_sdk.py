"""The OpenAI Python SDK's calls as OpenInference's openai instrumentation records them.

`openinference-instrumentation-openai` names a call's span after the type the SDK parses the answer into
(`ChatCompletion`, `Response`). A Responses API answer (`client.responses.create`, streamed or not) is a list of
output items: its text a `message` item, each function call a `function_call` item of its own. The
instrumentation writes every item as an output message of its own (`_ResponsesApiAttributes`: item i is
`llm.output_messages.<i>`, a function call the message's `tool_calls.0`), so two parallel function calls are two
output messages. They are one answer: the API has no `n`, a response is never several choices (what several output
messages of a `ChatCompletion` span are). The items it re-sends as input are split the same way; the builder
already knows an answer re-sent as items (`build._Context._already_produced`).

A Responses call may continue the conversation the API keeps: a previous response (`previous_response_id`) or a
conversation of the Conversations API (`conversation`, its id or `{"id": …}`). Its input then holds only the new
items (a question, the outputs of the previous response's function calls), and the model is shown each of them anew
even where an earlier call was shown the same (`continues_server_state`). The instrumentation records the parameters
in `llm.invocation_parameters` (every request parameter but the input, instructions and tools), read by the
OpenInference mapper into the call's `extra["request"]`. OpenInference's openai-agents instrumentation records there
the Response the API returned, which names the same state (the OpenInference mapper asks this module about those
calls too).

OpenInference's openai-agents instrumentation writes a Response's output items much the same way: its function calls
under one output message, but a `message` item and a reasoning model's `reasoning` item each as an output message of
its own (`_get_attributes_from_response_output`; a reasoning item a `reasoning` content, before the message or
function calls it thought out), so they too are one answer. The SDK's `response` span (its
ResponseSpanData; a Chat Completions call's is a `generation` span) is read as the Responses call it is. The SDK
re-sends a reasoning item as an input item of the next call (a reasoning model needs it there), which the
instrumentation writes as an input message of its own as well (`_get_attributes_from_reasoning_item_param`): it is
joined to the item after it, the rest of the answer it began, so that the re-sent answer is known as the one a call
of the trajectory produced, not copied context of its own (`join_reasoning_items`).

A reasoning model's request names its effort as `reasoning: {"effort": …, "summary": …}` (the Responses API's
shape; Chat Completions' is `reasoning_effort`), recorded in the request parameters by the openai instrumentation and
echoed in the Response the openai-agents one records: the call's `reasoning_effort`. The reasoning itself needs
nothing here: its summary is a `reasoning` content of the answer, its tokens
`llm.token_count.completion_details.reasoning` (`usage.output_tokens_details.reasoning_tokens`, within the output
tokens).

Seen in real captures: tests/captures/openai-sdk_openinference_responses (previous_response_id),
openai-agents_openinference_server-conversation (openai-agents: previous_response_id and conversation) and
openai-agents_openinference_reasoning (openai-agents on o4-mini: reasoning items and effort).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evalkit.trajectory.operations import LlmCall, Message
from evalkit.trajectory.span import Span

OPENINFERENCE_SCOPE = "openinference.instrumentation.openai"
_RESPONSES_SPAN = "Response"  # openai.types.responses.Response, the Responses API's answer
OPENAI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"
_OPENAI_AGENTS_RESPONSE_SPAN = "response"  # openai-agents' ResponseSpanData, named by its type


def is_openinference_response(span: Span) -> bool:
    """A Responses API call's span (not a Chat Completions one) under OpenInference's openai instrumentation."""
    return span.scope_name == OPENINFERENCE_SCOPE and span.name == _RESPONSES_SPAN


def is_openai_agents_response(span: Span) -> bool:
    """A Responses API call's span under OpenInference's openai-agents instrumentation."""
    return span.scope_name == OPENAI_AGENTS_SCOPE and span.name == _OPENAI_AGENTS_RESPONSE_SPAN


def read_response(call: LlmCall) -> None:
    """A Responses API call's span read as the API means it: its output items, each an output message, the one
    assistant answer they are; its input all new when the call continues the API's state; the effort it asked."""
    merge_output_items(call)
    call.input_messages = join_reasoning_items(call.input_messages)
    call.input_all_new = continues_server_state(call.extra.get("request"))
    effort = reasoning_effort(call.extra.get("request"))
    if effort is not None and call.reasoning_effort is None:
        call.reasoning_effort = effort


def reasoning_effort(parameters: object) -> str | None:
    """The effort a Responses request's parameters (or the Response echoing them) set (`reasoning.effort`), None
    where they set none."""
    reasoning = parameters.get("reasoning") if isinstance(parameters, dict) else None
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    return effort if isinstance(effort, str) and effort else None


def reasoning_item_text(item: Mapping[str, Any]) -> str:
    """The text a Responses `reasoning` item shows: its summary's texts (`summary: [{"type": "summary_text", "text":
    …}]`), else its `content`'s (the model's reasoning text), a blank line between two; "" where it shows neither
    (the model reasoned, nothing of it to show)."""
    return "\n\n".join(_item_texts(item.get("summary")) or _item_texts(item.get("content")))


def _item_texts(items: Any) -> list[str]:
    if not isinstance(items, list):
        return []
    return [item["text"] for item in items if isinstance(item, dict) and isinstance(item.get("text"), str)
            and item["text"]]


def continues_server_state(parameters: object) -> bool:
    """Whether a Responses call's parameters (or the Response echoing them) continue a conversation the API keeps:
    a previous response or a conversation named."""
    return isinstance(parameters, dict) and any(parameters.get(key) for key in ("previous_response_id", "conversation"))


def merge_output_items(call: LlmCall) -> None:
    """A Responses answer recorded one output message per output item (OpenInference's Python instrumentation and
    @openai/agents' JavaScript one alike) is one assistant answer: the API has no `n`."""
    outputs = call.output_messages
    if len(outputs) > 1 and all(message.role == "assistant" for message in outputs):
        call.output_messages = [Message("assistant", [part for message in outputs for part in message.parts])]


def join_reasoning_items(messages: list[Message]) -> list[Message]:
    """Input messages with each re-sent reasoning item (an assistant message of `reasoning` parts alone) joined to the
    assistant message after it: a Response's reasoning item begins the output item that follows it."""
    joined: list[Message] = []
    for message in messages:
        previous = joined[-1] if joined else None
        if (previous is not None and message.role == "assistant" and previous.role == "assistant"
                and previous.parts and all(part.kind == "reasoning" for part in previous.parts)):
            joined[-1] = replace(message, parts=[*previous.parts, *message.parts])
        else:
            joined.append(message)
    return joined
