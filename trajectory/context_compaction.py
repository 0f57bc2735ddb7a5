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
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.operations import ContextCompaction, Message


def step_extra(compaction: ContextCompaction) -> dict[str, Any]:
    """The compaction call's step's `extra.context_compaction`: a summary (the step's message), and what else is
    recorded of it."""
    extra: dict[str, Any] = {"kind": "summary"}
    if compaction.by:
        extra["by"] = compaction.by
    if compaction.agent:
        extra["agent"] = compaction.agent
    if compaction.summarized_messages is not None:
        extra["summarized_messages"] = compaction.summarized_messages
    if compaction.kept_messages is not None:
        extra["kept_messages"] = compaction.kept_messages
    return extra


class Summaries:
    """The summaries one trajectory's compaction calls wrote, to know them when a later call is sent them again."""

    def __init__(self) -> None:
        self._texts: list[str] = []

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
