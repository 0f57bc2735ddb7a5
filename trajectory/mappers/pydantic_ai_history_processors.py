"""pydantic-ai's history processors summarizing a conversation with an agent of their own, as pydantic-ai's own
instrumentation records them: that agent's run no subagent, its call a compaction of the agent's context
(`LlmCall.compaction`, the rule in trajectory/context_compaction.py).

A history processor (`ProcessHistory(processor)`, pydantic-ai 2.x's capability; `history_processors=` before) runs in
the model request's `before_model_request` hook, before every request, and replaces the run's history with what it
returns: the model is sent that, and `all_messages()` is that too, so the next turn starts from it. The docs'
`summarize_old_messages` has a second agent summarize the older messages (`summarize_agent.run(message_history=
oldest)`, no prompt) and returns that run's `new_messages()` (an empty request carrying the summarizer's instructions,
then its answer) and the latest message: the model is sent the summary as an assistant message, then the question.

The hook runs inside the request's span: the summarizer's `invoke_agent` span is a child of the agent's `chat` span,
started before the request is sent, with the conversation id of the history it was given (the agent's). Nothing on
any span says "history processor": pydantic-ai runs a capability's request hooks (`before_model_request`,
`prepare_model_request`, `compact_history`) all inside that span, and names none of them. What the spans do say is
that the agent run under the call's span answered with a text that the call is then sent as one of its messages, in
place of the messages that run was given: the call's context replaced by that run's summary of it. Read so:

- the run is the agent's bookkeeping, not an agent it delegated to (an agent a tool runs is under an `execute_tool`
  span): no subagent (`summarizer_runs`, the registry's `orchestrator_runs`); its call a step of the agent's
  trajectory (a call under another agent's run under a call's span is never that call reported again:
  `build._map_session`);
- its answering call a compaction (`complete_calls`), written by that agent (named), by nothing named (the spans do
  not say which hook ran it), with how many messages it summarized (its call's conversation) and kept (what the
  agent's call is sent after the summary);
- the agent's call sent when the summarizer's run ended (`LlmCall.sent_ns`), not when its span started: its question
  and answer after the compaction, and the summary it is sent known by then as that compaction's;
- the shared rule does the rest: its instructions no system step, the messages it was given seen before, the summary
  re-sent no step.

A run under a call's span whose answer the call is not sent (a processor's agent that only classifies or filters) is
left a subagent, as any.

Trimming alone (the docs' `keep_recent_messages`) needs no rule: the model is sent a window of messages seen before
(the builder's usual rule), and the question asked anew after it.

Seen in a real capture: tests/captures/pydantic-ai_openai_history-processor (pydantic-ai-slim 2.78.0, OpenAI chat:
`keep_recent_messages` for three turns, `summarize_old_messages` for the fourth).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import ContextCompaction, LlmCall, Message
from evalkit.trajectory.span import Span

SpanKey = tuple[str, str]

_SCOPES = ("pydantic-ai", "pydantic_ai")
_OPERATION = "gen_ai.operation.name"
_AGENT_RUN = "invoke_agent"
_CALL = "chat"
_INPUT_MESSAGES = "gen_ai.input.messages"


def _key(span: Span) -> SpanKey:
    return span.trace_id, span.span_id


def _answer(run: Span) -> str | None:
    """What an agent run answered (its `final_result`), where it is text."""
    final = run.attributes.get("final_result")
    if not isinstance(final, str):
        return None
    decoded = parse_json(final)
    return (decoded if isinstance(decoded, str) else final).strip() or None


def _conversation(messages: Iterable[Message]) -> list[Message]:
    return [message for message in messages if message.role != "system"]


def _sent_at(messages: Sequence[Message], answer: str) -> int | None:
    """The index of the message of the answer's text alone among a call's conversation, if it was sent it."""
    return next((index for index, message in enumerate(messages)
                 if not message.tool_calls and not message.tool_results and message.text.strip() == answer), None)


def summarizer_runs(spans: Sequence[Span]) -> dict[SpanKey, SpanKey]:
    """The runs of an agent a history processor had summarize the conversation, each by (trace id, span id), with the
    call (its span's key) sent their summary: a pydantic-ai `invoke_agent` span right under another agent's `chat`
    span, whose answer that call is sent as a message."""
    calls = {_key(span): span for span in spans
             if span.scope_name in _SCOPES and span.attributes.get(_OPERATION) == _CALL}
    if not calls:
        return {}
    found: dict[SpanKey, SpanKey] = {}
    for span in spans:
        if span.scope_name not in _SCOPES or span.attributes.get(_OPERATION) != _AGENT_RUN:
            continue
        call = calls.get((span.trace_id, span.parent_span_id))
        answer = _answer(span)
        if call is None or answer is None:
            continue
        if _sent_at(_conversation(parse_messages(call.attributes.get(_INPUT_MESSAGES))), answer) is not None:
            found[_key(span)] = _key(call)
    return found


def orchestrator_runs(spans: Sequence[Span]) -> set[SpanKey]:
    """The summarizers' runs, no subagents: their calls are steps of the run holding them (the registry's hook)."""
    return set(summarizer_runs(spans))


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each summarizer's answering call marked a compaction of the context of the call it was run for."""
    runs = summarizer_runs(spans)
    if not runs:
        return
    by_key = {_key(span): span for span in spans}
    by_call = {_key(call.span): call for call in calls}
    for run_key, sent_key in runs.items():
        run = by_key[run_key]
        answer = _answer(run)
        own = sorted((call for call in by_call.values() if (call.span.trace_id, call.span.parent_span_id) == run_key),
                     key=lambda call: call.span.start_time_unix_nano)
        answering = next((call for call in reversed(own)
                          if call.output_messages and call.output_messages[-1].text.strip() == answer), None)
        if answering is None or answer is None:
            continue
        name = run.attributes.get("gen_ai.agent.name")
        # What it summarized: the conversation its first call was given (no prompt: the docs' processor asks none).
        compaction = ContextCompaction(agent=name if isinstance(name, str) and name else None,
                                       summarized_messages=len(_conversation(own[0].input_messages)))
        sent = by_call.get(sent_key)
        if sent is not None:
            # Its request was sent once the processor was done: after the summarizer's run, not when its span started.
            sent.sent_ns = max(sent.sent_ns or 0, run.end_time_unix_nano)
            conversation = _conversation(sent.input_messages)
            at = _sent_at(conversation, answer)
            if at is not None:
                compaction.kept_messages = len(conversation) - at - 1
        answering.compaction = compaction
