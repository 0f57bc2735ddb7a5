"""OpenInference (Arize Phoenix) conventions: `openinference.span.kind` and flattened, indexed lists.

Lists of objects arrive as `<prefix>.<i>.<suffix>` attributes and the indices may be
sparse (the pydantic-ai converter writes `tool_calls.1` after dropping a thinking part),
so they are nested and read in index order rather than counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import (
    agno,
    agno_knowledge,
    agno_media,
    anthropic_openinference,
    anthropic_openinference_attribute_limit,
    anthropic_server_tools,
    autogen,
    beeai,
    crewai,
    dspy,
    gemini_grounding,
    google_adk,
    google_genai,
    haystack,
    hosted_tool_definitions,
    langchain,
    langchain_failed_attempts,
    langchain_openinference,
    langchain_retrievers,
    langgraph_interrupts,
    langgraph_openinference,
    llamaindex,
    llamaindex_media,
    llamaindex_query_engines,
    llamaindex_react,
    openai_agents_failed_calls,
    openai_agents_file_search,
    openai_agents_hosted_tools,
    openai_agents_images,
    openai_agents_js,
    openai_agents_streamed_generations,
    openai_chat_audio,
    openai_sdk,
    openinference_claude_agent_sdk,
    openinference_media,
    smolagents,
    smolagents_planning,
    strands_openinference,
)
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import (
    openai_tool_definition,
    parse_arguments,
    parse_input_messages,
    parse_messages,
    render,
)
from evalkit.trajectory.mappers.reader import SpanReader, as_decimal, dig, indexed, parse_json, unflatten
from evalkit.trajectory.mappers.usage import normalised_usage
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "openinference"
_IDENTITY = ("session.id", "user.id", "metadata", "tag.tags", "openinference.span.kind", "agent.name")
# The client instrumentations (openai, anthropic) record the provider's response as `output.value`, its JSON
# dump, whose first key is the response's id: nowhere else. Another instrumentation of the same call (the
# Anthropic SDK's own spans, once a global tracer provider is set) records the id as `gen_ai.response.id`, and
# the two reports are told to be one call by it (trajectory/same_call.py). Read from the start of the text
# only, as ingest's `response_id` column reads it (trajectory/tables.py, migration 213): a framework's output
# (LangChain's `{"generations": …}`, a message list) does not start so.
OUTPUT_RESPONSE_ID = r'^\{\s*"id"\s*:\s*"([^"]+)"'
_OUTPUT_RESPONSE_ID = re.compile(OUTPUT_RESPONSE_ID)


def detect(span: Span) -> bool:
    return "openinference.span.kind" in span.attributes


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    kind = (reader.text("openinference.span.kind") or "").upper()
    if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        # LangChain's tracer marks AGENT any run named with "agent" (a tool, a graph's node): LangGraph's own
        # metadata says which run is a tool's and which an agent graph's.
        kind = langgraph_openinference.span_kind(reader, kind)
    reader.consume(*_IDENTITY)
    reader.consume("input.mime_type", "output.mime_type")
    if reader.span.scope_name == google_adk.OPENINFERENCE_SCOPE:
        google_adk.consume_openinference(reader)  # ADK's own attributes, on the instrumentation's spans too
    if reader.span.scope_name == OPENAI_AGENTS_JS_SCOPE:
        reader.consume("llm.system")  # on every span: "identifies the agents SDK" (processor.js), no provider
    beeai.consume(reader)
    strands_openinference.consume(reader, kind)  # Strands' spans rewritten by OpenInference's processor
    if beeai.is_event(reader):
        return None  # BeeAI's record of an event as a child span (a tool's `error`, an agent's `final_answer`)
    if kind == "LLM":
        if is_preprocessing(reader):
            if openai_agents_failed_calls.is_failed_call(reader):  # a model call that raised: its error alone
                return openai_agents_failed_calls.failed_call(reader, NAME)
            # Read on purpose: a step before the call (LlamaIndex's `_prepare_chat_with_tools`).
            reader.consume_prefix("llm.", "input.", "output.")
            return None
        if reader.span.scope_name == google_adk.OPENINFERENCE_SCOPE:
            return google_adk.openinference_call(llm_call(reader))  # a streamed answer's calls under ADK's run ids
        return strands_openinference.llm_call(reader, llm_call(reader))
    if kind == "TOOL":
        crewai.consume_tool(reader)
        if reader.span.scope_name == google_adk.OPENINFERENCE_SCOPE:
            # ADK's tool: its result the FunctionResponse's `response`, `transfer_to_agent` a handoff.
            return google_adk.openinference_tool(tool_execution(reader), reader)
        if beeai.is_beeai(reader):
            return beeai.tool_execution(tool_execution(reader), reader)  # a failure's output: its error
        if reader.span.scope_name == llamaindex.OPENINFERENCE_SCOPE:
            # An AgentWorkflow's `handoff` a handoff; a QueryEngineTool's engine a run inside it (its synthesis call).
            return llamaindex_query_engines.tool(llamaindex.openinference_tool(tool_execution(reader)))
        if reader.span.scope_name == crewai.OPENINFERENCE_SCOPE:
            # Named as the model calls it; a delegation's coworker runs inside it (a subagent).
            return crewai.openinference_tool(tool_execution(reader), reader)
        if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
            return langgraph_openinference.tool(tool_execution(reader), reader)  # a handoff tool's Command
        if reader.span.scope_name == _OPENAI_AGENTS_SCOPE:
            return openai_agents_images.tool_execution(tool_execution(reader))  # a ToolOutputImage: the image
        if reader.span.scope_name == agno.SCOPE:
            # Its result the text the model was shown; its knowledge search's documents listed on it (no span of them).
            return agno_knowledge.tool_execution(agno.tool_execution(tool_execution(reader), reader))
        if reader.span.scope_name == openinference_claude_agent_sdk.SCOPE:
            # An MCP tool's content blocks the text the model was shown; a failed or denied tool's its error.
            return openinference_claude_agent_sdk.tool_execution(tool_execution(reader))
        if openai_agents_js.is_mcp_list_tools(reader.span):
            openai_agents_js.read_mcp_list_tools(reader)
            return None  # the JS SDK listing an MCP server's tools: no tool the model called
        return tool_execution(reader)
    if kind == "RETRIEVER" and reader.span.scope_name == llamaindex.OPENINFERENCE_SCOPE:
        return llamaindex_query_engines.retrieval(reader, NAME)  # a step of the documents found
    if kind == "RETRIEVER" and reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        # The documents found (their ids from the run's output): a retriever tool's own work, on its call's result.
        return langchain_retrievers.retrieval(reader, NAME)
    if kind == "EMBEDDING" and reader.span.scope_name == llamaindex.OPENINFERENCE_SCOPE:
        llamaindex_query_engines.read_embedding(reader)
        return None
    if kind == "EMBEDDING" and reader.span.scope_name == openai_sdk.OPENINFERENCE_SCOPE:
        # An embeddings request through the OpenAI SDK (CrewAI's knowledge store and memory): read on purpose, no step;
        # its tokens are the embedding model's, no LLM call's.
        llamaindex_query_engines.read_embedding(reader)
        reader.consume("embedding.invocation_parameters", "llm.system")
        reader.consume_prefix("llm.token_count.")
        return None
    if crewai.is_crewai(reader):
        crewai.consume(reader)
    crewai.consume_flow(reader)  # a CrewAI Flow's kickoff and method spans: bookkeeping around the work under them
    agno.consume(reader)
    if kind == "AGENT" or (kind == "CHAIN" and _langchain_agent_name(reader) == reader.span.name):
        # LangChain marks only the outermost graph AGENT; an agent graph run inside another one
        # (create_agent's graph invoked from a tool, a subgraph) is a CHAIN named after its agent.
        if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
            return langgraph_openinference.graph_run(agent_run(reader), reader)  # a legacy graph's name
        if reader.span.scope_name == openinference_claude_agent_sdk.SCOPE:
            openinference_claude_agent_sdk.consume_turn(reader)  # its messages and usage: its calls' derived spans
        return agent_run(reader)
    if kind == "CHAIN" and reader.span.events and reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        paused = langgraph_interrupts.interrupt(reader, NAME)  # a node's `interrupt()`: the run asks a person
        if paused is not None:
            return paused
    if kind == "CHAIN" and autogen.is_team_run(reader):
        # An AutoGen team orchestrates its participants: an agent run, each participant's turn a subagent.
        return autogen.team_run(agent_run(reader), reader)
    if kind == "CHAIN" and agno.is_workflow_run(reader):
        # An Agno Workflow runs its steps' agents and teams in order: an agent run, each step's run a subagent.
        return agent_run(reader)
    if kind == "CHAIN" and crewai.is_streaming_kickoff(reader):
        return None  # a streamed crew's kickoff that returned the stream: its run is the kickoff iterating it starts
    if kind == "CHAIN" and crewai.is_crew_run(reader):
        # A crew orchestrates its agents: an agent run, its tasks' agents its subagents.
        run = agent_run(reader)
        run.name = run.name or crewai.crew_run_name(reader)
        run.input_text = crewai.crew_input(reader)
        return run
    agno.consume_step(reader)  # an Agno workflow step's span: copies of its agent run's input and output
    # CHAIN, RETRIEVER, ... may repeat their children's token counts: read on purpose, never added.
    reader.consume_prefix("llm.token_count.", "llm.cost.")
    return None


def is_preprocessing(reader: SpanReader) -> bool:
    """An LLM-kind span that is no LLM call: no messages, no token counts, no cost.

    LlamaIndex marks the step preparing a call LLM too (`OpenAI._prepare_chat_with_tools`, its
    kwargs' repr as input) beside the span of the call itself. The session list counts LLM calls by
    the same evidence (`prepares_call`, a column of `spans`: trajectory/tables.py).
    """
    return not any(key.startswith(CALL_EVIDENCE) for key in reader.attributes)


CALL_EVIDENCE = ("llm.input_messages.", "llm.output_messages.", "llm.token_count.", "llm.cost.")


def _langchain_agent_name(reader: SpanReader) -> str | None:
    """The agent a LangChain span runs for (`metadata.lc_agent_name`, create_agent's `name`)."""
    raw = reader.get("metadata")
    if not isinstance(raw, str) or "lc_agent_name" not in raw:
        return None
    metadata = parse_json(raw)
    name = metadata.get("lc_agent_name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


def _content_part(node: Any) -> Part | None:
    content = dig(node, "message_content")
    if isinstance(content, dict):
        kind = str(dig(content, "type") or "text").lower()
        if kind == "reasoning":
            return Part("reasoning", text=render(dig(content, "text")))
        if kind in ("image", "audio", "video", "document"):
            url = (
                dig(content, "image", "image", "url")
                or dig(content, kind, kind, "url")
                or dig(content, "url")
            )
            return openinference_media.media_part(kind, url)  # `__REDACTED__` no URL: an image it kept out
        if kind == "tool_use":
            return None  # the same call is listed under message.tool_calls
        text = dig(content, "text")
        return Part("text", text=render(text)) if text is not None else None
    return None


def _tool_call_part(node: Any) -> Part | None:
    call = dig(node, "tool_call")
    if not isinstance(call, dict):
        return None
    return Part(
        "tool_call",
        call_id=_text(dig(call, "id")),
        name=_text(dig(call, "function", "name")),
        arguments=parse_arguments(dig(call, "function", "arguments")),
    )


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _message(node: Any) -> Message | None:
    # AutoGen's tool results: JSON objects beside a message of role "function" (trajectory/mappers/autogen.py).
    results = autogen.function_results(node) if isinstance(node, dict) and "function" in node else None
    if results is not None:
        return results
    message = dig(node, "message")
    if not isinstance(message, dict):
        return None
    role = str(dig(message, "role") or "user").lower()
    parts: list[Part] = []
    content = dig(message, "content")
    for item in indexed(dig(message, "contents")):
        part = _content_part(item)
        if part is not None:
            parts.append(part)
    if content is not None and not any(part.kind == "text" for part in parts):
        parts.insert(0, Part("text", text=render(content)))
    for item in indexed(dig(message, "tool_calls")):
        part = _tool_call_part(item)
        if part is not None:
            parts.append(part)
    tool_call_id = _text(dig(message, "tool_call_id")) or beeai.content_tool_call_id(message)
    if role == "tool" or tool_call_id is not None:
        text = "\n".join(part.text or "" for part in parts if part.kind == "text")
        parts = [Part("tool_result", call_id=tool_call_id, name=_text(dig(message, "name")), text=text)]
    if isinstance(node, dict) and "thought" in node:  # AutoGen's, beside the message (trajectory/mappers/autogen.py)
        return autogen.with_thought(Message(role, parts, name=_text(dig(message, "name"))), node["thought"])
    return Message(role, parts, name=_text(dig(message, "name")))


def read_messages(reader: SpanReader, prefix: str) -> list[Message]:
    tree = unflatten(reader.prefixed(prefix))
    messages = smolagents.read_roles([message for message in map(_message, indexed(tree)) if message is not None])
    return dspy.read_react_trajectory(messages)


def llm_call(reader: SpanReader, emitter: str = NAME) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=emitter)
    call.input_messages = read_messages(reader, "llm.input_messages.")
    call.output_messages = read_messages(reader, "llm.output_messages.")
    if reader.span.scope_name == haystack.OPENINFERENCE_SCOPE:
        # Its flattened messages have no tool results nor call ids: the whole ChatMessages are in input/output.value.
        haystack.openinference_messages(call, reader.get("input.value"), reader.get("output.value"), reader.memo)
    if reader.span.scope_name == google_genai.OPENINFERENCE_SCOPE:
        google_genai.gemini_contents(call)  # a streamed answer re-sent in pieces, a failed function's response
    if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        # langgraph-supervisor's transfer-back pair: no model's call, no tool's result (the worker's run ended).
        langgraph_openinference.drop_handoff_back(call, reader.span.attributes.get("input.value"))
    if not call.input_messages:
        call.input_messages = parse_input_messages(reader.get("input.value"), reader.memo)
    else:
        reader.consume("input.value")
    if not call.output_messages:
        call.output_messages = parse_messages(reader.get("output.value"), "assistant", reader.memo)
    else:
        reader.consume("output.value")
    if reader.span.scope_name == OPENAI_AGENTS_JS_SCOPE:
        openai_agents_js.read_messages(call, reader)  # what its flattening drops: re-sent answers, reasoning
    if reader.span.scope_name == llamaindex.OPENINFERENCE_SCOPE:
        llamaindex_react.read_call(call)  # a ReActAgent's actions in its text, its loop restated
        # A tool's image the model was shown (the LLM class sends a tool message's images): its result's parts.
        llamaindex_media.read_tool_images(call, reader.span)
    if reader.span.scope_name == smolagents_planning.SCOPE:
        # A planning call's templates instructions, its step marked; a plan the memory re-sends, the plan it is.
        smolagents_planning.read_call(call, reader.span.attributes.get("input.value"))
    # Any scope: DSPy's LM span and the LiteLLM span inside it hold the same messages.
    dspy.read_call(call)  # a ReAct step's tool named in its answer's fields
    if reader.span.scope_name == autogen.OPENINFERENCE_SCOPE:
        autogen.output_thought(call, reader.span.attributes.get("output.value"))  # the text beside its tool calls
    if reader.span.scope_name == langchain.JS_OPENINFERENCE_SCOPE:
        # LangChain.js flattens messages without call ids: its serialised messages in input/output.value have them.
        langchain.js_call_ids(call.input_messages,
                              langchain.serialized_messages(reader.get("input.value"), "messages"))
        langchain.js_call_ids(call.output_messages,
                              langchain.serialized_messages(reader.get("output.value"), "generations"))
    output = reader.span.attributes.get("output.value")
    if isinstance(output, str) and (found := _OUTPUT_RESPONSE_ID.match(output)):
        call.response_id = found.group(1)
    call.model = reader.text("llm.response.model_name", "llm.model_name", "llm.request.model_name")
    call.request_model = reader.text("llm.request.model_name")
    call.provider = reader.text("llm.provider", "llm.system")
    prompt = reader.integer("llm.token_count.prompt")
    call.usage = normalised_usage(
        prompt,
        reader.integer("llm.token_count.completion"),
        cache_read=reader.integer("llm.token_count.prompt_details.cache_read"),
        cache_write=reader.integer("llm.token_count.prompt_details.cache_write"),
        reasoning=reader.integer("llm.token_count.completion_details.reasoning"),
    )
    # Of the prompt's and the answer's, the audio tokens (an audio model's: OpenAI's `audio_tokens` details), billed at
    # rates of their own.
    call.usage.input_audio_tokens = reader.integer("llm.token_count.prompt_details.audio") or None
    call.usage.output_audio_tokens = reader.integer("llm.token_count.completion_details.audio") or None
    reader.consume_prefix("llm.token_count.")
    if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        # The tracer's flattened attributes drop a reasoning model's thinking, and its reasoning tokens where it read
        # the provider's raw usage: its serialised output (`output.value`) has both.
        langchain_openinference.read_output(call, reader.span.attributes.get("output.value"))
    total = as_decimal(reader.get("llm.cost.total"))
    if total is None:
        prompt_cost = as_decimal(reader.get("llm.cost.prompt"))
        completion_cost = as_decimal(reader.get("llm.cost.completion"))
        if prompt_cost is not None and completion_cost is not None:
            total = prompt_cost + completion_cost
    call.reported_cost = total
    reader.consume_prefix("llm.cost.")
    tools = unflatten(reader.prefixed("llm.tools."))
    for tool in indexed(tools):
        definition = openai_tool_definition(dig(tool, "tool", "json_schema"))
        if definition is None:
            definition = openai_tool_definition(
                {
                    "name": dig(tool, "tool", "name"),
                    "description": dig(tool, "tool", "description"),
                    "parameters": dig(tool, "tool", "parameters"),
                }
            )
        if definition is not None:
            call.tool_definitions.append(definition)
    parameters = parse_json(reader.get("llm.invocation_parameters"))
    if isinstance(parameters, dict):
        call.extra["request"] = parameters
        effort = parameters.get("reasoning_effort")
        if isinstance(effort, str | float):
            call.reasoning_effort = effort
    finish = reader.text("llm.finish_reason")
    if finish:
        call.finish_reasons = [finish]
    call.error = span_error(reader)
    if reader.span.scope_name == anthropic_openinference.SCOPE:
        # A re-sent answer whose role OpenTelemetry's attribute limit dropped: the assistant's, its calls whole.
        anthropic_openinference_attribute_limit.read_clipped_messages(call, reader.span.attributes)
        # A tool_result's image, redacted in its flattened message, and `is_error`: the request as sent has both.
        anthropic_openinference.read_tool_results(call, reader.span.attributes.get("input.value"))
        anthropic_openinference.read_request(call)  # the effort a Messages request sets (`output_config.effort`)
        # Its server tools (web search): a call the provider ran with what it found, the answer's cited text and
        # citations, the searches counted.
        attributes = reader.span.attributes
        anthropic_server_tools.read_call(call, attributes.get("input.value"), attributes.get("output.value"),
                                         attributes.get("metadata"))
    elif reader.span.scope_name == google_genai.OPENINFERENCE_SCOPE:
        # Gemini's Google Search grounding, in the response's dump alone: a call the provider ran with the pages it
        # found, the answer's supported passages as citations; the search tool the request offered listed.
        gemini_grounding.read_call(call, reader.span.attributes.get("input.value"),
                                   reader.span.attributes.get("output.value"))
    elif reader.span.scope_name == agno.SCOPE:
        agno.read_request(call)  # its model's request as its provider's API takes it: a Claude's or Responses' effort
        # The images Agno sent, which its attributes drop (its messages' text alone): `input.value`'s Agno messages.
        agno_media.read_images(call, reader.span.attributes.get("input.value"))
    if reader.span.scope_name == langgraph_openinference.OPENINFERENCE_SCOPE:
        langchain_openinference.read_request(call)  # ChatOpenAI's `reasoning={"effort": …}`, recorded as given
        # A call that raised: the provider's HTTP status, in the empty answer langchain-core made of the error.
        langchain_failed_attempts.read_failure(call, reader.span.attributes.get("output.value"))
    if openai_chat_audio.is_chat_completion(reader.span):
        # Audio the flattened messages drop: the request's input_audio parts, a spoken answer's transcript and clip.
        openai_chat_audio.read_call(call, reader.span.attributes.get("input.value"),
                                    reader.span.attributes.get("output.value"))
    if (openai_sdk.is_openinference_response(reader.span) or openai_sdk.is_openai_agents_response(reader.span)
            or openai_agents_js.is_response(reader.span)):
        if openai_sdk.is_openai_agents_response(reader.span):
            # A file search the API ran: a call of the tool, run by the provider, the documents it found its result;
            # read first, its results being a `tool` message between the answer's output messages.
            openai_agents_file_search.read_call(call, reader.span.attributes.get("output.value"),
                                                reader.span.attributes.get("input.value"))
        openai_sdk.read_response(call)  # each output item a message of its own; previous_response_id; the effort
        # The provider's tools the request offered (web search, file search), which `llm.tools` may leave out: the
        # Response echoes the request's `tools`.
        echoed = hosted_tool_definitions.echoed(reader.span.attributes.get("output.value"))
        hosted_tool_definitions.offered(call, echoed)
        if openai_sdk.is_openai_agents_response(reader.span):
            # A hosted tool (web search) the API ran: a call of the tool, run by the provider; the answer's citations.
            openai_agents_hosted_tools.read_call(call, reader.span.attributes.get("output.value"),
                                                 reader.span.attributes.get("input.value"))
            # An image its attributes redact (`__REDACTED__`) is whole in `input.value`, the items as sent.
            openai_agents_images.read_input_images(call, reader.span.attributes.get("input.value"))
    elif reader.span.scope_name == _OPENAI_AGENTS_SCOPE:
        # Its `llm.invocation_parameters` is the Response as the API returned it, which names the server state the
        # call continued (previous_response_id, conversation): then the SDK sent only the new items.
        call.input_all_new = openai_sdk.continues_server_state(call.extra.get("request"))
        if reader.span.name == openai_agents_streamed_generations.SPAN_NAME:
            # A streamed Chat Completions call (LitellmModel's, …): its answer only in the Response the SDK built.
            openai_agents_streamed_generations.read_answer(call, reader.span.attributes.get("output.value"))
    return call


_HANDOFF_PREFIX = "handoff to "
# openai-agents records a tool's structured output as returned: an MCP tool's text content is a
# `ToolOutputTextDict`, `{"type": "text", "text": …}` (a list of them for several blocks), and so is a
# function tool's `ToolOutputText`. The SDK sends the model that text as `input_text` parts
# (`ItemHelpers._convert_tool_output`), so the text is the result, not the dict's JSON. The JS SDK returns an MCP
# tool's content item the same way and sends its text so (`normalizeStructuredToolOutputs`).
_OPENAI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"


def _openai_agents_text_output(result: Any) -> Any:
    parts = result if isinstance(result, list) else [result]
    if parts and all(isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
                     for part in parts):
        return "\n".join(part["text"] for part in parts)
    return result


def tool_execution(reader: SpanReader, emitter: str = NAME) -> ToolExecution:
    span = reader.span
    if span.scope_name == OPENAI_AGENTS_JS_SCOPE and span.name.startswith(_HANDOFF_PREFIX):
        return _openai_agents_js_handoff(reader, emitter)
    if span.name.startswith(_HANDOFF_PREFIX) and not reader.has("tool.name"):
        # openai-agents' handoff: a TOOL span with the agents it moves between (input.value the
        # one handing over, output.value the one taking over) and nothing of the model's call.
        # Its output is not a tool result: what the model was shown comes from the next call.
        reader.consume("input.value")
        return ToolExecution(
            span=span,
            emitter=emitter,
            handoff_to=reader.text("output.value") or span.name.removeprefix(_HANDOFF_PREFIX),
            error=span_error(reader),
        )
    arguments = reader.get("input.value")
    parameters = reader.get("tool.parameters")
    if arguments is None:
        # tool.parameters is the schema in the spec, but some converters put the call's arguments there.
        arguments = parameters
    reader.consume("tool.description", "tool.json_schema")
    result = parse_json(reader.get("output.value"))
    if span.scope_name in (_OPENAI_AGENTS_SCOPE, OPENAI_AGENTS_JS_SCOPE):
        result = _openai_agents_text_output(result)
    if span.scope_name == langchain.JS_OPENINFERENCE_SCOPE:
        result = langchain.tool_run_output(result)  # `{"output": <ToolMessage>}`
    return ToolExecution(
        span=reader.span,
        emitter=emitter,
        name=reader.text("tool.name") or dspy.tool_name(reader) or reader.span.name,
        call_id=reader.text("tool.id", "tool_call.id"),
        arguments=smolagents.tool_arguments(parse_arguments(arguments)),
        # A tool returning Anthropic content blocks with an image (a screenshot): the image its result's part.
        result_parts=anthropic_openinference.tool_result_parts(result),
        result=result,
        error=span_error(reader),
    )


def agent_run(reader: SpanReader, emitter: str = NAME) -> AgentRun:
    reader.consume_prefix("llm.token_count.", "llm.cost.")
    reader.consume("graph.node.parent_id")  # who handed off to it: the handoff span says so too
    input_value = reader.get("input.value")
    output_value = reader.get("output.value")
    if reader.span.scope_name == OPENAI_AGENTS_JS_SCOPE and _openai_agents_js_workflow_root(reader):
        input_value = output_value = None  # copies of its LLM calls' input and answer, not a run's own
    return AgentRun(
        span=reader.span,
        emitter=emitter,
        # Only a name the emitter gives the agent: a span name is no agent's name (the builder
        # labels an unnamed subagent by its span).
        name=strands_openinference.agent_name(reader)
        or reader.text("agent.name", "graph.node.name", "graph.node.id")
        or _langchain_agent_name(reader)
        or smolagents.agent_name(reader),
        input_text=_run_text(input_value),
        output_text=_run_text(output_value),
        error=span_error(reader),
    )


def _run_text(value: Any) -> str | None:
    # A LangGraph run's input and output are its messages state: the last message is what it says.
    if value is None:
        return None
    raw = crewai.raw_output(value)  # a CrewAI crew's or task's output: its text
    if raw is not None:
        return raw
    state = langchain.state_text(value)
    return state if state is not None else render(value)


# --- @openai/agents (JavaScript), @arizeai/openinference-instrumentation-openai-agents ------------------
# The JS instrumentation is the SDK's TracingProcessor (processor.js), with conventions of its own:
# - its LLM calls' messages (each item of an answer an output message of its own, a re-sent answer's text and a
#   reasoning model's reasoning only in `input.value`/`output.value`): trajectory/mappers/openai_agents_js.py.
# - `onTraceEnd` lifts the first LLM input and the last answer onto the trace's root AGENT span (named
#   after the workflow, no `graph.node.id`), which groups the agents' runs and runs nothing itself.
# - `getHandoffAttributes` records a handoff as `tool.name` `handoff_to_<agent>`, `input.value`
#   `{"from_agent": …}` and `output.value` `{"to_agent": …}`: the handoff span, not a tool of the model's.
OPENAI_AGENTS_JS_SCOPE = openai_agents_js.SCOPE


def _openai_agents_js_workflow_root(reader: SpanReader) -> bool:
    """The trace's AGENT span (`onTraceStart`), its I/O lifted from its calls: every agent span of the SDK's
    has its `graph.node.id` (`applyAgentGraphAttributes`), this one none. (It has a parent when the run is
    inside a span of the application's.)"""
    return not reader.has("graph.node.id")


def _openai_agents_js_handoff(reader: SpanReader, emitter: str) -> ToolExecution:
    reader.consume("tool.name", "input.value")
    target = parse_json(reader.get("output.value"))
    to_agent = target.get("to_agent") if isinstance(target, dict) else None
    return ToolExecution(
        span=reader.span,
        emitter=emitter,
        handoff_to=to_agent if isinstance(to_agent, str) else reader.span.name.removeprefix(_HANDOFF_PREFIX),
        error=span_error(reader),
    )

