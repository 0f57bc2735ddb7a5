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
  (`mastra.model_step.input` is a preview, tool calls and results written as `[tool: <name>]`: not read.)
- a tool's result is `JSON.stringify`'s text of what it returned, as the model was sent it (compact): kept as
  it is, not decoded and written again. A tool that throws: its span records no result; the model is sent
  the error's message (`errorText: reifiedError.message`), which the span records as `error.message`.
- an `invoke_agent` span's prompt is `mastra.agent_run.input` (the text, or the messages, `generate` was
  given), its answer `mastra.agent_run.output` (`{text, …}`); `gen_ai.conversation.id` is the memory
  thread's id. Its `gen_ai.tool.definitions` are the tools' names only.
- Mastra's other spans (`model_generation`, `model_chunk`, `processor_run`, `memory_operation`) restate
  what the calls and tools record, or are its own bookkeeping: no operation, their attributes read.
"""

from __future__ import annotations

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
_RESTATING = ("model_generation", "model_chunk", "processor_run", "memory_operation")
_BOOKKEEPING_PREFIXES = ("mastra.metadata.", "mastra.model_step.", "mastra.agent_run.")
_BOOKKEEPING = (SPAN_TYPE, "gen_ai.operation.name", "mastra.completion_start_time", "mastra.tags", "error.message")
TOOL_CALLS_FINISH = "tool-calls"  # the AI SDK's finish reason for an answer asking for tools


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
        if isinstance(raw, str) and isinstance(operation.result, dict | list):
            operation.result = raw
        if operation.result is None and operation.error is not None:
            operation.result = error_message or operation.error.status_message or None
    elif isinstance(operation, AgentRun):
        operation.input_text = operation.input_text or prompt_text(reader.attributes.get("mastra.agent_run.input"))
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
    call.error = span_error(reader)
    return call
