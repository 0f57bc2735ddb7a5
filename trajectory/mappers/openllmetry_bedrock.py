"""OpenLLMetry's Bedrock instrumentation (`opentelemetry-instrumentation-bedrock`): a Converse call's blocks it writes
as text, and prompt tokens without the cache's.

Its `chat` span of a `converse` / `converse_stream` call writes the request's messages and a non-streamed answer as
GenAI parts (`gen_ai.input.messages`, `gen_ai.output.messages`: span_utils.py `_converse_content_to_parts`), reading
`text`, `toolUse`, `toolResult` and media blocks; any other block it writes as a text part whose content is the block's
JSON (`json.dumps(block)`). Two such blocks are in every Claude conversation with thinking or prompt caching:
- `{"reasoningContent": {"reasoningText": {"text", "signature"}}}`: the model's thinking, which opens a non-streamed
  answer and is sent back with every answer in the history (Claude requires it). As text it would be the answer's
  message (and a re-sent answer would match no step's, so the history would be copied again). It is the reasoning it
  is, read as Strands' blocks are (`messages.parse_part`); a streamed answer's is a `reasoning` part already.
- `{"cachePoint": {"type": "default"}}`: a marker telling Bedrock where the cached prefix ends, after the newest user
  message (or its tool results). As text it would be words of the question (or a question of its own after the tool
  results); it is no content the model reads: dropped.
Only the text parts opening so are parsed, and only on this instrumentation's spans.

Its `gen_ai.usage.input_tokens` is Bedrock's `inputTokens` (and an `invoke_model` body's Anthropic `input_tokens`), the
prompt tokens after the last cache point: the cache's reads and writes, beside it, are left out whatever their size,
and the shared rule (`usage.normalised_usage`) adds them only where they outnumber the rest. A tool round after the
cached prefix outnumbers it as soon as its results are long: its prompt tokens and price would fall short by the whole
prefix. They are always added, here and in ingest's `input_tokens` column (`attribution.OPENLLMETRY_BEDROCK_SCOPE`),
as for OpenLIT's Anthropic instrumentation.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.messages import parse_part
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

SCOPE = "opentelemetry.instrumentation.bedrock"
# How `json.dumps` opens a one-key block of these kinds (the instrumentation's rendering of a block it does not read).
_BLOCKS_AS_TEXT = ('{"reasoningContent": ', '{"cachePoint": ')


def read_call(reader: SpanReader, call: LlmCall) -> None:
    """The call's usage with the cache's tokens in its prompt tokens, its messages with each Converse block written as
    text read as the block it is."""
    call.usage = otel_genai.read_usage(reader, input_includes_cache=False)
    call.input_messages = _read_blocks(call.input_messages)
    call.output_messages = _read_blocks(call.output_messages)


def _read_blocks(messages: list[Message]) -> list[Message]:
    if not any(part.kind == "text" and part.text and part.text.startswith(_BLOCKS_AS_TEXT)
               for message in messages for part in message.parts):
        return messages
    # New messages where one changes: the parsed messages may be shared with other calls.
    return [Message(message.role, _block_parts(message.parts), message.name)
            if any(part.kind == "text" and part.text and part.text.startswith(_BLOCKS_AS_TEXT)
                   for part in message.parts) else message
            for message in messages]


def _block_parts(parts: list[Part]) -> list[Part]:
    read: list[Part] = []
    for part in parts:
        if not (part.kind == "text" and part.text and part.text.startswith(_BLOCKS_AS_TEXT)):
            read.append(part)
            continue
        block = parse_json(part.text)
        if not isinstance(block, dict) or len(block) != 1:
            read.append(part)  # text that only opens like a block: kept as written
        elif "cachePoint" in block:
            continue  # where the cached prefix ends: nothing the model reads
        else:
            reasoning = parse_part(block)
            read.append(reasoning if reasoning is not None and reasoning.kind == "reasoning" else part)
    return read
