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

Seen in real captures: tests/captures/openai-sdk_openinference_responses (previous_response_id) and
openai-agents_openinference_server-conversation (openai-agents: previous_response_id and conversation).
"""

from __future__ import annotations

from evalkit.trajectory.operations import LlmCall, Message
from evalkit.trajectory.span import Span

OPENINFERENCE_SCOPE = "openinference.instrumentation.openai"
_RESPONSES_SPAN = "Response"  # openai.types.responses.Response, the Responses API's answer


def is_openinference_response(span: Span) -> bool:
    """A Responses API call's span (not a Chat Completions one) under OpenInference's openai instrumentation."""
    return span.scope_name == OPENINFERENCE_SCOPE and span.name == _RESPONSES_SPAN


def read_response(call: LlmCall) -> None:
    """A Responses API call's span read as the API means it: its output items, each an output message, the one
    assistant answer they are; its input all new when the call continues the API's state."""
    merge_output_items(call)
    call.input_all_new = continues_server_state(call.extra.get("request"))


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
