"""openai-agents' own tracing, as logfire's `instrument_openai_agents()` turns it into OTel spans.

Scope `logfire.openai_agents`; what a span is shows in its `logfire.msg_template`:

- `Responses API with {gen_ai.request.model!r}` / `Chat completion with …`: one model call. The
  request's input items are `raw_input` (Responses items: messages, `function_call`,
  `function_call_output`), the answer is `response` (its `output` items, `instructions`, `tools`);
  `events` repeats both as GenAI message events (read for chat completions, which have no
  `raw_input`); token counts are `gen_ai.usage.*`. The items are the API's: a `function_call` has
  an item id of its own (`id`, `fc_…`) beside its `call_id` (`call_…`), which its
  `function_call_output` names: the call is its `call_id`.
- `Function: {name}`: a tool execution (`name`, `input`, `output`; no call id, so it meets its
  call by name and arguments); `error` when it failed.
- `Handoff: {from_agent} → {to_agent}`: the handoff the model's `transfer_to_…` call made.
- `Agent run: {name!r}`: an agent run. `Task: …` (one `Runner.run`), `Turn …` and the trace root
  `OpenAI Agents trace: {name}` group them and repeat their usage: not agents, never counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import (
    openai_tool_definition,
    parse_arguments,
    parse_message,
    parse_messages,
    parse_part,
    render,
)
from evalkit.trajectory.mappers.reader import SpanReader, as_int, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, ErrorInfo, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "logfire-openai-agents"
SCOPE = "logfire.openai_agents"
_BOOKKEEPING = (
    "logfire.msg_template", "logfire.msg", "logfire.span_type", "logfire.json_schema", "logfire.level_num",
    "code.filepath", "code.function", "code.lineno", "gen_ai.system", "gen_ai.operation.name",
)
_GROUPING = ("type", "name", "sdk_span_type", "usage", "turn", "agent_name", "agent_trace_id", "group_id",
             "metadata", "tracing")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    template = reader.text("logfire.msg_template") or ""
    reader.consume(*_BOOKKEEPING)
    if template.startswith(("Responses API", "Chat completion")):
        return _llm_call(reader)
    if template.startswith("Function:"):
        return _tool_execution(reader)
    if template.startswith("Handoff:"):
        reader.consume("from_agent")
        return ToolExecution(span=reader.span, emitter=NAME, name=reader.span.name,
                             handoff_to=reader.text("to_agent"), error=_error(reader))
    if template.startswith("Agent run:"):
        reader.consume("handoffs", "tools", "output_type")
        return AgentRun(span=reader.span, emitter=NAME, name=reader.text("name"), error=_error(reader))
    reader.consume(*_GROUPING)  # a task, a turn, the trace: their usage sums the calls under them
    return None


def _error(reader: SpanReader) -> ErrorInfo | None:
    error = span_error(reader)
    detail = parse_json(reader.get("error"))
    if isinstance(detail, dict):
        error = error or ErrorInfo()
        data = detail.get("data")
        message = (data or {}).get("error") if isinstance(data, dict) else None
        error.status_message = error.status_message or render(detail.get("message") or "")
        if message:
            error.exceptions = [*error.exceptions, {"message": render(message)}]
    return error


def _items(value: Any) -> list[Message]:
    """Responses API input/output items as messages (a `function_call` item is the assistant's
    call, a `function_call_output` item a tool's result)."""
    messages: list[Message] = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("function_call", "function_call_output"):
            part = _function_call_item(item)
            if part is not None:
                messages.append(Message("assistant" if kind == "function_call" else "tool", [part]))
        elif "role" in item:
            message = parse_message(item)
            if message is not None:
                messages.append(message)
    return messages


def _function_call_item(item: dict[str, Any]) -> Part | None:
    """A `function_call` or `function_call_output` item as the call or result it is, under the call's `call_id`: a
    call's `id` is its item's (`fc_…`), which no result names."""
    part = parse_part(item)
    call_id = item.get("call_id")
    if part is None or not isinstance(call_id, str) or not call_id:
        return part
    return replace(part, call_id=call_id)


def _llm_call(reader: SpanReader) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=NAME)
    response = parse_json(reader.get("response"))
    response = response if isinstance(response, dict) else {}
    raw_input = parse_json(reader.get("raw_input"))
    events = parse_messages(reader.get("events"), memo=reader.memo)
    if isinstance(raw_input, list):
        call.input_messages = _items(raw_input)
        output = Message("assistant", [p for m in _items(response.get("output")) for p in m.parts])
        call.output_messages = [output] if output.parts else []
    else:  # chat completions: the events are the input messages, then the answer
        answer = len(events)
        while answer > 0 and events[answer - 1].role == "assistant":
            answer -= 1
        call.input_messages, call.output_messages = events[:answer], events[answer:]
    instructions = response.get("instructions")
    if isinstance(instructions, str) and instructions:
        call.system_instructions = [instructions]
    for tool in response.get("tools") or ():
        definition = openai_tool_definition(tool)
        if definition is not None:
            call.tool_definitions.append(definition)
    call.model = reader.text("gen_ai.response.model", "gen_ai.request.model")
    call.request_model = reader.text("gen_ai.request.model")
    call.provider = "openai"
    usage = response.get("usage")
    details = _details(usage, "input_tokens_details"), _details(usage, "output_tokens_details")
    call.usage = normalised_usage(
        reader.integer("gen_ai.usage.input_tokens"),
        reader.integer("gen_ai.usage.output_tokens"),
        cache_read=as_int(details[0].get("cached_tokens")),
        reasoning=as_int(details[1].get("reasoning_tokens")),
        input_includes_cache=True,  # the Responses API counts cached tokens in input_tokens
    )
    reader.consume("gen_ai.usage.raw", "usage", "response_id", "gen_ai.response.id", "model_settings")
    finish = parse_json(reader.get("gen_ai.response.finish_reasons"))
    if isinstance(finish, list):
        call.finish_reasons = [render(reason) for reason in finish]
    call.error = _error(reader)
    return call


def _details(usage: Any, key: str) -> dict[str, Any]:
    found = usage.get(key) if isinstance(usage, dict) else None
    return found if isinstance(found, dict) else {}


def _tool_execution(reader: SpanReader) -> ToolExecution:
    reader.consume("mcp_data")
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=reader.text("name"),
        arguments=parse_arguments(reader.get("input")),
        result=parse_json(reader.get("output")),
        error=_error(reader),
    )
