"""One LLM call reported by several instrumentations, or by several spans, is one call.

The Anthropic SDK's own span and OpenLLMetry's span of the same `messages.create` are siblings
(both under the application's span, neither the current span of the other), so the wrapper rule
(an LLM span above another LLM span is not counted again) does not see them. OpenInference's span
of `messages.create` is the parent of the SDK's, and the wrapper rule would keep the SDK's, which
records no messages: a wrapper with the response id of the span inside is left to these rules.
Two LLM spans of one trace are reports of one call when

- they carry the same response id (`gen_ai.response.id`, …, or one their emitter found elsewhere:
  OpenInference's output) and overlap in time (a test double answering every call with one id is
  not one call), or
- neither carries one (or both the same), they come from two instrumentations (scopes: one
  instrumentation does not report a call twice, and an agent may well ask the same thing twice
  at once), share the parent and the model, overlap in time and were given the same input
  (message count and last message).

A streamed call may be reported as a request span that ends when the stream starts (no answer,
no usage) and a separate span with the answer (Logfire's "streaming response" span, a sibling):
the answer completes the request it follows, of the same parent, model and input. It is one call,
priced once, not a second, unpriced one. And a report with no response id that the next report of its
parent and model repeats once it has ended, another instrumentation's with the same prompt and completion
tokens, is that call reported again: OpenLIT's google-genai span of a streamed call opens only when the
stream ends, after Google ADK's own `generate_content` span of it (no response id; no messages unless ADK's
content capture is on) has ended, beside it.

Of the reports the one kept is the one with the most to say (output, input, usage), then the
innermost in time (it starts last and ends first: the one closest to the request on the wire, as
the wrapper rule keeps the leaf). What it lacks that another report has (tool definitions, finish
reasons, system instructions, model, usage) is taken from that one: never usage added up. So are its input messages
where the other's hold media payloads its own do not (images, documents): a reference to one names that span, and the
call ids of its input's tool results where it names none and the other report, of the same messages, does
(OpenInference's LiteLLM span drops a tool message's `tool_call_id`).

An LLM span wrapping another is not counted again (the wrapper rule, trajectory/build.py), the span inside kept; where
the wrapper is another instrumentation's given the same input (`wraps_same_request`: openai-agents' `generation` span
around LiteLLM's `acompletion` when both are instrumented, as Phoenix's `register(auto_instrument=True)` does), it is
a report of that very call, and what the kept one lacks is taken from it all the same (`complete_wrapped`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from evalkit.trajectory.media import input_media
from evalkit.trajectory.operations import LlmCall, Message

SpanKey = tuple[str, str]

RESPONSE_ID_KEYS = ("gen_ai.response.id", "ai.response.id", "llm.response.id")


def response_id(call: LlmCall) -> str | None:
    """The call's response id: from an attribute named for it, else where its emitter found one."""
    attributes = call.span.attributes
    for key in RESPONSE_ID_KEYS:
        value = attributes.get(key)
        if value not in (None, ""):
            return str(value)
    return call.response_id or None


def one_response(a: LlmCall, b: LlmCall) -> bool:
    """Whether two calls report the same response (both carry its id)."""
    first = response_id(a)
    return first is not None and first == response_id(b)


def _rank(call: LlmCall) -> tuple[bool, bool, bool, int, int]:
    span = call.span
    return (bool(call.output_messages), bool(call.input_messages), not call.usage.empty,
            span.start_time_unix_nano, -span.end_time_unix_nano)


def _same_input(a: LlmCall, b: LlmCall) -> bool:
    if len(a.input_messages) != len(b.input_messages):
        return False
    if not a.input_messages:
        return True
    last_a, last_b = a.input_messages[-1], b.input_messages[-1]
    return last_a.text == last_b.text and len(last_a.parts) == len(last_b.parts)


def _repeats(later: LlmCall, report: LlmCall) -> bool:
    """Whether a report of another instrumentation, started once `report` ended, repeats its tokens (the session
    list reads the same in `_SPANS_COUNTED`, trajectory/session_list.py)."""
    return (later.span.scope_name != report.span.scope_name and bool(report.usage.input_tokens)
            and later.span.start_time_unix_nano >= report.span.end_time_unix_nano
            and (later.usage.input_tokens, later.usage.output_tokens)
            == (report.usage.input_tokens, report.usage.output_tokens))


def _media_sent(messages: list[Message]) -> int:
    """How many media parts of `messages` (a tool result's among them) hold their payload or its address."""
    return sum(1 for part in input_media(messages) if part.uri)


def _results_named(kept: list[Message], other: list[Message]) -> list[Message]:
    """`kept` (the same messages as `other`) with each tool result that names no call given the call id of `other`'s
    result at its place, the same text; `kept` itself when it has none to name (messages may be shared with other
    calls: never changed in place)."""
    if not any(part.kind == "tool_result" and not part.call_id for message in kept for part in message.parts):
        return kept
    named: list[Message] = []
    for message, same in zip(kept, other, strict=True):
        results = [part for part in same.parts if part.kind == "tool_result"]
        own = [part for part in message.parts if part.kind == "tool_result"]
        if (message.role != same.role or len(own) != len(results)
                or all(part.call_id or not result.call_id for part, result in zip(own, results, strict=True))):
            named.append(message)
            continue
        given = iter(results)
        parts = []
        for part in message.parts:
            if part.kind == "tool_result":
                result = next(given)
                if not part.call_id and result.call_id and result.text == part.text:
                    part = replace(part, call_id=result.call_id)
            parts.append(part)
        named.append(replace(message, parts=parts))
    return named


def _fill(kept: LlmCall, other: LlmCall) -> None:
    kept.model = kept.model or other.model
    kept.request_model = kept.request_model or other.request_model
    kept.provider = kept.provider or other.provider
    if kept.usage.empty:
        kept.usage = other.usage
    if kept.reported_cost is None:
        kept.reported_cost = other.reported_cost
    if not kept.input_messages or (
            len(kept.input_messages) == len(other.input_messages)
            and _media_sent(other.input_messages) > _media_sent(kept.input_messages)):
        # None recorded, or the same messages, the other report holding media this one keeps no payload of (the
        # Anthropic SDK's tracing records an image or a document as its type alone; OpenLLMetry's span holds it whole).
        kept.input_messages = other.input_messages
        kept.input_span = other.input_span or other.span
    elif len(kept.input_messages) == len(other.input_messages):
        kept.input_messages = _results_named(kept.input_messages, other.input_messages)
    if not kept.output_messages:
        kept.output_messages = other.output_messages
    kept.system_instructions = kept.system_instructions or other.system_instructions
    kept.tool_definitions = kept.tool_definitions or other.tool_definitions
    kept.finish_reasons = kept.finish_reasons or other.finish_reasons
    if kept.error is None:
        kept.error = other.error


def wraps_same_request(inner: LlmCall, wrapper: LlmCall) -> bool:
    """Whether an LLM span wrapping another reports the very request the span inside reports: another
    instrumentation's, given the same input."""
    return (inner.span.scope_name != wrapper.span.scope_name and bool(inner.input_messages)
            and _same_input(inner, wrapper))


def complete_wrapped(inner: LlmCall, wrapper: LlmCall) -> None:
    """The call the wrapper rule keeps given what it lacks that the wrapping report of its request has (`_fill`)."""
    _fill(inner, wrapper)


def may_repeat(items: list[tuple[SpanKey, LlmCall]]) -> bool:
    """Whether any rule could apply: a response id twice, two instrumentations, a call unanswered.

    Most sessions have none of these; told in one cheap pass, they cost next to nothing more."""
    if len(items) < 2:
        return False
    scope = items[0][1].span.scope_name
    ids: set[tuple[str, str]] = set()
    for key, call in items:
        if call.span.scope_name != scope or (not call.output_messages and call.usage.empty):
            return True
        value = response_id(call)
        if value is not None:
            found = (key[0], value)
            if found in ids:
                return True
            ids.add(found)
    return False


def duplicate_reports(calls: Iterable[tuple[SpanKey, LlmCall]]) -> dict[SpanKey, SpanKey]:
    """Each LLM span that reports a call another span reports too -> the span kept for that call.

    `calls` in start order. The kept call is filled in from the others (`_fill`); the caller counts
    only the kept one. One pass: a call meets only the calls of its parent still running when it
    starts, so a long agent loop of sequential calls compares nothing.
    """
    items = list(calls)
    if not may_repeat(items):
        return {}
    responses = [response_id(call) for _, call in items]
    root = list(range(len(items)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    def overlap(a: LlmCall, b: LlmCall) -> bool:
        return (a.span.start_time_unix_nano <= b.span.end_time_unix_nano
                and b.span.start_time_unix_nano <= a.span.end_time_unix_nano)

    of_response: dict[tuple[str, str], list[int]] = {}
    # Request spans that ended with no answer, no usage and no error: a streamed call's answer may follow.
    waiting: dict[tuple[str, str, str], list[int]] = {}
    previous: dict[tuple[str, str, str], int] = {}  # (trace, parent, model) -> the report that started last
    running: dict[tuple[str, str, str], list[int]] = {}  # (trace, parent, model) -> calls not yet ended
    for i, (key, call) in enumerate(items):
        response = responses[i]
        if response is not None:
            same = of_response.setdefault((key[0], response), [])
            for j in same:
                if overlap(call, items[j][1]):
                    root[find(i)] = find(j)
            same.append(i)
        span = call.span
        start = span.start_time_unix_nano
        place = (key[0], span.parent_span_id, call.request_model or call.model or "")
        if not call.output_messages and call.usage.empty and call.error is None:
            waiting.setdefault(place, []).append(i)
        elif call.output_messages and place in waiting:
            pending = waiting[place]
            request = next((j for j in reversed(pending) if _same_input(call, items[j][1])), None)
            if request is not None:
                pending.remove(request)
                root[find(i)] = find(request)
        before = previous.get(place)
        previous[place] = i
        if before is not None and responses[before] is None and _repeats(call, items[before][1]):
            root[find(i)] = find(before)
        peers = running.setdefault(place, [])
        peers[:] = [j for j in peers if items[j][1].span.end_time_unix_nano >= start]
        for j in peers:
            other = responses[j]
            peer = items[j][1]
            if (peer.span.scope_name != span.scope_name and (response is None or other is None or other == response)
                    and _same_input(call, peer)):
                root[find(i)] = find(j)
        peers.append(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(items)):
        groups.setdefault(find(i), []).append(i)
    duplicates: dict[SpanKey, SpanKey] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        kept_key, kept = max((items[i] for i in members), key=lambda item: _rank(item[1]))
        for i in members:
            key, call = items[i]
            if key != kept_key:
                _fill(kept, call)
                duplicates[key] = kept_key
    return duplicates
