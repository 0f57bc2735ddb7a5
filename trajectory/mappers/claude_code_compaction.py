"""Claude Code compacting its session's context (`/compact`, or auto-compact near the context window's end), as its own
OpenTelemetry export records it: its summary request marked a compaction (`LlmCall.compaction`, the rule in
trajectory/context_compaction.py).

Claude Code asks the model for the summary in a request of its own, its query source `compact` (the `llm_request`
span's `query_source_safe`, its request events' `query_source`): the conversation so far, its summary prompt ("CRITICAL:
Respond with TEXT ONLY… Your task is to create a detailed summary of the conversation so far…", asking for an
`<analysis>` block, then a `<summary>` block) one text block appended to the last message (Claude Code merges
consecutive user messages before it sends them, so after a tool result the prompt is the last block of the tool
result's message). When it is done the CLI emits a `compaction` event (`trigger` `manual` for /compact, `auto` for
auto-compact; `success`, `pre_tokens`, `post_tokens`) linked, as the request's events are, to the span active, the
turn's (`claude_code.relink_logs` gives it to the summary call). The session's later requests start with a user
message of Claude Code's own, "This session is being continued from a previous conversation that ran out of
context…", then "Summary:" and the `<summary>` block's content (the analysis dropped, not the answer as written), then
the latest messages from before the compaction, kept as they were (2.1.337 kept the last answer, which the summary
request was not sent).

So a `compact` request is a compaction by /compact or auto-compact (its event's trigger) of the messages it was sent;
its summary prompt, taken apart from the message it was appended to, is what it was asked (no question, while the tool
result before it stays the history it is); what later calls are sent of it is its `<summary>` block's content.

Seen in a real capture: tests/captures/claude-code_native_compaction (Claude Code 2.1.337 driven by the Claude Agent
SDK, `/compact` between two questions of one session).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalkit.trajectory.mappers.reader import as_text
from evalkit.trajectory.operations import ContextCompaction, Message
from evalkit.trajectory.span import LogRecord

# Claude Code's query source of its summary requests, and the event it emits when a compaction is done.
COMPACT_SOURCE = "compact"
COMPACTION_EVENT = "compaction"
# The `compaction` event's trigger, as Claude Code's docs name what compacted: the /compact command, auto-compact.
_BY_TRIGGER = {"manual": "/compact", "auto": "auto-compact"}
# The block of the answer Claude Code sends later requests (its summary prompt asks for it after an `<analysis>`).
_SUMMARY_BLOCK = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


def is_summary_request(attributes: Mapping[str, object]) -> bool:
    """Whether a request's span or events (their attributes) say it is Claude Code's summary request."""
    return COMPACT_SOURCE in (attributes.get("query_source_safe"), attributes.get("query_source"))


def asked_apart(messages: list[Message]) -> list[Message]:
    """The summary request's input with its summary prompt (the last message's last text part) a user message of its
    own after the message Claude Code appended it to, that message's other parts (a tool's result) left as they were.
    New messages: the parsed ones may be shared."""
    if not messages or messages[-1].role != "user":
        return messages
    last = messages[-1]
    at = next((index for index in range(len(last.parts) - 1, -1, -1) if last.parts[index].kind == "text"), None)
    if at is None or len(last.parts) == 1:
        return messages
    rest = [part for index, part in enumerate(last.parts) if index != at]
    return [*messages[:-1], Message(last.role, rest, last.name), Message("user", [last.parts[at]])]


def compaction(messages: list[Message], answer: str, event: LogRecord | None) -> ContextCompaction:
    """What the summary request compacted: by the trigger its `compaction` event names, the messages it was sent before
    its summary prompt (`asked_apart`'s, the prompt last), re-sent as its `<summary>` block's content."""
    trigger = as_text(event.attributes.get("trigger")) if event is not None else None
    block = _SUMMARY_BLOCK.search(answer)
    return ContextCompaction(
        by=_BY_TRIGGER.get(trigger, trigger) if trigger else None,
        summarized_messages=len(messages) - 1 if messages else None,  # None: no request body recorded
        resent_summary=(block.group(1).strip() or None) if block else None,
    )
