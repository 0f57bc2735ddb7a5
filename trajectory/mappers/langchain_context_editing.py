"""LangChain v1's `ContextEditingMiddleware` clearing older tool results from what an agent's model is sent, as
OpenInference's LangChain tracer records it: the first call sent a result cleared says so (`extra.context_edit`).

`create_agent(model, tools, middleware=[ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=…, keep=…,
placeholder=…)])])` wraps each model call (`wrap_model_call`: no graph node, no span of its own). When the thread's
messages count more than `trigger` tokens, it sends the model a copy of them in which every tool result but the `keep`
latest (and those of `exclude_tools`) is its `placeholder` ("[cleared]"), each such ToolMessage's `response_metadata`
marked `{"context_editing": {"cleared": true, "strategy": "clear_tool_uses"}}`. The thread keeps the results: every
later call clears them again from the whole thread, which only grows: a result once cleared is sent cleared after.

What a trajectory holds is what happened: each tool result once, on its call, as the tool returned it (the model saw it
whole then); the placeholder a later call is sent is that result sent again, no new result (the builder's usual rule:
the result of a call already answered). What the model no longer saw is said where it stopped seeing it: the step of
the first call sent a result cleared lists the results cleared there (`cleared_tool_results`: each by its call id, its
tool and the placeholder sent), with how many the call was sent cleared in all (those cleared before included) and the
strategy. The tracer records the messages a call was sent, markers included, in the LLM span's `input.value`
(LangChain's serialized messages); the flattened `llm.input_messages` keep no marker.

Seen in a real capture: tests/captures/langgraph_openinference_context-editing (LangChain 1.5.2, langchain-openai
1.8.1, OpenInference's LangChain instrumentation 0.1.80; `ClearToolUsesEdit(trigger=230, keep=2)`: clearing one
result before turn two's first call, one more before its second, two more in turn three).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.langgraph_openinference import OPENINFERENCE_SCOPE
from evalkit.trajectory.mappers.reader import dig, parse_json
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

# The `response_metadata` key the middleware marks a cleared ToolMessage with, and who writes it.
_MARKER = "context_editing"
_BY = "ContextEditingMiddleware"


def _sent_messages(span: Span) -> list[Any]:
    """The LangChain messages the call was sent, serialized (`{"messages": [[message, …]]}`: one list a prompt)."""
    raw = span.attributes.get("input.value")
    # Parsed only where a marker may be: every LangChain call records its messages, the cleared ones are a few.
    if not isinstance(raw, str) or _MARKER not in raw:
        return []
    prompts = dig(parse_json(raw), "messages")
    if not isinstance(prompts, list):
        return []
    return [message for prompt in prompts if isinstance(prompt, list) for message in prompt]


def _cleared(message: Any) -> tuple[str, str | None, str, Any] | None:
    """A tool result sent cleared: its call id, its tool, the strategy that cleared it, what was sent in its place."""
    fields = dig(message, "kwargs")
    if not isinstance(fields, dict) or fields.get("type") != "tool":
        return None
    marker = dig(fields, "response_metadata", _MARKER)
    call_id = fields.get("tool_call_id")
    if not isinstance(marker, dict) or marker.get("cleared") is not True or not isinstance(call_id, str):
        return None
    name = fields.get("name")
    return call_id, name if isinstance(name, str) else None, str(marker.get("strategy") or ""), fields.get("content")


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """The first call of a trajectory sent each cleared tool result marked with the results cleared there."""
    del spans  # each call's own span records what it was sent
    cleared_before: set[str] = set()
    for call in sorted(calls, key=lambda call: call.span.start_time_unix_nano):
        if call.span.scope_name != OPENINFERENCE_SCOPE:
            continue
        sent = [cleared for cleared in map(_cleared, _sent_messages(call.span)) if cleared is not None]
        new = [cleared for cleared in sent if cleared[0] not in cleared_before]
        if not new:
            continue
        cleared_before.update(call_id for call_id, *_ in new)
        call.extra["context_edit"] = {
            "by": _BY,
            # LangChain's one strategy (`ClearToolUsesEdit`'s "clear_tool_uses"), as the marker names it.
            "strategy": next((strategy for _, _, strategy, _ in new if strategy), None),
            "cleared_tool_results": [{"tool_call_id": call_id, "function_name": name, "placeholder": placeholder}
                                     for call_id, name, _, placeholder in new],
            "results_sent_cleared": len(sent),
        }
