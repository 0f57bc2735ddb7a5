"""@openai/agents (JavaScript) LLM calls as @arizeai/openinference-instrumentation-openai-agents records them.

The instrumentation is the SDK's TracingProcessor (processor.js). A Responses API call is the SDK's `response` span:
`input.value` the SDK's input items as sent (`_input`, its own protocol items), `output.value` the Response the API
returned (`_response`), and the flattened messages written from both:
- `extractResponseOutput` writes every `message` and `function_call` item of the answer as an output message of its
  own (`llm.output_messages.<i>`, `messageIndex++` per item): parallel tool calls and a text beside a call are one
  answer, not choices. It writes no other item: a reasoning model's `reasoning` item (its summary, before the text or
  function calls it thought out) is only in `output.value`, where this module reads it (`_answer_reasoning`).
- `extractMessageList` writes input item i as input message i + 1 when the Response has instructions (message 0,
  `getResponseInputAttributes({startIndex})`), else i. `assignMessageContentAttributes` keeps only `text`/
  `input_text` parts: an assistant answer re-sent as history (`output_text` parts) is a message with its role alone,
  its text read back from its item. A re-sent `reasoning` item (the SDK's protocol item: its summary as `input_text`
  parts, no role) is a message with no role and the reasoning as its text, which would read as a question the user
  asked: it is the reasoning that began the answer re-sent after it (a `reasoning` part, joined to that answer by
  `openai_sdk.read_response`). An item written with no attributes at all (a reasoning item with an empty summary:
  the model reasoned and showed nothing) leaves a gap in the indices, so each message is paired with its item by its
  own index, not by its place in the list.

Its tool spans (TOOL kind, `getSpanKind`) are the model's function calls, an MCP server's tools among them, and one
that is not: the SDK's `mcp_tools` span (MCPListToolsSpanData), the SDK listing an MCP server's tools before a model
call, recorded with no `tool.name` and the names it listed as `output.value` (`getMCPListToolsAttributes`; the
server's name, in the SDK's span data, is not exported). No tool the model called, so no step (`is_mcp_list_tools`):
the calls' own tool definitions say which tools the model had. An MCP tool's text result is recorded as the SDK's
tool returned it, the MCP content item (`{"type": "text", "text": …}`, a list of them for several), which the SDK
sends the model as `input_text` parts (`normalizeStructuredToolOutputs`): its text, as for the Python SDK
(`openinference.tool_execution`). An MCP result flagged `isError` is neither recorded nor sent as one: the SDK's tool
returns its content alone (`mcpToFunctionTool`), so no span says which result was a failure.

The rest is the Responses API's, read as for OpenInference's Python instrumentation (`openai_sdk.read_response`): the
invocation parameters are the returned Response but its output, usage, tools and instructions, so its `reasoning:
{effort, summary}` echo is the call's effort and a `previous_response_id` or `conversation` the server state it
continued.

Seen in real captures: tests/captures/openai-agents-js_openinference (a handoff, re-sent answers),
openai-agents-js_openinference_reasoning (o4-mini: reasoning items answered and re-sent, the effort) and
openai-agents-js_openinference_mcp (an MCP server's tools over stdio, their listings, an `isError` result).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openai_sdk
from evalkit.trajectory.mappers.reader import SpanReader, dig, parse_json, unflatten
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

SCOPE = "@arizeai/openinference-instrumentation-openai-agents"
_RESPONSE_SPAN = "response"  # the SDK's ResponseSpanData; a Chat Completions model's call is a `generation` span
_MCP_LIST_TOOLS_SPAN = "mcp_tools"  # the SDK's MCPListToolsSpanData, named after its type (`getSpanName`)
_INPUT_MESSAGES = "llm.input_messages."


def is_response(span: Span) -> bool:
    """A Responses API call's span under the JS instrumentation."""
    return span.scope_name == SCOPE and span.name == _RESPONSE_SPAN


def is_mcp_list_tools(span: Span) -> bool:
    """The SDK listing an MCP server's tools: a TOOL span of no `tool.name` (an MCP tool the model calls named
    `mcp_tools` would be a function span, named by its `tool.name`)."""
    return span.scope_name == SCOPE and span.name == _MCP_LIST_TOOLS_SPAN and "tool.name" not in span.attributes


def read_mcp_list_tools(reader: SpanReader) -> None:
    """A listing makes no operation: the tools it listed (`output.value`) are read, the model's tool definitions
    hold them."""
    reader.consume("output.value")


def read_messages(call: LlmCall, reader: SpanReader) -> None:
    """A call's messages as the model was sent and answered them: the answer's items one message with the reasoning
    that began it, each re-sent answer its text, each re-sent reasoning item the reasoning it is."""
    openai_sdk.merge_output_items(call)
    output = reader.span.attributes.get("output.value")
    response = parse_json(output) if isinstance(output, str) and '"reasoning"' in output else None
    _answer_reasoning(call, response)
    recorded = _recorded_input_messages(reader.span)
    if len(recorded) != len(call.input_messages):
        return  # messages read some other way than one per flattened index: no item pairs with them
    unread = [position for position, (_, node) in enumerate(recorded)
              if "role" not in node or (node.get("role") == "assistant" and not call.input_messages[position].parts)]
    if not unread:
        return
    items = parse_json(reader.span.attributes.get("input.value"))
    if not isinstance(items, list):
        return
    if response is None:
        response = parse_json(output)
    instructions = response.get("instructions") if isinstance(response, dict) else None
    offset = 1 if isinstance(instructions, str) and instructions else 0
    for position in unread:
        index = recorded[position][0] - offset
        item = items[index] if 0 <= index < len(items) else None
        if isinstance(item, dict):
            _read_item(call.input_messages, position, item)


def _recorded_input_messages(span: Span) -> list[tuple[int, dict[str, Any]]]:
    """Each input message the span records, in order: its flattened index and its `message` attributes."""
    flat = {key[len(_INPUT_MESSAGES):]: value for key, value in span.attributes.items()
            if key.startswith(_INPUT_MESSAGES)}
    recorded = []
    for key, node in unflatten(flat).items():
        message = dig(node, "message")
        if key.isdigit() and isinstance(message, dict):
            recorded.append((int(key), message))
    return sorted(recorded, key=lambda pair: pair[0])


def _read_item(messages: list[Message], position: int, item: dict[str, Any]) -> None:
    """The message at `position`, written from `item` with what the flattening dropped put back."""
    if item.get("type") == "reasoning":
        messages[position] = Message("assistant", [Part("reasoning", text=openai_sdk.reasoning_item_text(item))])
        return
    content = item.get("content") if item.get("role") == "assistant" else None
    texts = [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
             and part.get("type") in ("output_text", "text")] if isinstance(content, list) else []
    if isinstance(content, str):
        texts = [content]
    if texts:
        messages[position].parts.append(Part("text", text="".join(texts)))


def _answer_reasoning(call: LlmCall, response: Any) -> None:
    """The answer's reasoning items (in `output.value` only), before the text and calls they thought out."""
    items = response.get("output") if isinstance(response, dict) else None
    if not isinstance(items, list):
        return
    texts = [openai_sdk.reasoning_item_text(item) for item in items
             if isinstance(item, dict) and item.get("type") == "reasoning"]
    parts = [Part("reasoning", text=text) for text in texts if text]
    if not parts:
        return
    answer = call.output_messages[0] if call.output_messages else None
    if answer is not None and answer.role == "assistant":
        answer.parts[:0] = parts
    else:
        call.output_messages.insert(0, Message("assistant", parts))
