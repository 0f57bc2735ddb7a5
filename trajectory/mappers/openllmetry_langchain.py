"""LangChain's chat model runs and agent middleware as OpenLLMetry's LangChain instrumentation
(opentelemetry-instrumentation-langchain 0.62) records them; its LangGraph graphs are read in `openllmetry_langgraph`.

Its callback handler writes a chat model run's messages in the GenAI form (`span_utils.set_chat_request` and
`set_chat_response`), turning LangChain's message content into parts its own way (`_content_to_parts`):

- a content block it does not know (anything but text, `image_url` and `image`) becomes a text part holding the
  block's JSON. langchain-openai on the Responses API keeps each function call of an answer in the message's content
  as such a block (`{"type": "function_call", "call_id", "name", "arguments", …}`), and the handler writes the
  message's `tool_calls` as tool_call parts beside it: each call of an answer, and of the history re-sent after it,
  is there twice, once as text the model never wrote. That text is dropped where the call is a tool_call part of
  the same message (its `call_id`); any other block's JSON is left as recorded;
- the content parts of every system message go into one `gen_ai.system_instructions` list, so a system prompt
  made of content blocks (LangChain's agent middleware appends its sections so: Deep Agents', `TodoListMiddleware`'s)
  is recorded as several parts. They are one system prompt, read as one text, its parts joined as a message's are
  (`Message.text`, as OpenInference's record of the same message reads).

A tool span records the tool's return, and LangChain's agent middleware may change it before the model sees it
(`wrap_tool_call`, around the tool's run: HumanInTheLoopMiddleware prepends a notice to the result of a call a
reviewer edited). What the model was shown is the next chat call's input: its new results (after the last answer)
are the calls' results as shown (`LlmCall.shown_tool_results`).

Its wrappers of LangChain's agent middleware open an `execute_task <Middleware>.<hook>` span for each hook run
(`gen_ai.task.kind`: the middleware's class, `gen_ai.task.name`, `gen_ai.task.status`): bookkeeping of the agent
graph's nodes, no step of the agent's.
"""

from __future__ import annotations

from dataclasses import replace

from evalkit.trajectory.mappers.messages import parse_json
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part

_MIDDLEWARE_HOOK_TASK = ("gen_ai.task.kind", "gen_ai.task.name", "gen_ai.task.status")
_FUNCTION_CALL_BLOCK = '"type": "function_call"'  # as the handler's json.dumps writes the block's type


def consume_middleware_hook(reader: SpanReader) -> None:
    """A middleware hook's `execute_task` span (the only one of the instrumentation's naming a `gen_ai.task.kind`):
    its task record, read."""
    if reader.has("gen_ai.task.kind") and reader.text("gen_ai.operation.name") == "execute_task":
        reader.consume(*_MIDDLEWARE_HOOK_TASK)


def read_call(call: LlmCall) -> None:
    """A chat model run's call: the function call blocks restated as text taken out of its messages, its system
    prompt's parts one text, the results new in its input what the model was shown for their calls."""
    call.input_messages = [_without_restated_calls(message) for message in call.input_messages]
    call.output_messages = [_without_restated_calls(message) for message in call.output_messages]
    if len(call.system_instructions) > 1:
        call.system_instructions = ["\n".join(call.system_instructions)]  # as `Message.text` joins a message's parts
    call.shown_tool_results = _new_results(call.input_messages)


def _new_results(messages: list[Message]) -> dict[str, str]:
    """The tool results after the input's last answer, by call id: the ones this call shows the model first (those
    before were shown to an earlier call)."""
    last_answer = max((i for i, message in enumerate(messages) if message.role == "assistant"), default=-1)
    return {part.call_id: part.text for message in messages[last_answer + 1:] for part in message.parts
            if part.kind == "tool_result" and part.call_id and part.text is not None}


def _restated_call_id(part: Part) -> str | None:
    """The call id of a text part holding a Responses function call block's JSON; None for any other part."""
    text = part.text
    if part.kind != "text" or not text or not text.startswith("{") or _FUNCTION_CALL_BLOCK not in text:
        return None
    block = parse_json(text)
    call_id = block.get("call_id") if isinstance(block, dict) and block.get("type") == "function_call" else None
    return call_id if isinstance(call_id, str) and call_id else None


def _without_restated_calls(message: Message) -> Message:
    """The message, or a copy of it without the text parts restating its tool_call parts (the parsed messages are
    shared by the calls re-sending them: never changed in place)."""
    calls = {part.call_id for part in message.parts if part.kind == "tool_call" and part.call_id}
    if not calls:
        return message
    parts = [part for part in message.parts if _restated_call_id(part) not in calls]
    return message if len(parts) == len(message.parts) else replace(message, parts=parts)
