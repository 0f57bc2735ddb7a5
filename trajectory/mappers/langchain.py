"""LangChain / LangGraph's own shapes, as the instrumentations that trace it record them.

A graph run's input and output are its state, `{"messages": [...]}`, the messages either as
`messages_to_dict` writes them (`{"type": "ai", "data": {"content": ...}}`, OpenInference), as
LangChain's `dumpd` does (`{"lc": 1, "kwargs": {"content": ...}}`, OpenLLMetry), or as the caller
passed them (`{"role": "user", "content": ...}`). What the run was asked and answered is the
text of the state's last message.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import dig, parse_json
from evalkit.trajectory.operations import Message


def _content(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    for holder in ("data", "kwargs"):
        inner = message.get(holder)
        if isinstance(inner, dict) and "content" in inner:
            return inner["content"]
    return message.get("content")


def state_text(value: Any) -> str | None:
    """The text of a messages state's last message; None when `value` is no messages state."""
    if isinstance(value, str):
        if not value.startswith('{"messages"'):
            return None
        value = parse_json(value)
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list) or not messages:
        return None
    content = _content(messages[-1])
    if isinstance(content, list):  # content blocks
        return "\n".join(render(block.get("text")) for block in content if isinstance(block, dict) and "text" in block)
    return render(content)


# LangChain.js's OpenInference instrumentation (npm @arizeai/openinference-instrumentation-langchain): its scope.
JS_OPENINFERENCE_SCOPE = "@arizeai/openinference-instrumentation-langchain"


def tool_run_output(value: Any) -> Any:
    """What a tool run returned: LangChain's tracer records a tool run's outputs as `{output}`
    (`BaseTracer.handleToolEnd`: `run.outputs = { output }`; Python's the same). LangChain.js's OpenInference
    instrumentation writes such a map (its only value not a string) as the whole map's JSON (`formatIO`), and the
    LangSmith SDK's OTel export writes every run's outputs so (`gen_ai.completion`): `{"output": <ToolMessage>}`,
    whose ToolMessage (content, call id, status) is the result."""
    if isinstance(value, dict) and set(value) == {"output"}:
        return value["output"]
    return value


def serialized_kwargs(raw: Any) -> dict[str, Any] | None:
    """A message as LangChain's `dumpd` (and LangChain.js) serialises it, `{"lc": 1, "type": "constructor", "id":
    [...], "kwargs": {...}}`: its kwargs; None for anything else."""
    kwargs = raw.get("kwargs") if isinstance(raw, dict) and raw.get("lc") == 1 else None
    return kwargs if isinstance(kwargs, dict) else None


def _serialized_call_ids(kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
    # (name, id) of a message's tool calls, from where the flattened ones were read: the provider's raw
    # `additional_kwargs.tool_calls`, else LangChain's own `tool_calls`.
    raw = kwargs.get("additional_kwargs")
    calls = raw.get("tool_calls") if isinstance(raw, dict) else None
    if isinstance(calls, list) and calls:
        return [(dig(c, "function", "name"), dig(c, "id")) for c in calls]
    calls = kwargs.get("tool_calls")
    return [(dig(c, "name"), dig(c, "id")) for c in calls] if isinstance(calls, list) else []


def js_call_ids(messages: list[Message], serialized: Any) -> None:
    """Give a LangChain.js LLM span's flattened messages the call ids of the messages it serialised.

    The instrumentation flattens a message's tool calls as their function name and arguments only
    (`getToolCallDataFromAdditionalKwargs`) and a tool message with no `tool_call_id` (`parseMessage`): with no
    ids, parallel results are paired with calls by order and a failed tool's result (in the next call's input
    only) with the wrong call. `input.value` (`{"messages": [[...]]}`) and `output.value`
    (`{"generations": [[{"message": ...}]]}`) hold the same messages serialised, with their ids. Used only when
    the lists are as long and each message's calls have the same names."""
    if not isinstance(serialized, list) or len(serialized) != len(messages):
        return
    for message, raw in zip(messages, serialized, strict=True):
        kwargs = serialized_kwargs(raw)
        if kwargs is None:
            continue
        calls = message.tool_calls
        found = _serialized_call_ids(kwargs) if calls else []
        if calls and [name for name, _ in found] == [part.name for part in calls]:
            for part, (_, call_id) in zip(calls, found, strict=True):
                if part.call_id is None and isinstance(call_id, str) and call_id:
                    part.call_id = call_id
        result_id = kwargs.get("tool_call_id")
        for part in message.parts:
            if part.kind == "tool_result" and part.call_id is None and isinstance(result_id, str) and result_id:
                part.call_id = result_id


def serialized_messages(value: Any, key: str) -> Any:
    """The first message list of a LangChain LLM run's inputs (key `messages`: `{"messages": [[...]]}`) or the
    messages of the first generations of its outputs (key `generations`), as JSON text or decoded."""
    outer = parse_json(value)
    lists = outer.get(key) if isinstance(outer, dict) else None
    first = lists[0] if isinstance(lists, list) and lists else None
    if key == "generations" and isinstance(first, list):
        return [g.get("message") if isinstance(g, dict) else None for g in first]
    return first
