"""The OpenAI Codex CLI's own OpenTelemetry export (`[otel]` in `$CODEX_HOME/config.toml`; scope `codex_exec` under
`codex exec`, the tracer named for the CLI's originator).

Its spans are the Rust `tracing` spans of the CLI's internals (hundreds a turn, no GenAI keys); the few that stand for
the session's work, all in one trace per turn (`turn/start` its root):

- `session_task.turn`: one user turn, with the turn's token sums (`codex.turn.token_usage.*`: input counting the cached
  input, output counting the reasoning).
- `try_run_sampling_request` (`model`): one model call (its `model_client.stream_responses_api` child is the HTTP
  request). It holds the dispatch span of every tool its answer called.
- `<tool name>` with `codex.tool.phase: dispatch` (`tool_name`, `call_id`): one tool call run.

The content is in log events (scope `codex_otel.log_only`, the name in `event.name`), linked to the span active when
they were emitted: `codex.user_prompt` (`prompt`, with `log_user_prompt`), `codex.tool_result` (`call_id`,
`tool_name`, `arguments` as the model wrote them, `output` as the model was sent it, `success`: false only where the
tool itself failed) on its tool's `dispatch_tool_call_with_state` child. `relink_logs` gives the prompt to its turn and
the tool result to its tool span and, a copy, to the call that asked for it (its tool calls are in no span).

Not exported by 0.171 (whatever `log_agent_responses` / `log_sse_deltas` say): the answers' text and reasoning
(`codex.sse_event` names the stream's events, none of their content) and each call's tokens, which only the
`codex.sse_event` of `response.completed` carries, a record linked to no trace (so never read with the session's
spans): the turn's sums go on its last call (`complete_calls`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader, as_int, as_text
from evalkit.trajectory.operations import (
    AgentRun,
    ErrorInfo,
    LlmCall,
    Message,
    Operation,
    Part,
    ToolExecution,
    Usage,
)
from evalkit.trajectory.span import LogRecord, Span

NAME = "codex-cli"
SCOPE_PREFIX = "codex"
EVENTS_SCOPE = "codex_otel.log_only"
CALL, TURN = "try_run_sampling_request", "session_task.turn"
PHASE = "codex.tool.phase"
USER_PROMPT, TOOL_RESULT = "codex.user_prompt", "codex.tool_result"
_TURN_USAGE = "codex.turn.token_usage."
# `exec_command`'s output as the model reads it: the process's exit code on a line of its own.
_EXIT_CODE = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)


def detect(span: Span) -> bool:
    return span.scope_name.startswith(SCOPE_PREFIX)


def _event(log: LogRecord) -> str:
    """The event's name: the CLI's records name their source line as EventName, the event in `event.name`."""
    return as_text(log.attributes.get("event.name")) or log.event_name


def relink_logs(spans: Sequence[Span], logs: Sequence[LogRecord]) -> list[LogRecord]:
    """The session's log records, a user prompt linked to its turn's span, a tool result to its tool's dispatch span
    and (a copy) to the call that asked for it. Records of other emitters, and ones that fit nowhere, are as they
    were."""
    if not any(log.scope_name == EVENTS_SCOPE for log in logs):
        return list(logs)
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    tools: dict[tuple[str, str], Span] = {}
    turns: dict[str, list[Span]] = {}
    for span in spans:
        if not detect(span):
            continue
        if span.attributes.get(PHASE) == "dispatch" and isinstance(call_id := span.attributes.get("call_id"), str):
            tools[(span.trace_id, call_id)] = span
        elif span.name == TURN:
            turns.setdefault(span.trace_id, []).append(span)
    relinked: list[LogRecord] = []
    for log in logs:
        name = _event(log) if log.scope_name == EVENTS_SCOPE else ""
        if name == TOOL_RESULT and (tool := tools.get((log.trace_id, str(log.attributes.get("call_id"))))):
            relinked.append(replace(log, span_id=tool.span_id))
            call = _ancestor(tool, CALL, by_id)
            if call is not None:  # what the answer called: its name and arguments are in this record alone
                relinked.append(replace(log, span_id=call.span_id))
        elif name == USER_PROMPT and (turn := _turn_of(log, turns.get(log.trace_id, ()))):
            relinked.append(replace(log, span_id=turn.span_id))
        else:
            relinked.append(log)
    return relinked


def _ancestor(span: Span, name: str, by_id: dict[tuple[str, str], Span]) -> Span | None:
    parent = by_id.get((span.trace_id, span.parent_span_id))
    while parent is not None and parent.name != name:
        parent = by_id.get((parent.trace_id, parent.parent_span_id))
    return parent


def _turn_of(log: LogRecord, turns: Iterable[Span]) -> Span | None:
    """The turn a prompt started: the first of its trace to end after it was logged (it is logged as the turn is
    submitted, before its span starts)."""
    return min((turn for turn in turns if turn.end_time_unix_nano >= log.time_unix_nano),
               key=lambda turn: turn.start_time_unix_nano, default=None)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    span = reader.span
    ours = sorted((log for log in logs if log.scope_name == EVENTS_SCOPE),
                  key=lambda log: (as_int(log.attributes.get("tool_result_seq")) or 0, log.time_unix_nano))
    if span.name == CALL:
        reader.consume("model", "turn_id")
        calls = [Part("tool_call", call_id=as_text(log.attributes.get("call_id")),
                      name=as_text(log.attributes.get("tool_name")),
                      arguments=parse_arguments(log.attributes.get("arguments")))
                 for log in ours if _event(log) == TOOL_RESULT]
        return LlmCall(span=span, emitter=NAME, model=as_text(span.attributes.get("model")),
                       output_messages=[Message("assistant", calls)] if calls else [])
    if span.attributes.get(PHASE) == "dispatch":
        reader.consume(PHASE, "tool_name", "call_id", "tool_source", "aborted", "turn_id", "turn.id",
                       "conversation.id")
        return _tool(span, next((log for log in ours if _event(log) == TOOL_RESULT), None))
    if span.name == TURN:
        reader.consume_prefix(_TURN_USAGE)
        reader.consume("model", "turn.id", "codex.turn.reasoning_effort")
        prompt = next((as_text(log.attributes.get("prompt")) for log in ours if _event(log) == USER_PROMPT), None)
        return AgentRun(span=span, emitter=NAME, input_text=prompt, model=as_text(span.attributes.get("model")))
    return None


def _tool(span: Span, done: LogRecord | None) -> ToolExecution:
    execution = ToolExecution(span=span, emitter=NAME, name=as_text(span.attributes.get("tool_name")),
                              call_id=as_text(span.attributes.get("call_id")))
    if done is None:
        return execution
    attributes = done.attributes
    execution.arguments = parse_arguments(attributes.get("arguments"))
    output = as_text(attributes.get("output"))
    execution.result = output
    if attributes.get("success") == "false":  # the tool itself failed (an unknown tool, a patch that did not apply)
        execution.error = ErrorInfo(status_message=output or "")
    elif output and (code := _EXIT_CODE.search(output)) and code.group(1) != "0":
        # A command that ran and exited non-zero: the tool succeeded, the command failed, as the model was told.
        execution.error = ErrorInfo(status_message=code.group(0), error_type="exit code")
    return execution


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each turn's token sums (`session_task.turn`'s `codex.turn.token_usage.*`) on its last call: the CLI records no
    call's usage where the session's spans are read (only on `codex.sse_event` records linked to no trace)."""
    ours = [call for call in calls if call.emitter == NAME]
    if not ours:
        return
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    last: dict[tuple[str, str], LlmCall] = {}
    for call in ours:
        turn = _ancestor(call.span, TURN, by_id)
        if turn is None:
            continue
        key = (turn.trace_id, turn.span_id)
        if key not in last or call.span.start_time_unix_nano > last[key].span.start_time_unix_nano:
            last[key] = call
    for key, call in last.items():
        attributes = by_id[key].attributes
        call.usage = Usage(
            input_tokens=as_int(attributes.get(_TURN_USAGE + "input_tokens")),
            output_tokens=as_int(attributes.get(_TURN_USAGE + "output_tokens")),
            cache_read_tokens=as_int(attributes.get(_TURN_USAGE + "cached_input_tokens")),
            cache_write_tokens=as_int(attributes.get(_TURN_USAGE + "cache_write_input_tokens")),
            reasoning_tokens=as_int(attributes.get(_TURN_USAGE + "reasoning_output_tokens")) or None)
