"""OpenLLMetry / Traceloop: the legacy indexed form, the current GenAI form and the SDK decorators.

Legacy (instrumentations up to ~0.54): `gen_ai.prompt.<i>.{role,content,tool_calls.<j>.*,tool_call_id}`,
`gen_ai.completion.<i>.*`, `llm.request.functions.<i>.*`, underscore cache keys
(`gen_ai.usage.cache_read_input_tokens`). Current (semconv-ai 0.5): OTel GenAI attributes on
`openai.chat` spans. Decorated workflows: `traceloop.span.kind` tool / agent spans with
`traceloop.entity.input` / `traceloop.entity.output` JSON.

The openai-agents instrumentation (scope `opentelemetry.instrumentation.openai_agents`) is a tracing
processor of the SDK's own tracing: an `Agent Workflow` workflow span per run, `<agent>.agent`
spans, `<tool>.tool` spans with GenAI tool attributes (no call id), `<from> → <to>.handoff` spans and
one `openai.response` span per model call in the GenAI form; no guardrail span (a guardrail's agent's span is beside
the agent it guards: `openllmetry_openai_agents`).

The LlamaIndex instrumentation's agent runs and `call_tool` steps are read in `openllmetry_llamaindex`, a ReActAgent's
calls (any provider instrumentation's spans) in `llamaindex_react`; the Haystack instrumentation's generator spans,
which record no answer, in `haystack.read_openllmetry_generator`. The LangChain instrumentation's record of a LangGraph
handoff (the handoff tool's destination, its Command, the ParentCommand it leaves spans with) in
`openllmetry_langgraph`. The openai instrumentation's Responses API calls (`openai.response` spans: reasoning summaries
written as JSON, function calls named by their items' ids) in `openllmetry_openai`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import (
    ag2,
    crewai,
    haystack,
    llamaindex_react,
    openllmetry_bedrock,
    openllmetry_langchain,
    openllmetry_langgraph,
    openllmetry_llamaindex,
    openllmetry_openai,
    otel_genai,
    otel_openai_agents,
)
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import openai_tool_definition, parse_arguments, parse_json, render
from evalkit.trajectory.mappers.reader import SpanReader, dig, indexed, unflatten
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "openllmetry"
OPENAI_AGENTS_SCOPE = "opentelemetry.instrumentation.openai_agents"


# OpenLLMetry's instrumentations report under `opentelemetry.instrumentation.<library>`, and so do the
# OpenTelemetry project's own GenAI instrumentations (opentelemetry-python-contrib). Where OpenLLMetry
# held a library's name first, the OpenTelemetry project's package is suffixed `-v2` (openai-v2, whose
# scope is `opentelemetry.instrumentation.openai_v2`; vertexai-v2, …): plain GenAI
# semantic conventions, read by `otel_genai` and reported as such, not as OpenLLMetry's. So is the
# project's Google Gen AI SDK one, `google_genai` (OpenLLMetry's is `google_generativeai`). AG2 1.x names its
# own TelemetryMiddleware's tracer `opentelemetry.instrumentation.ag2` (read by `ag2`).
# openai-agents-v2 keeps OpenLLMetry's `openai_agents` scope: its spans are told apart by `otel_openai_agents`.
def _openllmetry_scope(scope: str) -> bool:
    return (scope.startswith("opentelemetry.instrumentation.") and not scope.endswith("_v2")
            and scope != otel_genai.GOOGLE_GENAI_SCOPE and scope != ag2.SCOPE)


def detect(span: Span) -> bool:
    attributes = span.attributes
    if "traceloop.span.kind" in attributes or "llm.request.type" in attributes:
        return True
    if _openllmetry_scope(span.scope_name) and otel_genai.detect(span) and not otel_openai_agents.detect(span):
        return True
    return any(key.startswith(("gen_ai.prompt.0.", "gen_ai.completion.0.")) for key in attributes)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume(
        # `gen_ai.headers`: 0.62's openai instrumentation's name for the request's headers (`llm.headers` before).
        "llm.request.type", "llm.is_streaming", "gen_ai.is_streaming", "llm.headers", "gen_ai.headers",
        "gen_ai.openai.api_base"
    )
    reader.consume_prefix("traceloop.association.properties.", "traceloop.workflow.", "traceloop.entity.path")
    kind = reader.text("traceloop.span.kind")
    if kind in ("tool", "agent", "workflow", "task"):
        crewai.consume_openllmetry(reader)  # the crewai instrumentation's task and agent spans
        # 0.5x's LangChain callback repeats the entity record in GenAI attributes: read as the entity is.
        reader.consume_prefix("gen_ai.task.")
        reader.consume("gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.operation.name",
                       "gen_ai.provider.name", "gen_ai.tool.type", "gen_ai.tool.description")
    langgraph = reader.span.scope_name == openllmetry_langgraph.LANGCHAIN_SCOPE
    if langgraph:
        openllmetry_langgraph.consume(reader)  # a Command's `goto` span, the ParentCommand it leaves spans with
        openllmetry_langchain.consume_middleware_hook(reader)  # an agent middleware hook's task record
    if kind == "tool":
        # A LangGraph handoff tool's run is a handoff; a Command's result, the ToolMessage the model is shown.
        return openllmetry_langgraph.tool(_decorated_tool(reader), reader) if langgraph else _decorated_tool(reader)
    if kind == "agent":
        return _decorated_agent(reader)
    if kind == "handoff":
        return _handoff(reader)
    llamaindex = openllmetry_llamaindex.map_entity(reader, kind, NAME)  # a LlamaIndex agent's run or tool step
    if llamaindex is not None:
        return llamaindex
    if kind in ("workflow", "task"):
        reader.consume_prefix("traceloop.entity.", "gen_ai.usage.", "llm.usage.")
        reader.consume("gen_ai.provider.name")
        # A LangGraph node's run that called `interrupt()` (HumanInTheLoopMiddleware's `after_model`): it asks a person.
        paused = openllmetry_langgraph.interrupt(reader, NAME) if langgraph and reader.span.events else None
        # A map-reduce branch (a node's run a `Send` started): a subagent named after its node.
        return paused or (openllmetry_langgraph.branch(reader, NAME) if langgraph and kind == "task" else None)
    indexed_form = reader.has_prefix("gen_ai.prompt.") or reader.has_prefix("gen_ai.completion.")
    operation = otel_genai.map_span(reader, logs)
    if operation is None and (indexed_form or reader.has("gen_ai.request.model")):
        operation = otel_genai.llm_call(reader, logs)
    if isinstance(operation, LlmCall) and indexed_form:
        _read_indexed(reader, operation)
    if isinstance(operation, LlmCall) and reader.span.scope_name == openllmetry_bedrock.SCOPE:
        openllmetry_bedrock.read_call(reader, operation)  # the cache's tokens; Converse blocks written as text
    if isinstance(operation, LlmCall) and openllmetry_openai.is_responses_call(reader.span):
        openllmetry_openai.read_response(operation)  # reasoning summaries as JSON, calls under their items' ids
    if isinstance(operation, LlmCall) and reader.span.scope_name == haystack.OPENLLMETRY_SCOPE:
        haystack.read_openllmetry_generator(operation)  # its indexed completion is the result's keys
    if isinstance(operation, AgentRun) and crewai.is_openllmetry_crew_run(reader):
        # The crewai instrumentation's `crewai.workflow`: an invoke_agent span with no kind, name or output
        # the GenAI reading sees, which the builder would take for a synthetic root; it is the crew.
        crewai.read_openllmetry_crew_run(reader, operation)
    if isinstance(operation, AgentRun) and langgraph:
        openllmetry_langgraph.agent_run(operation)  # a handoff's ParentCommand leaving the agent's graph: no failure
    if isinstance(operation, LlmCall) and langgraph:
        openllmetry_langchain.read_call(operation)  # Responses function call blocks restated as text, system parts
    if isinstance(operation, LlmCall) and reader.span.scope_name == OPENAI_AGENTS_SCOPE:
        operation.output_messages = _one_answer(operation.output_messages)
        operation.input_messages = _history_call_ids(operation.input_messages)
    if isinstance(operation, LlmCall):
        # A LlamaIndex ReActAgent's call is the provider instrumentation's span (`openai.chat`), nothing of LlamaIndex
        # on it: the call's own system prompt, asking for ReAct's format, tells it (as under OpenInference).
        llamaindex_react.read_call(operation)  # its actions in its text, its loop restated
    if operation is not None:
        operation.emitter = NAME
    return operation


def _indexed_message(node: Any, default_role: str) -> Message:
    role = str(dig(node, "role") or default_role).lower()
    parts: list[Part] = []
    content = dig(node, "content")
    if content is not None and content != "":
        decoded = parse_json(content)
        if isinstance(decoded, list):
            # Multimodal content is written as a JSON string of OpenAI content parts.
            for item in decoded:
                if isinstance(item, dict) and item.get("type") == "text":
                    parts.append(Part("text", text=render(item.get("text"))))
                elif isinstance(item, dict) and item.get("type") == "image_url":
                    url = item.get("image_url")
                    url = url.get("url") if isinstance(url, dict) else url
                    parts.append(Part("media", media_type="image", uri=url if isinstance(url, str) else None))
        else:
            parts.append(Part("text", text=render(content)))
    for call in indexed(dig(node, "tool_calls")):
        parts.append(
            Part(
                "tool_call",
                call_id=_text(dig(call, "id")),
                name=_text(dig(call, "name")),
                arguments=parse_arguments(dig(call, "arguments")),
            )
        )
    tool_call_id = _text(dig(node, "tool_call_id"))
    if role == "tool" or tool_call_id:
        text = "\n".join(part.text or "" for part in parts if part.kind == "text")
        parts = [Part("tool_result", call_id=tool_call_id, text=text)]
    return Message(role, parts)


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _read_indexed(reader: SpanReader, call: LlmCall) -> None:
    prompts = unflatten(reader.prefixed("gen_ai.prompt."))
    completions = unflatten(reader.prefixed("gen_ai.completion."))
    call.input_messages = [_indexed_message(node, "user") for node in indexed(prompts)]
    call.output_messages = [_indexed_message(node, "assistant") for node in indexed(completions)]
    finish = [str(dig(node, "finish_reason")) for node in indexed(completions) if dig(node, "finish_reason")]
    if finish:
        call.finish_reasons = finish
    functions = unflatten(reader.prefixed("llm.request.functions."))
    for function in indexed(functions):
        definition = openai_tool_definition(
            {
                "name": dig(function, "name"),
                "description": dig(function, "description"),
                "parameters": dig(function, "parameters"),
            }
        )
        if definition is not None:
            call.tool_definitions.append(definition)


def _entity_io(reader: SpanReader) -> tuple[Any, Any]:
    entity_input = parse_json(reader.get("traceloop.entity.input"))
    entity_output = parse_json(reader.get("traceloop.entity.output"))
    if isinstance(entity_input, dict) and set(entity_input) <= {"args", "kwargs"}:
        kwargs = entity_input.get("kwargs") or {}
        args = entity_input.get("args") or []
        entity_input = kwargs if kwargs or not args else {"args": args}
    elif isinstance(entity_input, dict) and isinstance(entity_input.get("inputs"), dict):
        # The LangChain callback's record of a tool or chain run: `inputs` are the arguments.
        entity_input = entity_input["inputs"]
    if isinstance(entity_output, dict) and "output" in entity_output and set(entity_output) <= {"output", "kwargs"}:
        entity_output = entity_output["output"]  # the LangChain callback's on_tool_end(output, **kwargs)
    return entity_input, entity_output


def _langchain_tool_call_id(reader: SpanReader) -> str | None:
    """The call id LangChain passes its tool run (`kwargs.tool_call_id` of the entity input)."""
    raw = reader.get("traceloop.entity.input")
    if not isinstance(raw, str) or "tool_call_id" not in raw:
        return None
    kwargs = dig(parse_json(raw), "kwargs")
    call_id = kwargs.get("tool_call_id") if isinstance(kwargs, dict) else None
    return call_id if isinstance(call_id, str) and call_id else None


def _one_answer(outputs: list[Message]) -> list[Message]:
    """The openai-agents instrumentation writes each Responses output item (a text message, each
    function call) as an output message of its own: items of one answer, not choices (the
    Responses API answers once). One assistant message, the items' parts in order."""
    if len(outputs) < 2 or any(message.role != "assistant" for message in outputs):
        return outputs
    return [Message("assistant", [part for message in outputs for part in message.parts])]


def _history_call_ids(messages: list[Message]) -> list[Message]:
    """The calls of a re-sent history under the ids their results and the answers name.

    For a re-sent `function_call` item the instrumentation writes the item's `id` (OpenAI's
    `fc_…`), not its `call_id` (`call_…`), which the answer that made it and the item's
    `function_call_output` carry: the history's calls would be calls no answer made (steps of
    their own) and its results results of no call. Each call no result names takes the id of the
    results no call names, in order (the Responses API requires every call's output, after it).
    The messages are the memo's, shared with other calls: changed ones are new messages.
    """
    calls = {part.call_id for message in messages for part in message.parts if part.kind == "tool_call"}
    results = [part.call_id for message in messages for part in message.parts if part.kind == "tool_result"]
    unclaimed = [call_id for call_id in results if call_id not in calls]
    if not unclaimed:
        return messages
    answered = set(results)
    unanswered = sum(1 for message in messages for part in message.parts
                     if part.kind == "tool_call" and part.call_id not in answered)
    if unanswered != len(unclaimed):
        return messages  # not the one-for-one mix-up: left as recorded
    ids = iter(unclaimed)
    repaired: list[Message] = []
    for message in messages:
        if any(part.kind == "tool_call" and part.call_id not in answered for part in message.parts):
            parts = [replace(part, call_id=next(ids)) if part.kind == "tool_call" and part.call_id not in answered
                     else part for part in message.parts]
            message = replace(message, parts=parts)
        repaired.append(message)
    return repaired


def _handoff(reader: SpanReader) -> ToolExecution:
    """openai-agents' handoff span: it carries out the model's `transfer_to_…` call.

    The instrumentation names the agent taking over when the span starts, and openai-agents
    only sets it once the handoff is done (`span_data.to_agent = …`): 0.62.4 never records
    `gen_ai.handoff.to_agent` for an SDK handoff. A handoff all the same (`""`: to an agent it
    does not name), so it carries out the latest `transfer_to_…` call rather than being a tool
    execution of no call; what the model was shown for it comes from the next call's input.
    """
    reader.consume("gen_ai.handoff.from_agent", "gen_ai.agent.name", "gen_ai.operation.name",
                   "gen_ai.provider.name")
    reader.consume_prefix("traceloop.")
    target = reader.text("gen_ai.handoff.to_agent") or ""
    return ToolExecution(span=reader.span, emitter=NAME, handoff_to=target, error=span_error(reader))


def _decorated_tool(reader: SpanReader) -> ToolExecution:
    arguments, result = _entity_io(reader)
    # The GenAI form (openai-agents' tool spans) has no entity record: the call's own attributes.
    if arguments is None:
        arguments = parse_arguments(reader.get("gen_ai.tool.call.arguments"))
    if result is None:
        result = parse_json(reader.get("gen_ai.tool.call.result"))
    name = reader.text("gen_ai.tool.name", "traceloop.entity.name") or reader.span.name.removesuffix(".tool")
    reader.consume_prefix("traceloop.")
    return ToolExecution(
        span=reader.span,
        emitter=NAME,
        name=name,
        call_id=reader.text("gen_ai.tool.call.id") or _langchain_tool_call_id(reader),
        arguments=arguments,
        result=result,
        error=span_error(reader),
    )


def _decorated_agent(reader: SpanReader) -> AgentRun:
    agent_input, agent_output = _entity_io(reader)
    name = reader.text("gen_ai.agent.name", "traceloop.entity.name") or reader.span.name.removesuffix(
        ".agent"
    )
    reader.consume_prefix("traceloop.", "gen_ai.usage.", "llm.usage.")
    # openai-agents: the agents it may hand off to, and the one that handed off to it.
    reader.consume("openai.agent.handoffs", "gen_ai.agent.handoff_parent")
    return AgentRun(
        span=reader.span,
        emitter=NAME,
        name=name,
        version=reader.text("traceloop.entity.version"),
        input_text=render(agent_input) if agent_input is not None else None,
        output_text=render(agent_output) if agent_output is not None else None,
        error=span_error(reader),
    )
