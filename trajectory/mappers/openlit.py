"""OpenLIT's instrumentations (`openlit.init()`, scopes `openlit.instrumentation.<library>`).

Its call spans are the latest GenAI conventions (`chat <model>`, `gen_ai.input.messages` /
`gen_ai.output.messages` / `gen_ai.system_instructions` JSON, `gen_ai.usage.*`), read by the GenAI
mapper. What is OpenLIT's own, read here:

- `gen_ai.usage.cost` is OpenLIT's price from its pricing table (fetched from GitHub at `init`, or
  `pricing_json`), and 0 when it has none: `get_chat_model_cost` returns 0 for a model the table does not
  list and for an empty table (offline, the fetch failed) (openlit/__helpers.py: `if model_pricing is None:
  return 0`, `except Exception: cost = 0`). A call's 0 is no price, not a free call: left for evalkit to
  price, as if no cost were reported.
- a call span restates the model's tool calls as comma-joined `gen_ai.tool.name` / `gen_ai.tool.call.id` /
  `gen_ai.tool.args` (instrumentation/openai/utils.py, `common_chat_logic`): they are the output message's
  tool calls, not a tool execution. For a Responses call (`openai.api.type` `responses`) they are the one place
  its calls' `call_id`s are: the output message names each `function_call` by its item's own id (`fc_…`,
  `build_output_messages` reads `id`), which no result names, while the restated ids are the `call_id`s
  (`common_response_logic`: "Use call_id for responses API"); the answer's calls are named by them
  (`_name_calls_by_call_id`);
- the tools a call was given are not on its span but only in its inference event, the
  `gen_ai.client.inference.operation.details` log record every client instrumentation emits (openai/utils.py and
  anthropic/utils.py `emit_inference_event(…, tool_definitions=…)`, in the GenAI shape); read for every call here
  (`event_tool_definitions`). The record is linked to the span current when it is emitted: a call's own span for a
  call that returns its answer, but a streamed call's span is not made current (its stream ends it in `with
  self._span:`), so its record is linked to the caller's span (a turn function, a step, a run) or, with no span
  current, to none: `relink_logs` links a record back to the call span of its response id (`gen_ai.response.id` on
  both); an unlinked one has no trace, and the service reads only the session's traces' records;
- its bookkeeping on every call: the resource's `service.name` / `deployment.environment` /
  `telemetry.sdk.name` copied onto the span, the client's `server.*`, latency figures
  (`gen_ai.server.time_to_first_token`, `…time_per_output_token`), the SDK's version, input plus output
  tokens again (`gen_ai.client.token.usage`), `gen_ai.output.type`, `openai.api.type`,
  `openai.response.service_tier` and `openlit.agent.version_hash` (a fingerprint of the prompt and tools).
- a placeholder for a request parameter the request did not set: an OpenAI Responses call's
  `gen_ai.request.max_tokens` is -1 when no `max_output_tokens` was passed (openai/utils.py
  `common_response_logic`: `handle_not_given(kwargs.get("max_output_tokens"), -1)`), a limit no API takes, so no
  request parameter of the step (`_NOT_GIVEN`). A Chat Completions call's `gen_ai.request.seed` is 0 and its
  `gen_ai.request.user` "" when the request set none (`common_chat_logic`: `int(seed_value) if seed_value else 0`,
  `handle_not_given(kwargs.get("user"), "")`): no seed is not seed 0 (an unseeded request samples as it will, a seeded
  one best-effort reproducibly), so the 0 is no request parameter of the step, though a request that did pass
  `seed=0` is recorded the same and loses it; an empty user names no end user (`_CHAT_NOT_GIVEN`). Its `temperature`
  and `top_p` of 1.0 when not given, and the penalties' 0.0, are kept: the same as a request that set the API's
  default, and the span cannot tell them apart.

Its openai-agents instrumentation (a tracing processor of the SDK's: workflow, agent, handoff and tool spans; the
model calls are the OpenAI instrumentation's spans) is read in `openlit_openai_agents`; its CrewAI instrumentation
(crew, task, Flow and tool spans) in `openlit_crewai`; its LangGraph and LangChain instrumentations (graph, node,
chain and tool spans; the calls come back here for OpenLIT's common reading) in `openlit_langgraph`; its pydantic-ai
instrumentation (agent run, set-up and graph-node spans; the calls are the client instrumentation's) in
`openlit_pydantic_ai`; its Agno instrumentation (team, agent, tool and set-up spans; the calls are the OpenAI
instrumentation's) in `openlit_agno`; its Google ADK and Google AI Studio instrumentations (agent and set-up spans
beside ADK's own; google-genai's calls, which come back here) in `openlit_google_adk`; its smolagents instrumentation
(run, step, tool and set-up spans; the calls are the OpenAI instrumentation's, their inputs smolagents' memory as its
client sent it, read back here by `openlit_smolagents.read_sent_memory`) in `openlit_smolagents`; its ag2
instrumentation (AG2 Classic `ConversableAgent`s' replies, sends, receives and set-up; the calls are the OpenAI
instrumentation's) in `openlit_ag2`.

Its Haystack instrumentation (pipeline and component spans; a generator's run around the OpenAI instrumentation's
call, no agent or tool span) is read in `openlit_haystack`.

Its LlamaIndex instrumentation makes no span of a LlamaIndex agent's run (so it has no module here): it wraps the
base `LLM` class's methods, which the LLM integrations override (llama-index-llms-openai's `OpenAI`), and query
engines, retrievers, readers, indexes and embeddings, but no agent, workflow step or tool. A FunctionAgent's calls
are the OpenAI instrumentation's spans alone, each the root of a trace of its own, whose input leaves out the
answers made of tool calls alone (`build_input_messages` keeps a message only if it has text): the builder takes
a call re-sending a result of the trajectory's own call as carrying on its run (capture `llamaindex_openlit`).

Its Claude Agent SDK instrumentation (turn, subagent, tool and set-up spans, and `chat` spans it makes up from the
SDK's messages: the calls are the Claude Code CLI's, which it does not see) is read in `openlit_claude_agent_sdk`.

Its Anthropic instrumentation's call spans (Anthropic's uncached `input_tokens`, its `system` blocks copied as they
were passed) are read in `openlit_anthropic`.

Its manual tracing (`@openlit.trace`, `openlit.start_trace`: scope `openlit`) names a function of the
application and says nothing of what it is (a tool, a turn, anything): the function's name, `function.args` /
`function.kwargs` as Python reprs, its return value as `gen_ai.output.messages`, set only once it returned (one
that raised has its status and exception event alone). Such a span is read as a tool's execution that counts
only if the model asked for a tool of its name (`ToolExecution.only_if_called`): the turn function around the
loop answers no call and is no step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import (
    openlit_ag2,
    openlit_agno,
    openlit_anthropic,
    openlit_claude_agent_sdk,
    openlit_crewai,
    openlit_google_adk,
    openlit_haystack,
    openlit_langgraph,
    openlit_openai_agents,
    openlit_pydantic_ai,
    openlit_smolagents,
    otel_genai,
    python_repr,
)
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "openlit"
SCOPE_PREFIX = "openlit.instrumentation."
MANUAL_SCOPE = "openlit"  # `@openlit.trace` / `openlit.start_trace` (openlit/__init__.py: get_tracer(__name__))
_BOOKKEEPING = (
    "service.name",
    "deployment.environment",
    "telemetry.sdk.name",
    "server.address",
    "server.port",
    "gen_ai.sdk.version",
    "gen_ai.server.time_to_first_token",
    "gen_ai.server.time_per_output_token",
    "gen_ai.client.token.usage",
    "gen_ai.output.type",
    # On its framework instrumentations' spans (a run, a tool, a node): read nowhere.
    "gen_ai.application_name",
    "gen_ai.environment",
    "gen_ai.client.operation.duration",
    "openai.api.type",
    "openai.response.service_tier",
    "openlit.agent.version_hash",
)
_RESTATED_TOOL_CALLS = ("gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.args")
INFERENCE_EVENT = "gen_ai.client.inference.operation.details"
# The value OpenLIT writes for a request parameter the request did not set (see above), by the parameter's name in
# a step's `extra.request` (`gen_ai.request.<name>`).
_NOT_GIVEN = {"max_tokens": -1}
_CHAT_NOT_GIVEN = {"seed": 0, "user": ""}  # a Chat Completions call's (`openai.api.type` `chat_completions`)
_RESPONSE_ID = "gen_ai.response.id"


def detect(span: Span) -> bool:
    # A traced function that raised has no attributes at all (`@openlit.trace` sets them after the call
    # returns): its scope, name, status and exception event are all there is.
    return span.scope_name.startswith(SCOPE_PREFIX) or span.scope_name == MANUAL_SCOPE


def traced_function(reader: SpanReader) -> ToolExecution:
    """An `@openlit.trace` function: a tool's execution if the model asked for a tool of its name."""
    reader.consume("function.args", "function.kwargs", "gen_ai.output.messages", "service.name",
                   "deployment.environment")
    reader.read_events("exception")
    positional, keywords = (python_repr.literal(reader.attributes.get(k)) for k in ("function.args", "function.kwargs"))
    return ToolExecution(
        span=reader.span, emitter=NAME, name=reader.span.name,
        arguments=keywords if positional == () and isinstance(keywords, dict) else None,
        result=reader.attributes.get("gen_ai.output.messages"),  # its return value (a str, as the model is shown)
        error=span_error(reader), only_if_called=True)


def relink_logs(spans: Sequence[Span], logs: Sequence[LogRecord]) -> Sequence[LogRecord]:
    """The session's log records, each inference event linked to the call span of its response id (see above).

    Only a record linked to a span that does not carry its response id moves, and only to the one call span of the
    instrumentations' that does (LangGraph's node spans restate a call's response id too: not calls). Others, and
    records no single call span claims, are left as they are.
    """
    strays = [log for log in logs if log.event_name == INFERENCE_EVENT and log.trace_id
              and isinstance(log.attributes.get(_RESPONSE_ID), str)]
    if not strays:
        return logs
    calls: dict[tuple[str, str], list[Span]] = {}
    response_of: dict[tuple[str, str], str] = {}
    for span in spans:
        response_id = span.attributes.get(_RESPONSE_ID)
        if not isinstance(response_id, str):
            continue
        response_of[(span.trace_id, span.span_id)] = response_id
        if (span.scope_name.startswith(SCOPE_PREFIX)
                and otel_genai.operation_name(SpanReader(span)) in otel_genai.INFERENCE_OPERATIONS):
            calls.setdefault((span.trace_id, response_id), []).append(span)
    moved: dict[int, LogRecord] = {}
    for log in strays:
        response_id = log.attributes[_RESPONSE_ID]
        if response_of.get((log.trace_id, log.span_id)) == response_id:
            continue  # on its own call
        owners = calls.get((log.trace_id, response_id), [])
        if len(owners) == 1:
            moved[id(log)] = replace(log, span_id=owners[0].span_id)
    if not moved:
        return logs
    return [moved.get(id(log), log) for log in logs]


def event_tool_definitions(span: Span, logs: Sequence[LogRecord]) -> list[dict[str, Any]]:
    """The tools a call was given, from the inference event linked to its span (see above), in the OpenAI
    function-calling shape; none from a record of another response than the span's."""
    response_id = span.attributes.get(_RESPONSE_ID)
    for log in logs:
        if log.event_name != INFERENCE_EVENT:
            continue
        event_response_id = log.attributes.get(_RESPONSE_ID)
        if response_id is not None and event_response_id is not None and event_response_id != response_id:
            continue
        definitions = otel_genai.tool_definitions(log.attributes.get("gen_ai.tool.definitions"))
        if definitions:
            return definitions
    return []


def _drop_not_given(reader: SpanReader, call: LlmCall) -> None:
    """The call's request parameters without those OpenLIT wrote for a parameter the request did not set."""
    request = call.extra.get("request")
    if not isinstance(request, dict):
        return
    placeholders: dict[str, object] = dict(_NOT_GIVEN)
    if reader.attributes.get("openai.api.type") == "chat_completions":
        placeholders.update(_CHAT_NOT_GIVEN)
    for name, placeholder in placeholders.items():
        # OpenLIT writes each placeholder as its type (an int 0, a str ""): a value of another type is no placeholder.
        if name in request and type(request[name]) is type(placeholder) and request[name] == placeholder:
            del request[name]
    if not request:
        del call.extra["request"]


def _name_calls_by_call_id(reader: SpanReader, call: LlmCall) -> None:
    """A Responses call's answer with each function call under the `call_id` the span restates for it (see above),
    when the restated calls are the answer's, name for name in order; as recorded otherwise."""
    if reader.attributes.get("openai.api.type") != "responses":
        return  # a Chat Completions call's restated ids are its output message's
    names, ids = (reader.attributes.get(key) for key in ("gen_ai.tool.name", "gen_ai.tool.call.id"))
    if not isinstance(names, str) or not isinstance(ids, str):
        return
    calls = [part for message in call.output_messages for part in message.tool_calls]
    restated_names, call_ids = names.split(", "), ids.split(", ")
    # Empty ids are left out of the joined list: then the two lists cannot be paired by position.
    if len(call_ids) != len(restated_names) or [part.name for part in calls] != restated_names:
        return
    for part, call_id in zip(calls, call_ids, strict=True):
        part.call_id = call_id


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    if reader.span.scope_name == MANUAL_SCOPE:
        return traced_function(reader)
    reader.consume(*_BOOKKEEPING)
    if reader.span.scope_name == openlit_openai_agents.SCOPE:  # workflow, agent, handoff and tool spans
        return openlit_openai_agents.map_span(reader, NAME)
    if openlit_crewai.is_crewai(reader.span):  # a crew, its agents, CrewAI's own flows, its tools
        return openlit_crewai.map_span(reader, logs, NAME)
    if openlit_agno.is_agno(reader.span):  # a team's and an agent's runs, their tools (a delegation's too)
        return openlit_agno.map_span(reader, logs, NAME)
    if openlit_pydantic_ai.is_pydantic_ai(reader.span):  # an agent's runs, its set-up, its graph's nodes
        return openlit_pydantic_ai.map_span(reader, NAME)
    if openlit_smolagents.is_smolagents(reader.span):  # an agent's runs, its steps, its tools
        return openlit_smolagents.map_span(reader, logs, NAME)
    if openlit_haystack.is_generator_run(reader.span):  # a generator's run around its client's call
        return openlit_haystack.generator_call(reader, NAME)
    if openlit_ag2.is_ag2(reader.span):  # AG2 Classic agents' replies, the messages they pass, their set-up
        return openlit_ag2.map_span(reader, NAME)
    # A LangGraph graph, its nodes, LangChain's runs under it: its calls come back for what is OpenLIT's below.
    operation = (openlit_langgraph.map_span(reader, logs, NAME) if openlit_langgraph.is_langgraph(reader.span)
                 # An ADK app's agents, its google-genai calls (which come back so too).
                 else openlit_google_adk.map_span(reader, logs, NAME) if openlit_google_adk.is_google_adk(reader.span)
                 # A Claude Agent SDK client's turns, subagents and tools, and the answers made up from its messages.
                 else openlit_claude_agent_sdk.map_span(reader, logs, NAME)
                 if openlit_claude_agent_sdk.is_claude_agent_sdk(reader.span)
                 # The Anthropic client's calls: uncached prompt tokens, `system` as it was passed.
                 else openlit_anthropic.map_span(reader, logs) if openlit_anthropic.is_anthropic(reader.span)
                 else otel_genai.map_span(reader, logs))
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, LlmCall):
        _name_calls_by_call_id(reader, operation)
        reader.consume(*_RESTATED_TOOL_CALLS)
        _drop_not_given(reader, operation)
        if not operation.tool_definitions:  # on the span only for a few (OpenAI's Responses calls, LangChain's)
            operation.tool_definitions = event_tool_definitions(reader.span, logs)
        # A smolagents agent's memory as its client sent it (the call spans say nothing of smolagents but that).
        operation.input_messages = openlit_smolagents.read_sent_memory(operation.input_messages)
        # OpenLIT's 0 is "no price in its table" (see above), not a reported price of nothing.
        if operation.reported_cost is not None and operation.reported_cost == 0:
            operation.reported_cost = None
    return operation
