"""Strands' `SummarizingConversationManager` compacting an agent's context, as Strands' own tracing records it: with a
summarization agent, that agent's run no subagent, its call marked a compaction (`LlmCall.compaction`, the rule in
trajectory/context_compaction.py); with none (the default), a compaction whose call no span records, marked on the calls
sent its summary (`LlmCall.sent_compaction`).

`Agent(conversation_manager=SummarizingConversationManager(summarization_agent=…, …))`: when the agent's context
overflows (or, with `proactive_compression`, before a model call whose projected prompt passes the threshold) the
manager hands the oldest messages to the summarization agent (`summarization_agent.messages = messages`) and asks it
`"Please summarize this conversation."` (`_generate_summary_with_agent`), then replaces those messages in the agent's
history by the answer as a user message of its text alone (`as_user_summary`), the latest ones kept after it. The
summarization agent runs inside the agent's event-loop cycle, before the cycle's model call: its `invoke_agent` span is
a child of the agent's `execute_event_loop_cycle` span (an agent a tool runs is under an `execute_tool` span instead),
recording that request as its prompt, with no `session.id` of its own. Its chat span's input is the messages summarized
and the request; the agent's next call (in the same cycle) is sent the summary, then the messages kept.

So that run is the agent's bookkeeping, not an agent the agent delegated to: no subagent (`summarizer_runs`, the
registry's `orchestrator_runs`), its call a step of the agent's trajectory, marked a compaction by
`SummarizingConversationManager`, written by the summarization agent (named), with how many messages it summarized
(its input's, the request and instructions aside) and kept (what the agent's next call is sent after the summary)
(`complete_calls`). The shared rule does the rest: the request and the summarization agent's instructions no steps,
the summary re-sent no user step.

Without a summarization agent the manager calls the agent's model itself (`generate_summary`: `ModelProxy(agent
.aux_model or agent.model).stream(…)` with `DEFAULT_SUMMARIZATION_PROMPT`, the messages and the same request), on
purpose outside the agent's pipeline and so its tracing: no span records that call, nor its tokens (which only the
agent's run's usage counts). What the spans hold is its trace on the cycle it happened in: the cycle's span restates the
agent's history when the cycle starts (its message events), its chat span is sent the history after (the summary, a
user message of its text alone, in place of the messages summarized, the latest kept). Read so
(`_mark_model_summaries_sent`): the compaction, by the manager, with how many messages it replaced and kept (Strands
messages, a batch of tool results one), when its cycle started; every call sent the summary marked sent it. The shared
rule makes it a step of no LLM call, the summary its message, where it happened, and the summary sent no user step
(before: a user step no one typed).

Seen in real captures: tests/captures/strands_native_summarizing (a summarization agent) and
tests/captures/strands_native_summarizing_default (none) (strands-agents 1.65.0, `proactive_compression`, compacting
twice in three turns, the second time the first summary among what it summarized; the default's also read under the
latest conventions, not kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers.messages import parse_message, parse_messages
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.mappers.strands import SCOPE
from evalkit.trajectory.operations import ContextCompaction, LlmCall, Message
from evalkit.trajectory.span import Span

SpanKey = tuple[str, str]

# What the manager asks its summarization agent (summarizing_conversation_manager.py `_generate_summary_with_agent`;
# `generate_summary` asks the model the same), and the manager's name.
SUMMARY_REQUEST = "Please summarize this conversation."
MANAGER = "SummarizingConversationManager"
_CYCLE = "execute_event_loop_cycle"
_AGENT_RUN = "invoke_agent"
# Where a Strands run span records its prompt: an event a message under its default conventions (`content`: the
# message's Bedrock blocks), the input messages under the latest ones (on the span or its details event).
_USER_MESSAGE_EVENT = "gen_ai.user.message"
_INPUT_MESSAGES = "gen_ai.input.messages"
# How a cycle span restates the agent's messages: one event a message (default conventions), or the messages on its
# details event (the latest); its `gen_ai.choice` event, the cycle's answer, after them.
_MESSAGE_EVENTS = {"gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant",
                   "gen_ai.tool.message": "tool"}
_DETAILS = "gen_ai.client.inference.operation.details"
_CHOICE = "gen_ai.choice"


def _last_text(value: object, key: str) -> str | None:
    """The text of the last block of a message's blocks (`key`: the text's key, "text" in a Bedrock block, "content"
    in a GenAI part)."""
    blocks = parse_json(value) if isinstance(value, str) else value
    if not isinstance(blocks, list) or not blocks or not isinstance(blocks[-1], dict):
        return None
    text = blocks[-1].get(key)
    return text if isinstance(text, str) else None


def _prompt(span: Span) -> str | None:
    """What a Strands `invoke_agent` span records it was asked: its last user message's text."""
    recorded = span.attributes.get(_INPUT_MESSAGES)
    for event in span.events:
        if event.name == _USER_MESSAGE_EVENT:
            return _last_text(event.attributes.get("content"), "text")
        recorded = recorded or event.attributes.get(_INPUT_MESSAGES)
    messages = parse_json(recorded) if isinstance(recorded, str) else None
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    return _last_text(messages[-1].get("parts"), "content")


def summarizer_runs(spans: Sequence[Span]) -> set[SpanKey]:
    """The summarization agents' runs, by (trace id, span id): each a Strands `invoke_agent` span right under another
    agent's event-loop cycle, asked the manager's summary request."""
    cycles = {(span.trace_id, span.span_id) for span in spans if span.scope_name == SCOPE and span.name == _CYCLE}
    if not cycles:
        return set()
    return {(span.trace_id, span.span_id) for span in spans
            if span.scope_name == SCOPE and (span.trace_id, span.parent_span_id) in cycles
            and span.attributes.get("gen_ai.operation.name") == _AGENT_RUN and _prompt(span) == SUMMARY_REQUEST}


def _conversation(messages: list[Message]) -> list[Message]:
    return [message for message in messages if message.role != "system"]


def _kept_after(summary: str, call: LlmCall) -> int | None:
    """How many messages the agent's call is sent after the summary: those the manager kept."""
    conversation = _conversation(call.input_messages)
    at = next((index for index, message in enumerate(conversation)
               if message.role == "user" and message.text.strip() == summary), None)
    return None if at is None else len(conversation) - at - 1


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each compaction by the manager marked: the call answering a summarization agent's run with the summary, or,
    with none, the calls sent a summary no span records the call of."""
    calls = sorted(calls, key=lambda call: call.span.start_time_unix_nano)
    runs = summarizer_runs(spans)
    if runs:
        _mark_summarization_agents_calls(spans, calls, runs)
    _mark_model_summaries_sent(spans, calls, runs)


def _mark_summarization_agents_calls(spans: Sequence[Span], calls: list[LlmCall], runs: set[SpanKey]) -> None:
    """The call answering each summarization agent's run with the summary marked a compaction of its agent's context."""
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    # A call's run: its cycle's parent (Strands puts a chat span right under its agent's event-loop cycle span).
    in_run: dict[SpanKey, list[LlmCall]] = {}
    in_cycle: dict[SpanKey, list[LlmCall]] = {}
    for call in calls:
        cycle = by_key.get((call.span.trace_id, call.span.parent_span_id))
        if cycle is None:
            continue
        in_cycle.setdefault((cycle.trace_id, cycle.span_id), []).append(call)
        holder = (cycle.trace_id, cycle.parent_span_id)
        if holder in runs:
            in_run.setdefault(holder, []).append(call)
    for run_key, run_calls in in_run.items():
        first, answering = run_calls[0], run_calls[-1]
        asked = _conversation(first.input_messages)
        run = by_key[run_key]
        name = run.attributes.get("gen_ai.agent.name")
        compaction = ContextCompaction(MANAGER, agent=name if isinstance(name, str) and name else None)
        if asked and asked[-1].text == SUMMARY_REQUEST:
            compaction.summarized_messages = len(asked) - 1
        # The agent's call its cycle makes after the summary: sent the summary and the messages kept.
        summary = answering.output_messages[-1].text.strip() if answering.output_messages else ""
        following = next((call for call in in_cycle.get((run.trace_id, run.parent_span_id), ())
                          if call.span.start_time_unix_nano >= run.end_time_unix_nano), None)
        if summary and following is not None:
            compaction.kept_messages = _kept_after(summary, following)
        answering.compaction = compaction


def _key(message: Message) -> tuple[object, ...]:
    """A message as compared between a cycle's restated history and its call's input (both read from the same
    blocks)."""
    return (message.role, *((part.kind, part.text, part.call_id, part.name) for part in message.parts))


def _restated_history(cycle: Span) -> list[Message]:
    """The agent's conversation as its event-loop cycle span restates it when the cycle starts, before the manager
    compacts it within the cycle: its message events before the cycle's `gen_ai.choice` (default conventions), or its
    first details event's input messages (the latest)."""
    history: list[Message] = []
    for event in cycle.events:
        role = _MESSAGE_EVENTS.get(event.name)
        if role is not None:
            message = parse_message({"role": role, "content": parse_json(event.attributes.get("content"))}, role)
            if message is not None:
                history.append(message)
        elif event.name == _DETAILS:
            return _conversation(parse_messages(event.attributes.get(_INPUT_MESSAGES)))
        elif event.name == _CHOICE:
            break
    return history


def _message_events(span: Span) -> list[tuple[str, object]]:
    """A Strands span's message events as recorded (default conventions), up to its answer's."""
    events: list[tuple[str, object]] = []
    for event in span.events:
        if event.name == _CHOICE:
            break
        if event.name in _MESSAGE_EVENTS:
            events.append((event.name, event.attributes.get("content")))
    return events


def _sent_as_restated(cycle: Span, chat: Span) -> bool:
    """Whether a chat span's messages are its cycle's, event for event (the usual: no compaction between), as the
    recorded text says: no message read. Under the latest conventions (no message events) the messages are read."""
    restated = _message_events(cycle)
    return bool(restated) and restated == _message_events(chat)


def _replaced(before: list[Message], after: list[Message]) -> tuple[int, int, int] | None:
    """Where `after` (a call's conversation) is `before` (the history its cycle started with) with a run of messages
    replaced by one user message of text found nowhere in `before`, the manager's summary (`agent.messages[:] = pinned
    + [summary] + remaining`): (its index, how many it replaced, how many after it were kept); None otherwise."""
    if not after or len(after) > len(before):
        return None
    old, new = [_key(message) for message in before], [_key(message) for message in after]
    pinned = 0
    while pinned < len(new) - 1 and new[pinned] == old[pinned]:
        pinned += 1
    kept = 0
    while pinned + kept < len(new) - 1 and kept < len(old) - pinned - 1 and new[-1 - kept] == old[-1 - kept]:
        kept += 1
    summary = after[pinned]
    if pinned + 1 + kept != len(new) or summary.role != "user" or not summary.text or summary.tool_results \
            or new[pinned] in old:
        return None
    return pinned, len(old) - pinned - kept, kept


def _at(call: LlmCall, summary: str) -> int | None:
    """The index, among the call's input messages, of a user message of the summary's text alone."""
    return next((index for index, message in enumerate(call.input_messages)
                 if message.role == "user" and message.text == summary and not message.tool_results), None)


def _mark_model_summaries_sent(spans: Sequence[Span], calls: list[LlmCall], runs: set[SpanKey]) -> None:
    """The agent's calls sent a summary the manager had the agent's model write (no summarization agent), marked sent
    that compaction (`LlmCall.sent_compaction`, trajectory/context_compaction.py).

    No span holds that call: `generate_summary` streams from the model outside the agent's tracing. Its trace is the
    cycle it happened in: the cycle's span restates the history when it starts, its chat span is sent the history after
    (the summary in place of the messages summarized, the latest kept). Both are Strands messages (a batch of tool
    results one message): what the counts count. A cycle holding a summarization agent's run is that run's compaction
    (its call recorded, marked above), not one of no call.
    """
    with_agent = {(span.trace_id, span.parent_span_id) for span in spans if (span.trace_id, span.span_id) in runs}
    cycles = {(span.trace_id, span.span_id): span for span in spans if span.scope_name == SCOPE
              and span.name == _CYCLE and (span.trace_id, span.span_id) not in with_agent}
    compactions: list[ContextCompaction] = []
    for call in calls:
        if call.span.scope_name != SCOPE:
            continue
        cycle = cycles.get((call.span.trace_id, call.span.parent_span_id))
        if cycle is not None and not _sent_as_restated(cycle, call.span):
            replaced = _replaced(_restated_history(cycle), _conversation(call.input_messages))
            if replaced is not None:
                at, summarized, kept = replaced
                summary = _conversation(call.input_messages)[at].text
                compactions.append(ContextCompaction(MANAGER, summarized_messages=summarized, kept_messages=kept,
                                                     time_ns=cycle.start_time_unix_nano, summary=summary))
        # This call and each later one sent a summary: marked, its step made once (`Summaries.first_sent`).
        for compaction in reversed(compactions):
            index = _at(call, compaction.summary or "")
            if index is not None:
                call.sent_compaction, call.sent_compaction_at = compaction, index + 1
                break
