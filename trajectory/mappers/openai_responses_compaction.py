"""The Responses API's compaction (`responses.compact`) of an openai-agents session, as OpenInference's openai-agents
instrumentation records it: in no span of its own, only in the later calls sent its output (`complete_calls`, the
shared rule in trajectory/context_compaction.py).

openai-agents' `OpenAIResponsesCompactionSession` (agents/memory/openai_responses_compaction_session.py) wraps a session
store. After a turn is stored, once its decision hook approves (by default: 10 stored items other than user messages and
compactions), it calls `client.responses.compact` with the OpenAI client (the `previous_response_id` of the turn's last
response, or the stored items as `input`), and replaces the stored history by the answer: every user message of the
conversation, then one `compaction` item (`id`, `encrypted_content`: the summary, encrypted, readable by OpenAI alone).
That call is in no span: the SDK's tracing has no span for it (the session calls the client itself) and OpenInference's
processor sees only the SDK's spans; its tokens go to the run's usage, which no span records either.

What the spans record is the next calls' input: `input.value`, the items as sent (the user messages, the compaction
item, the new question), while `llm.input_messages` leaves the item out ("TODO: Handle compaction response" in
`_get_attributes_from_input`; its index unused). Without this rule the first call of the turn after a compaction, sent
no answer, starts its run afresh: the earlier questions re-sent before the item are asked again, and nothing shows the
compaction. So, for each `response` call sent a compaction item that no call's answer holds (server-side compaction,
`context_management`, answers with one: that is the answering call's, not this rule's):

- the compaction is `ContextCompaction(by="responses.compact")`, its item's id and length, the items it summarized (of
  the conversation the last call before it was sent and answered, all but the user messages: what the item stands
  for), the user messages it kept, and when it happened: after that last call ended (the SDK compacts as it stores a
  turn, inside the run that ran it);
- every call sent it (`LlmCall.sent_compaction`), its input messages before the first after the re-sent user messages
  (`sent_compaction_at`, the instructions counted) being that output: no question.

Seen in a real capture: tests/captures/openai-agents_openinference_compaction (openai-agents 0.25.0, the session on
its defaults, compacting after the second of three turns).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.openai_sdk import is_openai_agents_response
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from evalkit.trajectory.span import Span

COMPACT = "responses.compact"  # the Responses API's compaction endpoint, as the OpenAI client names it
_COMPACTION_ITEM = "compaction"


def _items(value: object, key: str | None = None) -> list[dict[str, Any]]:
    """The items a call was sent (`input.value`, a list) or answered (`output.value`'s Response, `key` "output")."""
    parsed = parse_json(value)
    if key is not None:
        parsed = parsed.get(key) if isinstance(parsed, dict) else None
    return [item for item in parsed if isinstance(item, dict)] if isinstance(parsed, list) else []


def _is_user_message(item: dict[str, Any]) -> bool:
    return item.get("role") == "user" and item.get("type", "message") == "message"


def _item_id(item: dict[str, Any]) -> str:
    """The compaction item's id; the API gives one, a request may send the item without (its content's digest)."""
    given = item.get("id")
    if isinstance(given, str) and given:
        return given
    return "compaction-" + hashlib.sha256(str(item.get("encrypted_content")).encode()).hexdigest()[:16]


def _resent_until(call: LlmCall, kept: int) -> int | None:
    """The index of the call's first input message after the `kept` user messages the compaction re-sends (its
    instructions before them), None where its messages are not those (then nothing is marked)."""
    at = 0
    while at < len(call.input_messages) and call.input_messages[at].role == "system":
        at += 1
    resent = call.input_messages[at:at + kept]
    if len(resent) != kept or any(message.role != "user" for message in resent):
        return None
    return at + kept


def _summarized(previous: LlmCall | None) -> int | None:
    """The items of the conversation the last call before the compaction was sent and answered, the user messages and
    earlier compactions aside: what the compaction item stands for."""
    if previous is None:
        return None
    conversation = [*_items(previous.span.attributes.get("input.value")),
                    *_items(previous.span.attributes.get("output.value"), "output")]
    return sum(1 for item in conversation if not _is_user_message(item) and item.get("type") != _COMPACTION_ITEM)


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each openai-agents `response` call sent a compaction item no call answered with, marked sent that compaction
    (`LlmCall.sent_compaction`)."""
    responses = sorted((call for call in calls if is_openai_agents_response(call.span)),
                       key=lambda call: call.span.start_time_unix_nano)
    compactions: dict[str, ContextCompaction] = {}
    for position, call in enumerate(responses):
        sent = call.span.attributes.get("input.value")
        if not isinstance(sent, str) or f'"{_COMPACTION_ITEM}"' not in sent:
            continue  # most calls: no compaction item (a cheap test before the items are parsed)
        items = _items(sent)
        at = next((index for index, item in enumerate(items) if item.get("type") == _COMPACTION_ITEM), None)
        if at is None or not all(_is_user_message(item) for item in items[:at]):
            continue
        resent_until = _resent_until(call, at)
        if resent_until is None:
            continue
        item_id = _item_id(items[at])
        compaction = compactions.get(item_id)
        if compaction is None:
            earlier = responses[:position]
            answered = any(item_id in str(other.span.attributes.get("output.value") or "") for other in earlier)
            if answered:
                continue  # the provider compacted within a call's answer: that call's, not a compaction of no span
            previous = next((other for other in reversed(earlier)
                             if other.span.end_time_unix_nano <= call.span.start_time_unix_nano
                             and item_id not in str(other.span.attributes.get("input.value") or "")), None)
            content = items[at].get("encrypted_content")
            compaction = compactions[item_id] = ContextCompaction(
                COMPACT, summarized_messages=_summarized(previous), item_id=item_id,
                encrypted_chars=len(content) if isinstance(content, str) else None, kept_user_messages=at,
                time_ns=previous.span.end_time_unix_nano if previous is not None else None)
        call.sent_compaction = compaction
        call.sent_compaction_at = resent_until
