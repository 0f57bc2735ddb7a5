"""The OpenAI SDK's Responses API calls as OpenLLMetry's openai instrumentation records them.

opentelemetry-instrumentation-openai (0.62) reports a `client.responses.create` call, streamed or not, as an
`openai.response` span under its `opentelemetry.instrumentation.openai.v1` scope, the messages in the GenAI form
(`responses_wrappers._set_responses_json_messages`). Two of its ways need reading back:

- a `reasoning` output item's summary is written as one reasoning part holding the summary's JSON
  (`json.dumps([{"type": "summary_text", "text": …}])`), not its text: the part is the text the summary shows;
- a `function_call` item is named by the item's own `id` (the API's `fc_…`), in the answer and in the re-sent
  history alike (`id or call_id`), where its `call_id` (`call_…`) belongs: the `function_call_output` the model is
  sent for it names the `call_id`, so no result in the history is on a call. Nowhere does one of its spans hold
  both ids of a call, so the call ids cannot be restored to the answer's calls; the history's results are named
  by the item ids instead: the Responses API requires every call's output after it, so the results no call names
  answer, in order, the calls no result names (`item_ids_on_results`). A tool span that names the `call_id` is
  matched to its call by name and arguments (`build._Context.tool_execution`).

Re-sent `reasoning` items are not written in the input at all (only messages, function calls and their outputs are),
so a call's history holds no copy of the reasoning before it.

Seen in a real capture: tests/captures/openai-sdk_openllmetry_reasoning (o4-mini, effort medium, summary auto).
"""

from __future__ import annotations

from dataclasses import replace

from evalkit.trajectory.mappers.messages import parse_json
from evalkit.trajectory.mappers.openai_sdk import reasoning_item_text
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

SCOPE = "opentelemetry.instrumentation.openai.v1"
_RESPONSES_SPAN = "openai.response"  # `responses_wrappers.SPAN_NAME`; a Chat Completions call's is `openai.chat`
_SUMMARY_JSON = '[{"'  # how json.dumps writes a non-empty summary list


def is_responses_call(span: Span) -> bool:
    """A Responses API call's span (not a Chat Completions one) under OpenLLMetry's openai instrumentation."""
    return span.scope_name == SCOPE and span.name == _RESPONSES_SPAN


def read_response(call: LlmCall) -> None:
    """A Responses call's span read as the API means it: each reasoning part the text its summary shows, each
    result of the re-sent history on its call."""
    call.output_messages = [_summary_texts(message) for message in call.output_messages]
    call.input_messages = item_ids_on_results(call.input_messages)


def _summary_texts(message: Message) -> Message:
    if not any(part.kind == "reasoning" and (part.text or "").startswith(_SUMMARY_JSON) for part in message.parts):
        return message
    return replace(message, parts=[_summary_text(part) for part in message.parts])


def _summary_text(part: Part) -> Part:
    """A reasoning part holding a summary's JSON list, as the text it shows; any other part as it is."""
    if part.kind != "reasoning" or not (part.text or "").startswith(_SUMMARY_JSON):
        return part
    summary = parse_json(part.text)
    if not isinstance(summary, list) or not all(isinstance(item, dict) and "text" in item for item in summary):
        return part  # reasoning text that only looks like JSON: as written
    return replace(part, text=reasoning_item_text({"summary": summary}))


def item_ids_on_results(messages: list[Message]) -> list[Message]:
    """The re-sent history with each result named by the id its call was recorded under.

    The calls carry their items' ids (`fc_…`), the results the calls' `call_id`s (`call_…`): each result no call
    names answers the next call no result names, in order (the API takes a call's output only after the call). Left
    as recorded unless they pair one for one. The messages are the memo's, shared with other calls: changed ones are
    new messages.
    """
    calls = [part.call_id for message in messages for part in message.parts
             if part.kind == "tool_call" and part.call_id is not None]
    named = set(calls)
    unclaimed = [part.call_id for message in messages for part in message.parts
                 if part.kind == "tool_result" and part.call_id is not None and part.call_id not in named]
    if not unclaimed:
        return messages
    answered = {part.call_id for message in messages for part in message.parts if part.kind == "tool_result"}
    unanswered = [call_id for call_id in calls if call_id not in answered]
    if len(unanswered) != len(unclaimed) or len(set(unclaimed)) != len(unclaimed):
        return messages  # not the one-for-one naming: left as recorded
    renamed = dict(zip(unclaimed, unanswered, strict=True))
    repaired: list[Message] = []
    for message in messages:
        if any(part.kind == "tool_result" and part.call_id in renamed for part in message.parts):
            message = replace(message, parts=[
                replace(part, call_id=renamed[part.call_id]) if part.kind == "tool_result" and part.call_id in renamed
                else part for part in message.parts])
        repaired.append(message)
    return repaired
