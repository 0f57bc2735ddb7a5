"""Claude Code's `<system-reminder>`s sent inside a tool's result: the result as the model was shown it.

Claude Code sends the model context of its own (the environment, the model's name, the date, a token count) as
`<system-reminder>` text blocks in a user message. Where the message it would go in is a tool result's (the request
is the tool loop's next, no question of the person's in it), it appends them to that `tool_result`'s content, after
the tool's own text. Auto-compact in the middle of a turn does so: the summary replaces the first message, which held
the environment reminders, so the turn's next request re-sends them in the latest tool result (2.1.337:
tests/captures/claude-code_native_auto-compact); so would CLAUDE_CODE_TOTAL_TOKENS_REMINDER's token count, which the
other captures turn off. The tool span records what the tool returned; the model was shown that and the reminders.
Claude Code's reminders before a question stay in its question step as sent, so these stay in the result as sent:
`LlmCall.shown_tool_results`, which the builder puts in place of the tool span's result (marked `content_from`).
"""

from __future__ import annotations

from evalkit.trajectory.operations import Message

_REMINDER = "<system-reminder>"


def reminded_results(messages: list[Message]) -> dict[str, str]:
    """The results in a request's input that Claude Code appended its reminders to, by call id: their text as sent."""
    return {part.call_id: part.text for message in messages for part in message.parts
            if part.kind == "tool_result" and part.call_id and part.text and _REMINDER in part.text}
