"""Claude Code's own OpenTelemetry export (the CLI's, scope `com.anthropic.claude_code.tracing`).

With `CLAUDE_CODE_ENABLE_TELEMETRY=1` the CLI exports log events (scope `com.anthropic.claude_code.events`,
`event.name` without the `claude_code.` its body has) and, with `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`, spans,
all with `session.id` (and `gen_ai.conversation.id`) the session's. Per user turn one trace:

- `claude_code.interaction` (root, `gen_ai.operation.name` `invoke_agent`): `user_prompt` (the text with
  OTEL_LOG_USER_PROMPTS, else `<REDACTED>`).
- `claude_code.llm_request` per Messages API request (`chat`): model, `gen_ai.usage.input_tokens` counting the
  cache reads and writes (`inputTokens + cacheReadTokens + cacheWriteTokens` in the CLI), output, cache read
  and write tokens, `stop_reason`. No content: the answer (`response.model_output`) is set only under the
  internal detailed beta tracing (ENABLE_BETA_TRACING_DETAILED with a BETA_TRACING_ENDPOINT).
- `claude_code.tool` per tool call (`execute_tool`): `tool_name` as the model called it (`mcp__<server>__<tool>`;
  `gen_ai.tool.name` is the MCP tool's own name), `gen_ai.tool.call.id` the tool_use id, the result in a
  `tool.output` event (OTEL_LOG_TOOL_CONTENT); its children `claude_code.tool.blocked_on_user` (the permission
  check) and `claude_code.tool.execution` (`success`, the error on a failure) restate it.

A subagent (the `Agent` tool, `Task` in older CLIs, with `subagent_type`) runs inside its call's
`claude_code.tool.execution` span: its `llm_request` and `tool` spans are that span's children and carry its
`agent_id`. No span of its own stands for it (`claude_code.subagent.spawn` is the internal detailed tracing's),
so the execution span is the subagent's run, known by the events the subagent left there (below).

The content is in the log events, each linked to the span active when it was emitted: the interaction span
(a subagent's: its call's `tool.execution` span), never the `llm_request` span, which the CLI does not make active.
`claude_code.api_request_body` / `api_response_body` (OTEL_LOG_RAW_API_BODIES=1: the request and the response,
as JSON, linked by `request_body_id`), `assistant_response` (the answer's text, OTEL_LOG_ASSISTANT_RESPONSES),
`api_request` (usage, `cost_usd`), `tool_result` (`tool_use_id`, `success`, `tool_input` and the failure's
`error` with OTEL_LOG_TOOL_DETAILS). `relink_logs` gives each call and tool span the events that are its own;
what a subagent emitted about its run as a whole stays on its execution span: `subagent_completed` (`agent_type`,
`agent_id`) when it finished, an `api_error` with its `agent_id` when a request of its failed.

A compaction of the session's context (`/compact`, auto-compact) is a request of query source `compact` and a
`compaction` event after it (its trigger), which `relink_logs` gives that request: `claude_code_compaction.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import claude_code_compaction, claude_code_reminders, otel_genai
from evalkit.trajectory.mappers.messages import (
    instruction_texts,
    openai_tool_definition,
    parse_arguments,
    parse_input_messages,
    parse_messages,
)
from evalkit.trajectory.mappers.reader import SpanReader, as_int, as_text, parse_json
from evalkit.trajectory.operations import AgentRun, ErrorInfo, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "claude-code"
SCOPE = "com.anthropic.claude_code.tracing"
EVENTS_SCOPE = "com.anthropic.claude_code.events"
LLM_REQUEST, TOOL, INTERACTION = "claude_code.llm_request", "claude_code.tool", "claude_code.interaction"
TOOL_EXECUTION = "claude_code.tool.execution"
_REDACTED = "<REDACTED>"
# Claude Code's own names for what the GenAI keys beside them say (tokens, model, the stop reason), and its
# bookkeeping: timings, retries, the permission check's decision, redaction-safe copies of names.
_BOOKKEEPING = (
    "span.type", "model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens",
    "stop_reason", "success", "attempt", "duration_ms", "ttft_ms", "first_content_ms", "speed", "effort",
    "llm_request.context", "query_source", "query_source_safe", "request_id", "client_request_id", "status_code",
    "response.has_tool_call", "tool_name", "tool_name_safe", "tool_use_id", "anthropic.mcp.server.name",
    "result_tokens", "decision", "source", "error", "error_class", "user_prompt", "user_prompt_length",
    "interaction.sequence", "interaction.duration_ms", "parent.source", "queued_sends", "anthropic.provider",
    "anthropic.custom_base_url", "terminal.type", "gen_ai.provider.name", "gen_ai.tool.call.id", "error.type",
    # A subagent's: its id on its calls and tools (the span tree already places them in its run), its type on
    # the Agent call (the run's name is read from the subagent's own `subagent_completed` event).
    "agent_id", "subagent_type",
)
_SPAN_EVENTS = ("gen_ai.request.attempt", "tool.output")
# What a subagent's query loop emits, linked to the span its run is in (`_subagent_run`).
_SUBAGENT_RUN_EVENTS = frozenset((
    "subagent_completed", "api_error", "api_request", "api_request_body", "api_response_body", "assistant_response",
))


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def _sequence(log: LogRecord) -> int:
    return as_int(log.attributes.get("event.sequence")) or 0


def relink_logs(spans: Sequence[Span], logs: Sequence[LogRecord]) -> list[LogRecord]:
    """The session's log records, Claude Code's content events linked to the span they are about.

    A request's events are linked to the span that was active (its `llm_request` span's parent), so they
    are told apart by their order: the CLI emits `api_request`, then `assistant_response` and
    `api_response_body`, and ends the request's span in one synchronous block (`$Pr` right after
    `hd("api_request", …)`), so the n-th `api_request` of a trace by `event.sequence` is its n-th successful
    `llm_request` span to end; a request id both record (Anthropic's `request-id` header) pairs them first.
    A response's request body is the one its `request_body_id` names; a `tool_result` event goes to the tool
    span of its `tool_use_id`. Records of other emitters, and ones that fit nowhere, are left as they are.
    """
    ours = [log for log in logs if log.scope_name == EVENTS_SCOPE and log.trace_id]
    if not ours:
        return list(logs)
    calls: dict[str, list[Span]] = {}
    tools: dict[tuple[str, str], str] = {}
    for span in spans:
        if span.scope_name != SCOPE:
            continue
        if span.name == LLM_REQUEST and span.attributes.get("success") is True:
            calls.setdefault(span.trace_id, []).append(span)
        elif span.name == TOOL and isinstance(call_id := span.attributes.get("gen_ai.tool.call.id"), str):
            tools[(span.trace_id, call_id)] = span.span_id
    ours.sort(key=_sequence)
    owner: dict[int, str] = {}  # id(record) -> the span id it is about
    requests: dict[str, list[LogRecord]] = {}
    for log in ours:
        if log.event_name == "api_request":
            requests.setdefault(log.trace_id, []).append(log)
    for trace_id, trace_calls in calls.items():
        for log, span in _pair(requests.get(trace_id, []), sorted(trace_calls, key=lambda s: s.end_time_unix_nano)):
            owner[id(log)] = span.span_id
    request_of: dict[str, str] = {}  # request_body_id -> span id
    latest: dict[tuple[str, str], str] = {}  # (trace, linked span) -> the span of its last api_request
    summarizing: dict[tuple[str, str], str] = {}  # (trace, linked span) -> its last api_request's, a summary request
    for log in ours:
        linked = (log.trace_id, log.span_id)
        if log.event_name == "api_request":
            if id(log) in owner:
                latest[linked] = owner[id(log)]
            else:
                latest.pop(linked, None)
            if id(log) in owner and claude_code_compaction.is_summary_request(log.attributes):
                summarizing[linked] = owner[id(log)]
            else:
                summarizing.pop(linked, None)
        elif log.event_name == claude_code_compaction.COMPACTION_EVENT and linked in summarizing:
            owner[id(log)] = summarizing[linked]  # the compaction its summary request made (its trigger)
        elif (log.event_name in ("assistant_response", "api_response_body") and linked in latest
              and "tool_use_id" not in log.attributes):  # not a message the model sent through a tool
            owner[id(log)] = latest[linked]
            body_id = as_text(log.attributes.get("request_body_id"))
            if body_id:
                request_of[body_id] = latest[linked]
        elif log.event_name == "tool_result":
            tool = tools.get((log.trace_id, str(log.attributes.get("tool_use_id"))))
            if tool is not None:
                owner[id(log)] = tool
    for log in ours:
        if log.event_name == "api_request_body":
            body_id = as_text(log.attributes.get("request_body_id"))
            if body_id in request_of:
                owner[id(log)] = request_of[body_id]
    return [replace(log, span_id=owner[id(log)]) if id(log) in owner else log for log in logs]


def _pair(requests: list[LogRecord], calls: list[Span]) -> list[tuple[LogRecord, Span]]:
    """`api_request` events with the calls they report: by request id, the rest in order (only when as many)."""
    pairs = []
    by_id = {rid: span for span in calls if (rid := as_text(span.attributes.get("request_id")))}
    left_requests = []
    for log in requests:
        span = by_id.pop(as_text(log.attributes.get("request_id")) or "", None)
        if span is not None:
            pairs.append((log, span))
        else:
            left_requests.append(log)
    paired = {id(span) for _, span in pairs}
    left_calls = [span for span in calls if id(span) not in paired]
    if len(left_requests) == len(left_calls):
        pairs.extend(zip(left_requests, left_calls, strict=True))
    return pairs


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    span = reader.span
    operation: Operation | None = None
    if span.name == LLM_REQUEST:
        operation = _llm_call(reader, logs)
    elif span.name == TOOL:
        operation = _tool(reader, logs)
    elif span.name == INTERACTION:
        reader.used.update(otel_genai.IDENTITY_KEYS)
        prompt = reader.text("user_prompt")
        operation = AgentRun(span=span, emitter=NAME, input_text=prompt if prompt and prompt != _REDACTED else None)
    elif span.name == TOOL_EXECUTION:
        operation = _subagent_run(span, logs)
    # `tool.blocked_on_user`, and `tool.execution` where no subagent ran, restate their tool span (a failure: the
    # `tool_result` event); hooks and the rest are Claude Code's bookkeeping.
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)
    reader.read_events(*_SPAN_EVENTS)
    return operation


def _llm_call(reader: SpanReader, logs: Sequence[LogRecord]) -> LlmCall:
    call = otel_genai.llm_call(reader, (), emitter=NAME)
    # `gen_ai.usage.input_tokens` counts the cache reads and writes: the CLI adds them to the API's input_tokens.
    call.usage = otel_genai.read_usage(reader, input_includes_cache=True)
    events = {log.event_name: log for log in sorted(logs, key=_sequence)}
    request = _body(events.get("api_request_body"))
    response = _body(events.get("api_response_body"))
    if isinstance(request, dict):
        call.input_messages = parse_input_messages(request.get("messages"), reader.memo)
        call.shown_tool_results = claude_code_reminders.reminded_results(call.input_messages)
        call.system_instructions = [text for text in instruction_texts(request.get("system"))
                                    if not text.startswith("x-anthropic-billing-header:")]
        tools = request.get("tools")
        call.tool_definitions = [d for d in map(openai_tool_definition, tools if isinstance(tools, list) else ())
                                 if d is not None]
    if isinstance(response, dict):
        call.output_messages = parse_messages(response, "assistant")
        call.response_id = as_text(response.get("id"))
    elif "assistant_response" in events:
        # Without the raw bodies: the answer's text blocks alone (its tool calls are in no event).
        text = as_text(events["assistant_response"].attributes.get("response"))
        if text and text != _REDACTED:
            call.output_messages = parse_messages([{"role": "assistant", "content": text}], "assistant")
    asked = events.get("api_request_body") or events.get("api_request")
    if claude_code_compaction.is_summary_request(reader.span.attributes) or (
            asked is not None and claude_code_compaction.is_summary_request(asked.attributes)):
        # Claude Code's summary of the conversation so far (/compact, auto-compact): its prompt what it was asked.
        call.input_messages = claude_code_compaction.asked_apart(call.input_messages)
        answer = "\n".join(message.text for message in call.output_messages)
        call.compaction = claude_code_compaction.compaction(
            call.input_messages, answer, events.get(claude_code_compaction.COMPACTION_EVENT))
    return call


def _body(log: LogRecord | None) -> Any:
    return None if log is None else parse_json(log.attributes.get("body"))


def _subagent_run(span: Span, logs: Sequence[LogRecord]) -> AgentRun | None:
    """The subagent a tool's execution ran (Claude Code's Agent tool), or None for any other tool's.

    Told by the events the subagent's own query loop emitted (with its `agent_id`) that `relink_logs` left on the
    span: its completion, a request's error, a request no answer was paired with. (Not any event with an agent
    id: a subagent's tool runs under its own `tool.execution` span, active for what that tool emits.) Named by
    `subagent_completed`'s `agent_type` (the `subagent_type` the model asked for; `custom` for one the application
    defined, unless OTEL_LOG_TOOL_DETAILS), else by the `agent.name` its request events carry. A subagent that left
    none of these here is not told apart: its calls stay the turn's.
    """
    own = [log for log in logs if log.scope_name == EVENTS_SCOPE and log.event_name in _SUBAGENT_RUN_EVENTS
           and "agent_id" in log.attributes]
    if not own:
        return None
    named = sorted(own, key=lambda log: log.event_name != "subagent_completed")  # its type first
    name = next((text for log in named
                 if (text := as_text(log.attributes.get("agent_type") or log.attributes.get("agent.name")))), None)
    return AgentRun(span=span, emitter=NAME, name=name)


def _tool(reader: SpanReader, logs: Sequence[LogRecord]) -> ToolExecution:
    execution = otel_genai.tool_execution(reader, emitter=NAME)
    # The name the model called (`mcp__weather__get_weather`), not the MCP tool's own (`gen_ai.tool.name`).
    execution.name = reader.text("tool_name") or execution.name
    output = next((event.attributes.get("output") for event in reader.span.events if event.name == "tool.output"),
                  None)
    if output is not None:
        execution.result = output if isinstance(output, str) else parse_json(output)
    done = next((log for log in logs if log.event_name == "tool_result"), None)
    if done is not None:
        attributes = done.attributes
        if execution.arguments is None and "tool_input" in attributes:
            execution.arguments = parse_arguments(attributes["tool_input"])
        if attributes.get("success") == "false":
            # The model is sent the error's message as the `is_error` tool_result; the span ends OK.
            message = as_text(attributes.get("error")) or ""
            execution.error = ErrorInfo(status_message=message, error_type=as_text(attributes.get("error_type")))
            if execution.result is None and message:
                execution.result = message
    return execution
