"""Context compaction: an agent's framework replacing the conversation its model is sent by a summary of it.

When an agent's history grows past a threshold, its framework has a model summarize the older messages (an LLM call of
its own, asked in the framework's summary prompt, the messages summarized in it) and sends the agent's later calls the
summary, wrapped in a message of its own ("Here is a summary of the conversation to date:" and the summary, LangChain's
`SummarizationMiddleware`), and the latest messages it kept, instead of the messages summarized. A trajectory holds what
happened, not what the model was last sent: every question, answer and tool result stays where it happened, and the
compaction is one more step where it happened.

The rule every emitter's compaction shares, given the call its mapper marks (`LlmCall.compaction`; for LangChain,
`mappers/langchain_summarization.py`):

- the call's step is an agent step of its LLM call (priced as any), its message the summary the model wrote, marked
  `extra.context_compaction` (what compacted the context, how many messages it summarized and kept where recorded);
- what the call was asked last (the framework's summary prompt, the conversation in it) is no question: no user step;
  its instructions (a summarization agent's system prompt) are that prompt's, not the agent's: no system step;
- a later call's input message holding that summary (however the framework wraps it; where the framework re-sends only
  part of the answer, that part, `ContextCompaction.resent_summary`: Claude Code's `<summary>` block without the
  `<analysis>` before it) is the compaction's answer sent again: no user step, no copied one;
- the kept messages were seen before, and are not new (the builder's usual rule).

A compaction whose call no span records (the Responses API's `responses.compact`, which openai-agents'
`OpenAIResponsesCompactionSession` calls with the OpenAI client, outside any tracing span) is known only from the later
calls sent its output in place of the conversation: the conversation's user messages, then a `compaction` item whose
summary is encrypted, readable by the provider alone. Its mapper marks the calls sent it (`LlmCall.sent_compaction`;
`mappers/openai_responses_compaction.py`), and:

- the first call sent it puts it where it happened, once: an agent step of no LLM call (none is recorded: no tokens, no
  cost), after the last call not sent it, marked `extra.context_compaction` (`kind` `encrypted`: by what, the item's id
  and length, how many items it summarized, the user messages it kept), its message saying what the spans record;
- what its output re-sends before the item (the user messages) was asked before: no user step, no copied one.

A compaction whose call no span records but whose summary the later calls are sent readable, in place of the messages
it summarized (Strands' `SummarizingConversationManager` with no summarization agent calls the agent's model itself,
outside the agent's tracing: `mappers/strands_summarizing.py`), is marked alike (`sent_compaction`, its
`ContextCompaction.summary` the text sent): its step, of no LLM call, has the summary as its message and `kind`
`summary` with `call_recorded: false`; the summary message sent is that step's, no user step, and later calls sending it
again are known to re-send it (`Summaries`). Another emitter whose framework summarizes outside its tracing does the
same from what its spans hold: the call first sent the summary, its index, and what it replaced where recorded.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.operations import ContextCompaction, Message


def step_extra(compaction: ContextCompaction) -> dict[str, Any]:
    """The compaction call's step's `extra.context_compaction`: a summary (the step's message), or the provider's
    encrypted one (`item_id`: its compaction item, the call in no span), and what else is recorded of it."""
    if compaction.item_id is not None:
        return {"kind": "encrypted", "by": compaction.by, "item_id": compaction.item_id,
                "encrypted_chars": compaction.encrypted_chars, "call_recorded": False,
                **({"summarized_messages": compaction.summarized_messages}
                   if compaction.summarized_messages is not None else {}),
                **({"kept_user_messages": compaction.kept_user_messages}
                   if compaction.kept_user_messages is not None else {})}
    extra: dict[str, Any] = {"kind": "summary"}
    if compaction.by:
        extra["by"] = compaction.by
    if compaction.summary is not None:
        extra["call_recorded"] = False  # known from the later calls sent it (`Summaries.first_sent`)
    if compaction.agent:
        extra["agent"] = compaction.agent
    if compaction.summarized_messages is not None:
        extra["summarized_messages"] = compaction.summarized_messages
    if compaction.kept_messages is not None:
        extra["kept_messages"] = compaction.kept_messages
    return extra


def unrecorded_message(compaction: ContextCompaction) -> str:
    """What the step of a compaction whose call no span records says: the summary the later calls are sent
    (`ContextCompaction.summary`), as a recorded compaction's step does; else (`ContextCompaction.item_id`) who
    compacted the context and what the spans hold of it."""
    if compaction.summary is not None:
        return compaction.summary
    return (f"Context compacted by {compaction.by or 'the provider'}: the conversation before this point was replaced "
            f"by its user messages and the compaction item {compaction.item_id}, whose summary is encrypted (readable "
            "by the provider alone). No span records the compaction call itself (its tokens and cost).")


class Summaries:
    """The summaries one trajectory's compaction calls wrote, to know them when a later call is sent them again."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        # The compactions no recorded call made that have their step (`first_sent`): by compaction item, or summary.
        self._items: set[str] = set()

    def add(self, summary: str) -> None:
        summary = summary.strip()
        if summary:
            self._texts.append(summary)

    def resent(self, message: Message) -> bool:
        """Whether `message`, an input of a later call, is a compaction's summary sent again: a message holding it
        (the framework's wrapper around it)."""
        if not self._texts:
            return False
        text = message.text
        return bool(text) and any(summary in text for summary in self._texts)

    def first_sent(self, compaction: ContextCompaction) -> bool:
        """Whether a compaction no recorded call made (`ContextCompaction.item_id`, or `.summary`) is sent here for
        the first time: its step is then to be made; later calls re-send it (a readable summary then known as one)."""
        key = compaction.item_id if compaction.item_id is not None else compaction.summary
        if key is None or key in self._items:
            return False
        self._items.add(key)
        if compaction.summary is not None:
            self.add(compaction.summary)
        return True
