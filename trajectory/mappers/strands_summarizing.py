"""Strands' `SummarizingConversationManager` compacting an agent's context with a summarization agent, as Strands' own
tracing records it: the summarization agent's run no subagent, its call marked a compaction (`LlmCall.compaction`, the
rule in trajectory/context_compaction.py).

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

Without a summarization agent the manager calls the agent's model itself (`generate_summary`, `ModelProxy(model)
.stream(…)`), bypassing the agent's tracing: no span records that call (its tokens are in no span), only the summary in
the later calls' input, a user message like any other.

Seen in a real capture: tests/captures/strands_native_summarizing (strands-agents 1.65.0, `proactive_compression`,
compacting twice in three turns, the second time the first summary among what it summarized).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
    """The call answering each summarization agent's run with the summary marked a compaction of its agent's context."""
    runs = summarizer_runs(spans)
    if not runs:
        return
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    calls = sorted(calls, key=lambda call: call.span.start_time_unix_nano)
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
