"""Mastra's AI tracing exported by `@mastra/otel-exporter` (scope `@mastra/otel-exporter`).

The exporter writes Mastra's spans with GenAI attributes (`invoke_agent`, `chat`, `execute_tool`), read by the
GenAI mapper, and Mastra's own (`mastra.span.type`, `mastra.<type>.input/output`, `mastra.metadata.*`). One
model call is two spans: `agent_step <agent>` (`model_step`, Mastra's "one per model API call", holding the
call's tool executions) and, inside it, `chat <model>` (`model_inference`, the provider call: model, usage,
finish reason). What is Mastra's own:

- the `chat` span records no input (`@mastra/core` opens it with `modelSpanTracker.startInference()`, no
  payload) and only the text of the answer: the exporter's `convertMastraMessagesToGenAIMessages` turns an
  output `{text, toolCalls}` into `[{role: "assistant", parts: [{type: "text", content: text}]}]`. The answer
  whole, tool calls with their ids, is the step span's `mastra.model_step.output`. So the step span is mapped
  as the call too, and both are given one response id (the step span's id: the `chat` span's parent) for
  the builder to tell them reports of one call (trajectory/same_call.py): the step's answer is kept, the
  `chat` span's model, usage and finish reasons fill it in. A `chat` span that asked for tools is given no
  answer of its own (its text without the calls is not the answer); one that did not keeps its text.
  (`mastra.model_step.input` is a preview, tool calls and results written as `[tool: <name>]`: not read, but
  for a delegated agent's context, below.)
- a tool's result is `JSON.stringify`'s text of what it returned, as the model was sent it (compact): kept as
  it is, not decoded and written again. A tool that throws: its span records no result; the model is sent
  the error's message (`errorText: reifiedError.message`), which the span records as `error.message`.
- an `invoke_agent` span's prompt is `mastra.agent_run.input` (the text, or the messages, `generate` was
  given: model messages, or Mastra's stored ones, `{role, content: {format: 2, parts}}`), its answer
  `mastra.agent_run.output` (`{text, …}`); `gen_ai.conversation.id` is the memory thread's id. Its
  `gen_ai.tool.definitions` are the tools' names only.
- an agent with `agents: {…}` (Mastra's subagents, or "supervisor agents") is offered each as a tool
  `agent-<key>` whose execution runs that agent inside the tool's span (its `invoke_agent` span a child of
  it). The tool returns `{text, subAgentThreadId, subAgentResourceId, subAgentToolResults, …}`, recorded
  whole as its result; the model is sent its `text` alone (the tool's `toModelOutput`, with `\n\n[ref: …]`
  when it holds a result reference; a `mapping` span under the call's generation records the two): the
  result is that text. (Unless the run set `delegation.includeSubAgentToolResultsInModelContext`, which
  sends the object whole: the tool's span does not say so.) The delegated agent is given the prompt as its
  `messages` (its span's input) and the parent's conversation, its system prompt and questions and text
  answers, as `context`, sent before the prompt and recorded only in the model steps' input preview, whose
  system, user and text-only assistant messages are whole. So a run's first step whose input holds more
  questions after the last answer than the prompt alone is read from that preview (system, user and
  assistant texts; the tool placeholders left out): what its agent was asked, and the conversation it was
  shown.
- an MCP server's tool (`@mastra/mcp`'s `MCPClient`) runs as a tool like any other, its span typed
  `mcp_tool_call` (an `execute_tool` all the same) and naming the server (`mastra.mcp_tool_call.server_name`,
  `server_version`, and its name again as `server.address`): nothing a step holds. An `isError` result is thrown
  by default (`onToolError: "throw"`), a `MastraError` whose message is the result's text: the span's error, with
  Mastra's classification of it (`error.domain`, `error.category`). What `toModelOutput` sent the model for a
  tool's result (an MCP tool with an output schema: the content's text, not the structured result the span
  records) is read from the tool-result chunk (trajectory/mappers/mastra_model_outputs.py).
- Mastra's other spans (`model_generation`, `model_chunk`, `processor_run`, `memory_operation`, `mapping`)
  restate what the calls and tools record, or are its own bookkeeping: no operation, their attributes read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import parse_arguments, prompt_text
from evalkit.trajectory.mappers.reader import SpanReader, as_text, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "mastra"
SCOPE = "@mastra/otel-exporter"
SPAN_TYPE = "mastra.span.type"
# The span types whose every attribute restates a call's, a tool's or the run's, or is Mastra's bookkeeping.
_RESTATING = ("model_generation", "model_chunk", "processor_run", "memory_operation", "mapping")
_BOOKKEEPING_PREFIXES = ("mastra.metadata.", "mastra.model_step.", "mastra.agent_run.", "mastra.mcp_tool_call.")
# `error.domain` / `error.category`: a `MastraError`'s classification (an MCP tool's `isError`: MCP, THIRD_PARTY).
_BOOKKEEPING = (SPAN_TYPE, "gen_ai.operation.name", "mastra.completion_start_time", "mastra.tags", "error.message",
                "error.domain", "error.category")
MCP_TOOL_CALL = "mcp_tool_call"  # an MCP server's tool; its `server.address` is the server's name, no address
TOOL_CALLS_FINISH = "tool-calls"  # the AI SDK's finish reason for an answer asking for tools
DELEGATION_TOOL_PREFIX = "agent-"  # `Agent.listAgentTools`: the tool running subagent <key> is `agent-<key>`
# What the step input preview writes for a part it does not give whole (@mastra/observability's `summarizePart`):
# a tool call, a tool result not mapped to text, reasoning, media.
_PREVIEW_PLACEHOLDER = re.compile(r"\[(?:tool: [^\]]*|tool-result: [^\]]*|reasoning|image|file|object)\]")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def call_key(step_span_id: str) -> str:
    """The response id a model step span and its `chat` span share (see the module's docstring)."""
    return f"mastra-model-step:{step_span_id}"


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    span_type = reader.text(SPAN_TYPE)
    if span_type in _RESTATING:
        reader.consume_prefix("mastra.")
        reader.consume("gen_ai.operation.name")
        return None
    if span_type == "model_step":
        operation: Operation | None = _model_step(reader)
    else:
        operation = otel_genai.map_span(reader, logs)
    error_message = reader.text("error.message")
    if span_type == MCP_TOOL_CALL:
        reader.consume("server.address")
    reader.consume(*_BOOKKEEPING)
    reader.consume_prefix(*_BOOKKEEPING_PREFIXES)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, LlmCall) and span_type == "model_inference":
        if reader.span.parent_span_id:
            operation.response_id = call_key(reader.span.parent_span_id)
        if TOOL_CALLS_FINISH in operation.finish_reasons:
            operation.output_messages = []
    elif isinstance(operation, ToolExecution):
        raw = reader.attributes.get("gen_ai.tool.call.result")
        delegated = _delegation_answer(operation)
        if delegated is not None:
            operation.result = delegated
        elif isinstance(raw, str) and isinstance(operation.result, dict | list):
            operation.result = raw
        if operation.result is None and operation.error is not None:
            operation.result = error_message or operation.error.status_message or None
    elif isinstance(operation, AgentRun):
        operation.input_text = operation.input_text or prompt_text(
            _model_messages(parse_json(reader.attributes.get("mastra.agent_run.input"))))
        answer = parse_json(reader.attributes.get("mastra.agent_run.output"))
        if isinstance(answer, dict) and isinstance(answer.get("text"), str) and answer["text"]:
            operation.output_text = answer["text"]
        reader.consume("gen_ai.tool.definitions")  # the tools' names, not their definitions
    return operation


def _model_step(reader: SpanReader) -> LlmCall:
    """A model step: the call's answer (`mastra.model_step.output`: `{text, toolCalls: [{toolCallId,
    toolName, args}]}`), keyed to the `chat` span inside it."""
    span = reader.span
    call = LlmCall(span=span, emitter=NAME, response_id=call_key(span.span_id))
    output = parse_json(reader.attributes.get("mastra.model_step.output"))
    if isinstance(output, dict):
        parts: list[Part] = []
        reasoning = output.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            parts.append(Part("reasoning", text=reasoning))
        text = output.get("text")
        if isinstance(text, str) and text:
            parts.append(Part("text", text=text))
        calls: Any = output.get("toolCalls")
        for raw in calls if isinstance(calls, list) else ():
            if isinstance(raw, dict):
                parts.append(Part("tool_call", call_id=as_text(raw.get("toolCallId")),
                                  name=as_text(raw.get("toolName")),
                                  arguments=parse_arguments(raw.get("args", raw.get("input")))))
        call.output_messages = [Message("assistant", parts)]
    if reader.integer("mastra.model_step.step_index") == 0:
        call.input_messages = _context_given(parse_json(reader.attributes.get("mastra.model_step.input")))
    call.error = span_error(reader)
    return call


def _delegation_answer(execution: ToolExecution) -> str | None:
    """What the model was sent for a subagent's delegation tool (`agent-<key>`): the text of its `{text, …}`."""
    result = execution.result
    if not (execution.name or "").startswith(DELEGATION_TOOL_PREFIX) or not isinstance(result, dict):
        return None
    text, ref = result.get("text"), result.get("ref")
    if not isinstance(text, str):
        return None
    return f"{text}\n\n[ref: {ref}]" if isinstance(ref, str) and ref else text


def _model_messages(value: Any) -> Any:
    """Mastra's stored messages (`{role, content: {format: 2, parts}}`) as GenAI messages (`{role, parts}`); any
    other value as it is."""
    if not isinstance(value, list):
        return value
    messages: list[Any] = []
    for item in value:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            messages.append({"role": item.get("role", "user"), "parts": content["parts"]})
        else:
            messages.append(item)
    return messages


def _context_given(preview: Any) -> list[Message]:
    """A run's first step's input, when it was asked more after the last answer than its prompt alone (a delegated
    agent, sent its parent's conversation before the prompt): the preview's system, user and assistant texts, the
    placeholders of what it does not give whole left out. Else none: the run's span says what it was asked; so too
    for a preview cut short (past 50 messages Mastra's serialiser writes the rest as one `[…N more items]` text)."""
    if not isinstance(preview, list) or not all(isinstance(m, dict) for m in preview):
        return []
    roles = [str(m.get("role")) for m in preview]
    asked = 0
    for role in reversed(roles):
        if role == "system":
            continue
        if role != "user":
            break
        asked += 1
    if asked < 2:
        return []
    messages: list[Message] = []
    for message, role in zip(preview, roles, strict=True):
        content = message.get("content")
        if role not in ("system", "user", "assistant") or not isinstance(content, str):
            continue
        text = _PREVIEW_PLACEHOLDER.sub("", content).strip() if role == "assistant" else content
        if text:
            messages.append(Message(role, [Part("text", text=text)]))
    return messages
