"""MLflow tracing spans: every `mlflow.*` attribute value is JSON-encoded (a type is `"\\"LLM\\""`).

LLM / CHAT_MODEL spans carry `mlflow.spanInputs` (request, usually with OpenAI-style
`messages`), `mlflow.spanOutputs` (the response), `mlflow.chat.tokenUsage`, `mlflow.llm.cost`,
`mlflow.llm.model` / `mlflow.llm.provider`; TOOL spans their inputs and outputs; AGENT spans a run.
`mlflow.openai.autolog()` also copies the request's `model` and `tools` onto the span as they were
passed (both are in `mlflow.spanInputs` too), and every span has its severity in `mlflow.spanLogLevel`
(the error itself is the span's status). Seen in a real capture: tests/captures/mlflow_openai.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.trajectory.mappers import mlflow_dspy
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import openai_tool_definition, parse_messages, render
from evalkit.trajectory.mappers.reader import SpanReader, as_decimal, as_int, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution, Usage
from evalkit.trajectory.span import LogRecord, Span

NAME = "mlflow"
_LLM_TYPES = {"LLM", "CHAT_MODEL"}


def detect(span: Span) -> bool:
    return "mlflow.spanType" in span.attributes


def _decoded(reader: SpanReader, key: str) -> Any:
    return parse_json(reader.get(key))


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    kind = str(_decoded(reader, "mlflow.spanType") or "").upper()
    reader.consume(
        "mlflow.traceRequestId",
        "mlflow.experimentId",
        "mlflow.spanFunctionName",
        "mlflow.message.format",
        "mlflow.spanLogLevel",
    )
    reader.consume_prefix("mlflow.traceTag.", "mlflow.trace.")
    if kind in _LLM_TYPES:
        return _llm_call(reader)
    if kind == "TOOL":
        return _tool(reader)
    if kind == "AGENT":
        return _agent(reader)
    # A chain's (a DSPy module's, adapter's) inputs and outputs are what the calls inside it were sent and answered.
    reader.consume("mlflow.chat.tokenUsage", "mlflow.llm.cost", "mlflow.spanInputs", "mlflow.spanOutputs")
    mlflow_dspy.read_module(reader)
    return None


def _llm_call(reader: SpanReader) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=NAME)
    reader.consume("model", "tools")  # autolog's copies of the request's arguments, read from spanInputs
    inputs = _decoded(reader, "mlflow.spanInputs")
    outputs = _decoded(reader, "mlflow.spanOutputs")
    call.input_messages = parse_messages(inputs, memo=reader.memo)
    call.output_messages = parse_messages(outputs, "assistant", reader.memo)
    call.model = _text(_decoded(reader, "mlflow.llm.model"))
    if call.model is None and isinstance(outputs, Mapping):
        call.model = _text(outputs.get("model"))
    if call.model is None and isinstance(inputs, Mapping):
        call.model = _text(inputs.get("model"))
    call.provider = _text(_decoded(reader, "mlflow.llm.provider"))
    usage = _usage(_decoded(reader, "mlflow.chat.tokenUsage"))
    if usage is not None:
        call.usage = usage
    cost = _decoded(reader, "mlflow.llm.cost")
    if isinstance(cost, Mapping):
        call.reported_cost = as_decimal(cost.get("total_cost"))
    for tool in _decoded(reader, "mlflow.chat.tools") or ():
        definition = openai_tool_definition(tool)
        if definition is not None:
            call.tool_definitions.append(definition)
    if mlflow_dspy.is_dspy_call(reader):
        mlflow_dspy.read_call(call, reader)  # DSPy's adapter's fields: a ReAct step's tool call, its loop re-rendered
    else:
        mlflow_dspy.read_module(reader)  # a DSPy Predict's span (LLM): the module around the LM call
    call.error = span_error(reader)
    return call


def _usage(value: Any) -> Usage | None:
    """`mlflow.chat.tokenUsage` (decoded) as usage: prompt tokens counting the cache's."""
    if not isinstance(value, Mapping):
        return None
    return normalised_usage(
        as_int(value.get("input_tokens")),
        as_int(value.get("output_tokens")),
        cache_read=as_int(value.get("cache_read_input_tokens")),
        cache_write=as_int(value.get("cache_creation_input_tokens")),
    )


def run_total(span: Span) -> Usage | None:
    """A run's total on a span that is no LLM call: DSPy's usage tracking (on under `mlflow.dspy.autolog()`) records the
    program's tokens on its root span only (`mlflow.chat.tokenUsage` of the CHAIN), no LM call's (trajectory/
    run_totals.py)."""
    raw = span.attributes.get("mlflow.chat.tokenUsage")
    if not isinstance(raw, str) or str(parse_json(span.attributes.get("mlflow.spanType")) or "").upper() in _LLM_TYPES:
        return None
    return _usage(parse_json(raw))


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _tool(reader: SpanReader) -> ToolExecution:
    inputs = _decoded(reader, "mlflow.spanInputs")
    call_id = None
    if isinstance(inputs, Mapping):
        call_id = _text(inputs.get("tool_call_id") or inputs.get("id"))
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=mlflow_dspy.tool_name(reader) or reader.span.name,
        call_id=call_id,
        arguments=inputs,
        result=_decoded(reader, "mlflow.spanOutputs"),
        error=span_error(reader),
    )


def _agent(reader: SpanReader) -> AgentRun:
    inputs = _decoded(reader, "mlflow.spanInputs")
    outputs = _decoded(reader, "mlflow.spanOutputs")
    reader.consume("mlflow.chat.tokenUsage", "mlflow.llm.cost")
    return AgentRun(
        span=reader.span,
        emitter=NAME,
        name=reader.span.name,
        input_text=render(inputs) if inputs is not None else None,
        output_text=render(outputs) if outputs is not None else None,
        error=span_error(reader),
    )
