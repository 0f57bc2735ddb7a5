"""The OpenAI Python SDK's calls as OpenInference's openai instrumentation records them.

`openinference-instrumentation-openai` names a call's span after the type the SDK parses the answer into
(`ChatCompletion`, `Response`). A Responses API answer (`client.responses.create`, streamed or not) is a list of
output items: its text a `message` item, each function call a `function_call` item of its own. The
instrumentation writes every item as an output message of its own (`_ResponsesApiAttributes`: item i is
`llm.output_messages.<i>`, a function call the message's `tool_calls.0`), so two parallel function calls are two
output messages. They are one answer: the API has no `n`, a response is never several choices (what several output
messages of a `ChatCompletion` span are). The items it re-sends as input are split the same way; the builder
already knows an answer re-sent as items (`build._Context._already_produced`).

A Responses call may continue the conversation the API keeps (`previous_response_id`): its input then holds only
the new items (a question, the outputs of the previous response's function calls), and the model is shown each of
them anew even where an earlier call was shown the same. The instrumentation records the parameter in
`llm.invocation_parameters` (every request parameter but the input, instructions and tools), read by the
OpenInference mapper into the call's `extra["request"]`.

Seen in a real capture: tests/captures/openai-sdk_openinference_responses.
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
    assistant answer they are; its input all new when the call continues a previous response."""
    merge_output_items(call)
    request = call.extra.get("request")
    call.input_all_new = isinstance(request, dict) and bool(request.get("previous_response_id"))


def merge_output_items(call: LlmCall) -> None:
    """A Responses answer recorded one output message per output item (OpenInference's Python instrumentation and
    @openai/agents' JavaScript one alike) is one assistant answer: the API has no `n`."""
    outputs = call.output_messages
    if len(outputs) > 1 and all(message.role == "assistant" for message in outputs):
        call.output_messages = [Message("assistant", [part for message in outputs for part in message.parts])]
