"""LiteLLM's calls named by the provider's own tool call ids.

LiteLLM's OpenTelemetry callback (1.110) writes an answer's tool calls flat on the call's span,
`gen_ai.completion.<i>.function_call.{name,arguments}`, without the ids the model gave them. Those ids are recorded
on two other kinds of span:

- the call's `raw_gen_ai_request` child, for a call not streamed: the provider's response (`llm.<provider>.choices`,
  an OpenAI-compatible one's; `llm.anthropic.content`, Anthropic's content blocks);
- every later call's span, whose history (`gen_ai.input.messages`) re-sends the answer with its ids (an OpenAI
  `tool_calls` list beside the parts) and the tool results naming them (`tool_call_id`): the only record of a
  streamed call's ids (its raw child holds no response).

`complete_calls` gives each answer's tool calls those ids, its own response's first, else those of the first later
call re-sending its messages and then this answer: the re-sent answer is then the answer (the builder knows a re-sent
message by its calls' ids), and each result names its call by the id the model gave it.

An answer re-sent by no call, streamed, keeps no id (the builder names its calls by span and position); where such an
answer's calls are re-sent all the same (a history the app changed, so not found as re-sending the call's messages),
the re-sent ids no call was given are dropped, and each result of one is named after its call: the re-sent answer is
still recognised as the one produced, its results paired with its calls by name, in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import litellm
from evalkit.trajectory.mappers.litellm_raw_request import raw_requests
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each LiteLLM call's tool calls given the ids the provider gave them, where any span of the session records them
    (in place: a call's output messages are its own, never the message memo's)."""
    ordered = sorted((call for call in calls if call.emitter == litellm.NAME),
                     key=lambda call: (call.span.start_time_unix_nano, call.span.span_id))
    unnamed = [(index, answer) for index, call in enumerate(ordered)
               if (answer := _answer(call)) is not None and not any(part.call_id for part in answer.tool_calls)]
    if not unnamed:
        return
    responses = {(r.call.span.trace_id, r.call.span.span_id): r for r in raw_requests(spans, ordered)}
    left: list[Message] = []
    for index, answer in unnamed:
        call = ordered[index]
        request = responses.get((call.span.trace_id, call.span.span_id))
        response = request.answer() if request is not None else None
        ids = _ids_of(answer, response) if response is not None else None
        if ids is None:
            ids = _resent_ids(call, answer, ordered[index + 1:])
        if ids is None:
            left.append(answer)
            continue
        calls_made = iter(ids)
        answer.parts[:] = [replace(part, call_id=next(calls_made)) if part.kind == "tool_call" else part
                           for part in answer.parts]
    if left:
        given = {part.call_id for call in ordered for message in call.output_messages
                 for part in message.tool_calls if part.call_id}
        for call in ordered:
            call.input_messages = _without_call_ids_not_given(call.input_messages, given)


def _answer(call: LlmCall) -> Message | None:
    """The call's answer where it called tools."""
    return next((m for m in call.output_messages if m.role == "assistant" and m.tool_calls), None)


def _ids_of(answer: Message, recorded: Message) -> list[str] | None:
    """The ids of `recorded`'s tool calls, where it is `answer` (the same text and calls) and names every call."""
    if recorded.role != "assistant" or recorded.text.strip() != answer.text.strip():
        return None
    if _calls(recorded) != _calls(answer):
        return None
    ids = [part.call_id for part in recorded.tool_calls]
    if not all(ids) or len(set(ids)) != len(ids):
        return None
    return [str(call_id) for call_id in ids]


def _calls(message: Message) -> list[tuple[str | None, Any]]:
    return [(part.name, part.arguments) for part in message.tool_calls]


def _resent_ids(call: LlmCall, answer: Message, later: Iterable[LlmCall]) -> list[str] | None:
    """The ids of `answer` as the first later call re-sending `call`'s messages re-sends it after them (None: no call
    does, or the message there is not this answer)."""
    sent = call.input_messages
    if not sent:
        return None
    for other in later:
        resent = other.input_messages
        if len(resent) <= len(sent) or not all(_same(a, b) for a, b in zip(sent, resent, strict=False)):
            continue
        return _ids_of(answer, resent[len(sent)])
    return None


def _same(sent: Message, resent: Message) -> bool:
    """Whether a message of a later call's history is one a call sent (most often the very object: the memo)."""
    if sent is resent:
        return True
    return sent.role == resent.role and sent.text.strip() == resent.text.strip() and _named(sent) == _named(resent)


def _named(message: Message) -> list[tuple[str, str | None, str | None]]:
    return [(part.kind, part.call_id, part.name) for part in message.parts if part.kind in ("tool_call", "tool_result")]


def _without_call_ids_not_given(messages: list[Message], given: set[str]) -> list[Message]:
    """The messages with the tool call ids no call was given dropped, each result of one named after its call, so that
    a re-sent answer whose calls have no id is the one produced and its results still find them. New messages, not
    changed ones: a re-sent message may be the very object an earlier call's input holds (the message memo)."""
    names: dict[str, str] = {}
    changed: list[Message] = []
    for message in messages:
        parts = message.parts
        if any(part.call_id and part.call_id not in given and part.kind in ("tool_call", "tool_result")
               for part in parts):
            parts = [_without_id(part, names) if part.call_id not in given else part for part in parts]
            message = replace(message, parts=parts)
        changed.append(message)
    return changed


def _without_id(part: Part, names: dict[str, str]) -> Part:
    if part.kind == "tool_call" and part.call_id:
        if part.name:
            names[part.call_id] = part.name
        return replace(part, call_id=None)
    if part.kind == "tool_result" and part.call_id and not part.name:
        return replace(part, name=names.get(part.call_id))
    return part
