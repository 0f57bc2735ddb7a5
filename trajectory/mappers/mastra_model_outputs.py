"""What Mastra sent the model for a tool's result when the tool maps it (`toModelOutput`): the text, not the result.

A Mastra tool may give a `toModelOutput(result)`: the model is then sent what it returns, while the tool's span
records the result itself (`gen_ai.tool.call.result`). `@mastra/mcp` gives one to every MCP tool declaring an output
schema (`createStructuredToolToModelOutput`): the tool returns the server's `structuredContent`, and the model is sent
the text of the result's `content` blocks (`{type: "text", value}`), which a server may write quite unlike the data
(a summary for a reader beside the JSON for programs). Mastra's subagent tools (`agent-<key>`) have one too (their
`{text, …}` sent as the text, `mastra._delegation_answer`).

The mapped output is recorded on the tool-result chunk's span: a `model_chunk` under the `chat` span of the call that
asked for the tool, naming the call (`mastra.metadata.toolCallId`), its output (`mastra.model_chunk.output`, the same
as `mastra.metadata.providerMetadata`'s `mastra.modelOutput`, where @mastra/core stores what `toModelOutput` made,
`normalizeModelOutput`) that object. A tool with no mapping has a chunk with no output. (The `mapping` span Mastra opens
around the call of `toModelOutput` records it too, but names no call.) The AI SDK sends a `text` output's value as it
is, so it is the call's result as shown (`LlmCall.shown_tool_results`); another kind (`json`, `content` with media)
is left to the tool span's result.

Read in @mastra/core 1.71 (agent `getProviderMetadataWithModelOutput`) and @mastra/mcp 2.0; seen in the
`mastra_native_mcp` and `mastra_native_network` captures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers import mastra
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

CHUNK_CALL_ID = "mastra.metadata.toolCallId"
CHUNK_OUTPUT = "mastra.model_chunk.output"
_TEXT_OUTPUT = "text"  # the AI SDK's `LanguageModelV2ToolResultOutput` sent as its value


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each Mastra call given the text its tools' `toModelOutput` sent the model, by tool call id (on the call's
    `chat` span's report and its step's, whichever the builder keeps)."""
    mastra_calls = {(c.span.trace_id, c.span.span_id): c for c in calls if c.emitter == mastra.NAME}
    if not mastra_calls:
        return
    parents = {(s.trace_id, s.span_id): s.parent_span_id or "" for s in spans if s.scope_name == mastra.SCOPE}
    for span in spans:
        shown = _mapped_text(span)
        if shown is None:
            continue
        call_id, text = shown
        chat = (span.trace_id, span.parent_span_id or "")
        step = (span.trace_id, parents.get(chat, ""))
        for key in (chat, step):
            call = mastra_calls.get(key)
            if call is not None:
                call.shown_tool_results[call_id] = text


def _mapped_text(span: Span) -> tuple[str, str] | None:
    """A tool-result chunk's call id and the text its tool's `toModelOutput` made of the result, if it made text."""
    if span.scope_name != mastra.SCOPE or span.attributes.get(mastra.SPAN_TYPE) != "model_chunk":
        return None
    call_id = span.attributes.get(CHUNK_CALL_ID)
    output = parse_json(span.attributes.get(CHUNK_OUTPUT))
    if not isinstance(call_id, str) or not isinstance(output, dict) or output.get("type") != _TEXT_OUTPUT:
        return None
    value = output.get("value")
    return (call_id, value) if isinstance(value, str) else None
