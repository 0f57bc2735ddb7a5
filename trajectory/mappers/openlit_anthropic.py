"""OpenLIT's Anthropic instrumentation (scope `openlit.instrumentation.anthropic`, as of openlit 1.45).

It wraps `Messages.create` (streamed or not) and `Messages.stream` and their async twins, one `chat <model>` span a
call, the latest GenAI attributes read by the GenAI mapper. What is its own (openlit/instrumentation/anthropic/
utils.py, `common_chat_logic`), read here:

- `gen_ai.usage.input_tokens` is Anthropic's `input_tokens` as the API reports it: the prompt tokens after the last
  cache breakpoint, the ones read from or written to the cache left out (OpenLIT's own comment: "exclusive of cache
  read / creation tokens"), which are `gen_ai.usage.cache_read.input_tokens` / `…cache_creation.input_tokens`
  beside it. So the cache tokens are added whatever their size (the shared rule only notices when the prompt
  tokens are fewer than them; ingest's `input_tokens` column does the same, `ingest/attribution.py`);
- Anthropic's `system` is copied as it was passed into one text part's `content`, in `gen_ai.system_instructions`
  and in the system message of `gen_ai.input.messages`: a string as it is, but the list of text blocks a prompt
  marked for caching is sent as (`[{"type": "text", "text": …, "cache_control": …}]`) stays that list, which
  read as a part is its JSON. The system prompt is the blocks' texts;
- the model's tool calls are restated on the span (`openlit.py`), their arguments also as
  `gen_ai.tool.call.arguments` (one call's JSON, or a JSON list of several calls').

Not recorded: a `tool_result`'s `is_error` (the input message keeps its id and `str()` of its content only; a
tool the application traces says it failed on its own span), the tool definitions (only on the inference event).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import LlmCall, Operation, Part
from evalkit.trajectory.span import LogRecord, Span

SCOPE = "openlit.instrumentation.anthropic"
_RESTATED_ARGUMENTS = "gen_ai.tool.call.arguments"


def is_anthropic(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    """A call span, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    call = otel_genai.map_span(reader, logs)
    if not isinstance(call, LlmCall):
        return call
    reader.consume(_RESTATED_ARGUMENTS)
    call.usage = otel_genai.read_usage(reader, input_includes_cache=False)
    system = system_texts(reader.attributes.get("gen_ai.system_instructions"))
    if system:
        call.system_instructions = system
        for message in call.input_messages:
            if message.role == "system":
                message.parts = [Part("text", text=text) for text in system]
    return call


def system_texts(value: Any) -> list[str]:
    """The system prompt's texts from OpenLIT's `[{"type": "text", "content": <Anthropic's system>}]`; empty when
    it is not that shape (the GenAI mapper's reading stands)."""
    parts = parse_json(value)
    if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
        return []
    system = parts[0].get("content")
    if isinstance(system, str):
        return [system] if system else []
    if not isinstance(system, list) or not all(isinstance(block, dict) and block.get("type") == "text"
                                               and isinstance(block.get("text"), str) for block in system):
        return []
    return [block["text"] for block in system if block["text"]]
