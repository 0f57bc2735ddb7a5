"""What Langfuse's LangChain integration (`langfuse.langchain.CallbackHandler`) writes its own way.

A chat model run's generation input is the run's messages followed by the tools the model was offered, each as a
message of its own: `{"role": "tool", "content": <the definition, OpenAI's function shape>}` (the handler's
`__on_llm_action` appends `invocation_params["tools"]` so to the prompt). They are definitions, not tool results:
read as results, the last one makes the question before it look like re-sent history (a real capture:
tests/captures/langgraph_langfuse). A tool run's call id is in its metadata (`tool_call_id`, from LangGraph's
ToolNode), the tool's output the ToolMessage the tool returned, none when it raised. An agent's run (`create_agent`'s
graph, observation type `agent`) has its messages state in and out: the question asked, the whole conversation after.

The messages are LangChain's (`_convert_message_to_dict`: role, content, `tool_calls`). With the Responses API
(`ChatOpenAI(use_responses_api=True)`), langchain-openai keeps the response's items as the AIMessage's content blocks:
a `function_call` item beside the same call in `tool_calls` (read twice, the call would be made twice), and a
`reasoning` item whose text is its summary (`{"type": "reasoning", "summary": [{"type": "summary_text", "text": …}]}`)
(a real capture: tests/captures/langgraph_langfuse_openai-reasoning).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.trajectory.mappers import langchain, openai_sdk
from evalkit.trajectory.mappers.messages import openai_tool_definition, render
from evalkit.trajectory.mappers.reader import SpanReader, as_text, parse_json

TOOL_CALL_ID = "langfuse.observation.metadata.tool_call_id"


def _offered_tool(message: Any) -> dict[str, Any] | None:
    """The definition a `{"role": "tool", "content": {...}}` entry holds; None for a tool result (whose content is
    the tool's output and which answers a call id)."""
    if not isinstance(message, Mapping) or message.get("role") != "tool" or "tool_call_id" in message:
        return None
    content = message.get("content")
    if not isinstance(content, Mapping) or not isinstance(content.get("function"), Mapping):
        return None
    return openai_tool_definition(content)


def split_offered_tools(raw_input: Any) -> tuple[Any, list[dict[str, Any]]]:
    """A generation's input without the tool definitions the handler appended to it, and those definitions.

    They are the input's last entries: only the list's tail is looked at, so a long history costs nothing more."""
    if not isinstance(raw_input, list) or not raw_input:
        return raw_input, []
    end = len(raw_input)
    definitions: list[dict[str, Any]] = []
    while end > 0:
        definition = _offered_tool(raw_input[end - 1])
        if definition is None:
            break
        definitions.append(definition)
        end -= 1
    if not definitions:
        return raw_input, []
    definitions.reverse()  # in the order offered
    return raw_input[:end], definitions


def tool_call_id(reader: SpanReader) -> str | None:
    """The call id a tool run answers, as the handler records it in the run's metadata (each metadata value is
    written as JSON: a string quoted)."""
    return as_text(parse_json(reader.get(TOOL_CALL_ID)))


def run_text(value: Any) -> str | None:
    """An agent run's input or output as text: a LangChain messages state's last message (the question, the answer),
    not the state's JSON; anything else (an `@observe`d function's arguments) rendered whole."""
    if value is None:
        return None
    text = langchain.state_text(value)
    return text if text is not None else render(value)


def responses_blocks(raw: Any, raw_text: Any) -> Any:
    """`raw` (a message or a list of them, parsed from `raw_text`) with the Responses items langchain-openai keeps as
    content blocks read as LangChain means them: a `function_call` item that is one of the message's `tool_calls` left
    out, a `reasoning` item its summary's text. A look at the text first: most messages hold neither."""
    if not isinstance(raw_text, str) or ('"function_call"' not in raw_text and '"summary"' not in raw_text):
        return raw
    if isinstance(raw, list):
        return [_responses_message(message) for message in raw]
    return _responses_message(raw)


def _responses_message(message: Any) -> Any:
    """The message as it is where none of its blocks changes (a re-sent message stays the object it was)."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    called = {call.get("id") for call in message.get("tool_calls") or () if isinstance(call, dict)}
    blocks: list[Any] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "function_call" and block.get("call_id") in called:
            continue  # the call is read from `tool_calls`
        if kind == "reasoning" and "summary" in block:
            block = {"type": "reasoning", "text": openai_sdk.reasoning_item_text(block)}
        blocks.append(block)
    if blocks == content:
        return message
    return {**message, "content": blocks}
