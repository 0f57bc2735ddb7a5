"""Anthropic's server-side context editing (the beta `context_management` of the Messages API), as OpenInference's
anthropic instrumentation records it: the first call the API cleared a tool result for says so
(`extra.context_edit`, the shape `langchain_context_editing` gives LangChain's middleware clearing alike).

A request with the `context-management-2025-06-27` beta and `context_management={"edits": [{"type":
"clear_tool_uses_20250919", "trigger": …, "keep": {"type": "tool_uses", "value": k}, "exclude_tools": […]}]}` has the
API, once the prompt passes the trigger, replace every tool result but the `k` latest (those of `exclude_tools` never)
with a placeholder in what the model is shown, oldest first. The client sends its whole history every time and the API
clears again on each request, which only grows: a result once cleared is cleared for every later call. The answer says
what it did in `context_management.applied_edits`: per edit, `cleared_tool_uses` (how many, in all) and
`cleared_input_tokens`, naming no tool use; the instrumentation records them in the span's `metadata`
(`context_management_applied_edits`) and the whole answer in `output.value`, the edits requested in
`llm.invocation_parameters`.

What a trajectory holds is what happened: each tool result once, on its call, as the tool returned it (the model saw it
whole then); the cleared copies later requests carry are the same results sent again (the builder's usual rule). What
the model no longer saw is said on the step of the first call the API cleared it for: the results cleared there, each
by its call id and tool, which the API's count gives by position (the oldest results the request holds of tools not
excluded: `identified_by: "position"`), with how many the call was shown cleared in all and the input tokens the API
cleared for it. The placeholder the model was shown is the API's, in no span: none is given.

Seen in a real capture: tests/captures/anthropic-sdk_openinference_context-editing (anthropic 2.17.0,
openinference-instrumentation-anthropic 3.1.0; `trigger` 530 input tokens, `keep` 1: two results cleared on turn two's
first call, a third on its second).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.anthropic_openinference import SCOPE
from evalkit.trajectory.mappers.reader import dig, parse_json
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

# What clears tool results: the edit's type, which names its version, is its strategy.
_BY = "Anthropic API"
_CLEAR_TOOL_USES = "clear_tool_uses_"


def _applied_edits(span: Span) -> list[dict[str, Any]]:
    """The edits the API says it applied to the call's prompt: the instrumentation's metadata, else the answer's."""
    edits = dig(_parsed_if_edited(span.attributes.get("metadata")), "context_management_applied_edits")
    if not isinstance(edits, list):
        edits = dig(_parsed_if_edited(span.attributes.get("output.value")), "context_management", "applied_edits")
    return [edit for edit in edits if isinstance(edit, dict)] if isinstance(edits, list) else []


def _parsed_if_edited(raw: object) -> object:
    """`raw` decoded where it may name applied edits: every Anthropic call reaches this hook, few were edited, and its
    answer's JSON is not parsed for nothing."""
    return parse_json(raw) if not isinstance(raw, str) or "applied_edits" in raw else None


def _requested_edit(span: Span, kind: str) -> dict[str, Any]:
    """The request's edit of that type (its `exclude_tools`), as `llm.invocation_parameters` records it."""
    edits = dig(parse_json(span.attributes.get("llm.invocation_parameters")), "context_management", "edits")
    return next((edit for edit in edits if isinstance(edit, dict) and edit.get("type") == kind), {}) \
        if isinstance(edits, list) else {}


def _tool_results(call: LlmCall, excluded: set[str]) -> list[tuple[str, str | None]]:
    """The tool results the call was sent that the edit may clear, oldest first: each its call id and tool."""
    names = {part.call_id: part.name for message in call.input_messages for part in message.parts
             if part.kind == "tool_call" and part.call_id}
    return [(part.call_id, names.get(part.call_id)) for message in call.input_messages for part in message.parts
            if part.kind == "tool_result" and part.call_id and names.get(part.call_id) not in excluded]


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """The first call of a trajectory the API cleared each tool result for marked with the results cleared there."""
    del spans  # each call's own span records what the API did
    cleared_before: set[str] = set()
    for call in sorted(calls, key=lambda call: call.span.start_time_unix_nano):
        if call.span.scope_name != SCOPE:
            continue
        for edit in _applied_edits(call.span):
            kind = edit.get("type")
            count = edit.get("cleared_tool_uses")
            if not isinstance(kind, str) or not kind.startswith(_CLEAR_TOOL_USES) or not isinstance(count, int):
                continue
            excluded = _requested_edit(call.span, kind).get("exclude_tools")
            cleared = _tool_results(call, set(excluded) if isinstance(excluded, list) else set())[:count]
            new = [(call_id, name) for call_id, name in cleared if call_id not in cleared_before]
            cleared_before.update(call_id for call_id, _ in cleared)
            if not new:
                continue
            call.extra["context_edit"] = {
                "by": _BY,
                "strategy": kind,
                "cleared_tool_results": [{"tool_call_id": call_id, "function_name": name} for call_id, name in new],
                "results_sent_cleared": count,
                "cleared_input_tokens": edit.get("cleared_input_tokens"),
                # The API counts the results it cleared and names none: these are the oldest `count`.
                "identified_by": "position",
            }
