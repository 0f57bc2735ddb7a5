"""The LangSmith SDK's OpenTelemetry export (`LANGSMITH_OTEL_ENABLED`, scope `langsmith`).

The SDK turns each LangSmith run (a LangChain / LangGraph callback run, a `@traceable` function) into a
span (`langsmith/_internal/otel/_otel_exporter.py`, `OTELExporter._set_span_attributes`): the run type as
`langsmith.span.kind` and as `gen_ai.operation.name` (`llm` -> `chat`, `tool` -> `execute_tool`, any other
type as it is: `chain`), the run's metadata as `langsmith.metadata.<key>`, and the run's inputs and outputs,
whatever they are, as the JSON of `gen_ai.prompt` and `gen_ai.completion` (`_set_io_attributes`:
`span.set_attribute(GENAI_PROMPT, op.inputs.decode("utf-8"))`). So those two keys are not the GenAI
conventions' messages but LangChain's run payloads:

- a chat model run (`llm`): `{"messages": [[<message>, ...]]}` in, `{"generations": [[{"text", "message"}]],
  "llm_output", "type": "LLMResult"}` out, each message serialised by LangChain's `dumpd`
  (`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {"content", "tool_calls", ...}}`);
- a tool run: the tool's arguments in, `{"output": <the tool's return>}` out; under LangGraph's ToolNode the
  return is a ToolMessage as a model dump (`{"content", "type": "tool", "tool_call_id", "status"}`), whose
  `status: "error"` is how a tool that raised a handled `ToolException` failed (the span stays OK);
- a chain run (a graph, a node): its state, `{"messages": [...]}`. create_agent's graph is named after its
  agent, and every run inside it has `lc_agent_name` metadata naming that agent.

A `@traceable` / `wrap_openai` run records the function's own inputs and outputs (OpenAI's request and
response shapes), which `otel_genai` reads as they are: those are left to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.trajectory.mappers import langchain, otel_genai
from evalkit.trajectory.mappers.messages import parse_arguments, parse_messages
from evalkit.trajectory.mappers.reader import SpanReader, as_int, as_text, parse_json
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import LlmCall, Operation, ToolExecution, Usage
from evalkit.trajectory.span import LogRecord, Span

NAME = "langsmith"
SCOPE = "langsmith"  # `trace.get_tracer("langsmith", tracer_provider=...)` in OTELExporter
RUN_TYPE = "langsmith.span.kind"
AGENT_NAME = "langsmith.metadata.lc_agent_name"
USAGE_METADATA = "langsmith.metadata.usage_metadata"  # LangChain's usage_metadata, JSON (`_usage`)
# LangSmith's bookkeeping: the run's name and tags, its tracing project (`langsmith.trace.session_id` /
# `_name` name the LangSmith project the run was traced to, not a conversation), LangChain's serialised
# constructor, the run's metadata, the usage details as Python reprs (`str(usage_metadata[...])`), and
# `gen_ai.system`, which the exporter guesses from the model name (`langchain` for every chain and tool run).
_BOOKKEEPING = ("gen_ai.system", "langsmith.trace.name", "langsmith.trace.session_id", "langsmith.trace.session_name",
                "langsmith.span.tags", "langsmith.span.runtime", "langsmith.request.streaming",
                "langsmith.request.headers", "gen_ai.usage.input_token_details", "gen_ai.usage.output_token_details")
_BOOKKEEPING_PREFIXES = ("langsmith.metadata.", "gen_ai.serialized.")
_ROLES = {"SystemMessage": "system", "HumanMessage": "user", "AIMessage": "assistant", "ToolMessage": "tool",
          "FunctionMessage": "tool", "system": "system", "human": "user", "ai": "assistant", "tool": "tool",
          "function": "tool", "developer": "system"}
# An AIMessage's content blocks that restate its `tool_calls` (Anthropic's `tool_use`).
_CALL_BLOCKS = frozenset(("tool_use", "tool_call", "function_call", "server_tool_use"))


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE and RUN_TYPE in span.attributes


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    run_type = reader.text(RUN_TYPE)
    reader.consume(*_BOOKKEEPING)
    reader.consume_prefix(*_BOOKKEEPING_PREFIXES)
    if run_type not in ("llm", "tool"):
        # A chain, a parser, a retriever, a prompt template: `prompt` runs are written `gen_ai.operation.name`
        # `chat` too (WELL_KNOWN_OPERATION_NAMES), but format a prompt and call no model.
        reader.consume("gen_ai.operation.name")
        agent = as_text(reader.attributes.get(AGENT_NAME))
        if run_type != "chain" or agent is None or agent != reader.span.name:
            reader.consume("gen_ai.prompt", "gen_ai.completion")  # a node's or a runnable's state
            return None
        # create_agent's graph (named after its agent): the agent's run, its state in and out.
        run = otel_genai.agent_run(reader, emitter=NAME)
        run.name = agent
        run.input_text = langchain.state_text(parse_json(reader.get("gen_ai.prompt")))
        run.output_text = langchain.state_text(parse_json(reader.get("gen_ai.completion")))
        return run
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, ToolExecution):
        if "gen_ai.prompt" in reader.attributes:
            operation.arguments = parse_arguments(reader.get("gen_ai.prompt"))
        if "gen_ai.completion" in reader.attributes:
            operation.result = langchain.tool_run_output(parse_json(reader.get("gen_ai.completion")))
    elif isinstance(operation, LlmCall):
        usage = _usage(parse_json(reader.attributes.get(USAGE_METADATA)), operation.usage)
        if usage is not None:
            operation.usage = usage
        inputs = chat_messages(parse_json(reader.attributes.get("gen_ai.prompt")))
        if inputs is not None:
            operation.input_messages = parse_messages(inputs, memo=reader.memo)
        outputs = generation_messages(parse_json(reader.attributes.get("gen_ai.completion")))
        if outputs is not None:
            operation.output_messages = parse_messages(outputs, "assistant", reader.memo)
    return operation


def _usage(metadata: Any, flat: Usage) -> Usage | None:
    """The call's usage with its cache and reasoning counts, which LangChain's `usage_metadata` holds only in
    `input_token_details` (`cache_read`, `cache_creation`) and `output_token_details` (`reasoning`). The exporter
    writes those details as flat keys only when a run's outputs have `usage_metadata` at the top (not an
    LLMResult's) and then as Python reprs; LangChain's tracer copies the whole object into the run's metadata
    (`LangChainTracer._on_llm_end`), so it is `langsmith.metadata.usage_metadata`, JSON. Its `input_tokens` is
    LangChain's sum of every input token type, the cached ones too (as `gen_ai.usage.input_tokens`, the same
    number). None when it adds nothing to the flat counts."""
    if not isinstance(metadata, Mapping):
        return None
    inputs, outputs = metadata.get("input_token_details"), metadata.get("output_token_details")
    read = as_int(inputs.get("cache_read")) if isinstance(inputs, Mapping) else None
    written = as_int(inputs.get("cache_creation")) if isinstance(inputs, Mapping) else None
    reasoning = as_int(outputs.get("reasoning")) if isinstance(outputs, Mapping) else None
    if not (read or written or reasoning):
        return None
    input_tokens = flat.input_tokens if flat.input_tokens is not None else as_int(metadata.get("input_tokens"))
    output_tokens = flat.output_tokens if flat.output_tokens is not None else as_int(metadata.get("output_tokens"))
    return normalised_usage(input_tokens, output_tokens, cache_read=read, cache_write=written,
                            reasoning=reasoning, input_includes_cache=True)


def _message(raw: Any) -> dict[str, Any] | None:
    """A LangChain message as `dumpd` serialises it, in the OpenAI chat shape `parse_message` reads."""
    kwargs = langchain.serialized_kwargs(raw)
    if kwargs is None:
        return None
    ids = raw.get("id")
    # The class (a streamed answer's is `AIMessageChunk`), else the message's `type`; a ChatMessage's `role`.
    kinds = (ids[-1] if isinstance(ids, list) and ids else None, kwargs.get("type"))
    role = next((_ROLES[k.removesuffix("Chunk")] for k in kinds
                 if isinstance(k, str) and k.removesuffix("Chunk") in _ROLES), None)
    role = role or str(kwargs.get("role") or "user")
    content = kwargs.get("content")
    calls = [c for c in kwargs.get("tool_calls") or () if isinstance(c, Mapping)]
    if calls and isinstance(content, list):
        content = [b for b in content if not (isinstance(b, Mapping) and b.get("type") in _CALL_BLOCKS)]
    message: dict[str, Any] = {"role": role, "content": content}
    if calls:
        message["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"), "args": c.get("args")} for c in calls]
    if role == "tool":
        message["tool_call_id"] = kwargs.get("tool_call_id")
    if kwargs.get("name") and role == "tool":
        message["name"] = kwargs["name"]
    return message


def _messages(items: Any) -> list[dict[str, Any]] | None:
    if not isinstance(items, list):
        return None
    read = [_message(item) for item in items]
    return None if not read or any(m is None for m in read) else read  # type: ignore[return-value]


def chat_messages(inputs: Any) -> list[dict[str, Any]] | None:
    """A chat model run's input messages (its first prompt: `{"messages": [[...]]}`), a text model run's prompt
    (`{"prompts": [text]}`) as a user message; None if neither."""
    prompts = inputs.get("prompts") if isinstance(inputs, Mapping) else None
    if isinstance(prompts, list) and prompts and isinstance(prompts[0], str):
        return [{"role": "user", "content": prompts[0]}]
    return _messages(langchain.serialized_messages(inputs, "messages"))


def generation_messages(outputs: Any) -> list[dict[str, Any]] | None:
    """A chat model run's answer: the messages of its first prompt's generations (an LLMResult)."""
    generations = outputs.get("generations") if isinstance(outputs, Mapping) else None
    if not isinstance(generations, list) or not generations or not isinstance(generations[0], list):
        return None
    found = []
    for generation in generations[0]:
        if not isinstance(generation, Mapping):
            return None
        message = _message(generation.get("message"))
        if message is None:  # a completion model's generation: its text
            text = generation.get("text")
            if not isinstance(text, str):
                return None
            message = {"role": "assistant", "content": text}
        found.append(message)
    return found

