"""Google's Gemini CLI's own OpenTelemetry export (scope `gemini-cli`, `service.name` `gemini-cli`).

With `telemetry.enabled` (and `telemetry.traces` for the content of its spans) the CLI exports log events and spans,
each span carrying `gen_ai.conversation.id`, the CLI's session id (the resource's `session.id`). Every model request
and every batch of tool calls is a trace of its own; there is no span for a turn or the session (the interactive UI
alone makes a `user_prompt` one):

- `llm_call` (`gen_ai.operation.name` `llm_call`, a root) per `generateContent` / `generateContentStream` request:
  `gen_ai.input.messages` the request's contents as Gemini's own JSON (`{"role": "user" | "model", "parts":
  [{"text"}, {"text", "thought": true}, {"functionCall"}, {"functionResponse"}]}`), the whole conversation re-sent;
  `gen_ai.output.messages` the answer's content, or a streamed answer's contents one per chunk (text in pieces,
  thoughts as `thought: true` parts, function calls whole); `gen_ai.system_instructions` and
  `gen_ai.tool.definitions` (`[{"functionDeclarations": [...]}]`) as JSON; `gen_ai.usage.input_tokens` Gemini's
  `promptTokenCount` (cached tokens counted in it) and `output_tokens` its `candidatesTokenCount` (thoughts not in
  it: Gemini counts them apart, `thoughtsTokenCount`, which no span records).
- `schedule_tool_calls` (a root) over a `tool_call` per call (`gen_ai.tool.name`, `gen_ai.tool.call_id`): input the
  call's request (`args`), output the scheduler's record of it, `status` `success` or `error`, the
  `functionResponse` parts the model is sent (`response.responseParts`), a failure's `errorType`; the span's status
  stays OK when the tool failed.

The CLI names each function call itself (Gemini's come without an id): `<name>_<time>_<index>`, which its requests
send; the spans record it after the scheduler prefixed it with `<name>__`. Read here as sent, so that a call, its
tool span and the later requests' history agree.

Log events beside the spans are linked to the span active when emitted: `gemini_cli.api_request` (`role`: `main`
for the agent's own requests, `utility_router`, `utility_loop_detector`, `utility_next_speaker`, `utility_compressor`
and the rest for the CLI's own ones) and the request's `gen_ai.client.inference.operation.details` (provider,
sampling parameters) come inside their `llm_call` span. A call whose role is a `utility_*` one is the CLI's work
around the agent's conversation (`LlmCall.framework_work`): the router, first in every turn, scoring the question's
complexity to pick the turn's model, is sent the conversation and the question but asks the person nothing. The
response events (`gemini_cli.api_response`: the thoughts and cached token counts), `gemini_cli.user_prompt` and
`gemini_cli.tool_call` are emitted outside any span (no trace id), so they reach no session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import google_genai, otel_genai
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader, as_text, parse_json
from evalkit.trajectory.operations import ErrorInfo, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "gemini-cli"
SCOPE = "gemini-cli"
LLM_CALL, TOOL_CALL = "llm_call", "tool_call"
API_REQUEST = "gemini_cli.api_request"
_DETAILS = "gen_ai.client.inference.operation.details"
# The roles of the requests that are the agent's conversation; every other (`utility_*`) is the CLI's own work.
_AGENT_ROLES = frozenset({"main", "subagent"})
# What each of the CLI's own requests is for (its `LlmRole`s).
_PURPOSES = {
    "utility_router": "model routing",
    "utility_loop_detector": "loop detection",
    "utility_next_speaker": "next speaker check",
    "utility_compressor": "context compression",
    "utility_summarizer": "summary",
    "utility_edit_corrector": "edit correction",
    "utility_tool": "a tool's own request",
    "utility_autocomplete": "autocomplete",
    "utility_fast_ack_helper": "acknowledgement",
    "utility_state_snapshot_processor": "state snapshot",
}
# The CLI's own keys beside the conventions' (the prompt id the session's, the tool's description its definition's).
_BOOKKEEPING = ("gen_ai.prompt.name", "gen_ai.tool.description", "gen_ai.tool.call_id", "gen_ai.input.messages",
                "gen_ai.output.messages", "gen_ai.tool.definitions", "gen_ai.system_instructions")
_SAMPLING = ("gen_ai.request.temperature", "gen_ai.request.top_p", "gen_ai.request.top_k",
             "gen_ai.request.max_tokens", "gen_ai.request.seed")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    span = reader.span
    operation: Operation | None = None
    if span.name == LLM_CALL:
        operation = _llm_call(reader, logs)
    elif span.name == TOOL_CALL:
        operation = _tool_call(reader)
    # `schedule_tool_calls` restates its `tool_call` children (the batch's requests and records).
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)
    return operation


def _llm_call(reader: SpanReader, logs: Sequence[LogRecord]) -> LlmCall:
    attributes = reader.attributes
    call = otel_genai.llm_call(reader, (), emitter=NAME)
    # Gemini's own contents, which the conventions' reading takes for text: read again as what they are.
    memo = reader.memo
    inputs = parse_json(attributes.get("gen_ai.input.messages")) if memo is None else memo.decode(
        attributes.get("gen_ai.input.messages"))
    if isinstance(inputs, list) and memo is not None and memo.first_inputs_only:
        inputs = inputs[:1]  # counting calls: whether there is any input is all that is read
    call.input_messages = parse_messages([m for m in map(_message, inputs or ()) if m is not None])
    google_genai.gemini_contents(call)  # a failed function's `{"error": …}` response flagged
    outputs = parse_json(attributes.get("gen_ai.output.messages"))
    answer = _answer(outputs if isinstance(outputs, list) else [outputs])
    call.output_messages = parse_messages([answer], "assistant") if answer is not None else []
    call.tool_definitions = [definition for tools in parse_json(attributes.get("gen_ai.tool.definitions")) or ()
                             if isinstance(tools, dict)
                             for definition in otel_genai.tool_definitions(tools.get("functionDeclarations"))]
    asked = next((log for log in logs if log.event_name == API_REQUEST), None)
    details = next((log for log in logs if log.event_name == _DETAILS), None)
    if details is not None:
        call.provider = as_text(details.attributes.get("gen_ai.provider.name"))
        sampling = {key.removeprefix("gen_ai.request."): details.attributes[key] for key in _SAMPLING
                    if details.attributes.get(key) is not None}
        if sampling:
            call.extra["request"] = {**call.extra.get("request", {}), **sampling}
    role = as_text(asked.attributes.get("role")) if asked is not None else None
    if role and role not in _AGENT_ROLES:
        call.framework_work = {"by": "Gemini CLI", "purpose": _PURPOSES.get(role, role), "role": role}
    return call


def _call_id(name: Any, call_id: Any) -> str | None:
    """The id the CLI sent for a function call: its spans record it prefixed with the tool's name and `__`."""
    if not isinstance(call_id, str):
        return None
    return call_id.removeprefix(f"{name}__") if isinstance(name, str) else call_id


def _message(content: Any) -> dict[str, Any] | None:
    """A Gemini content as a message of the GenAI conventions' parts (what `parse_messages` reads)."""
    if not isinstance(content, dict):
        return None
    parts = [part for part in map(_part, content.get("parts") or ()) if part is not None]
    return {"role": "assistant" if content.get("role") == "model" else content.get("role") or "user", "parts": parts}


def _part(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    if isinstance(call := raw.get("functionCall"), dict):
        return {"type": "tool_call", "id": _call_id(call.get("name"), call.get("id")), "name": call.get("name"),
                "arguments": call.get("args")}
    if isinstance(response := raw.get("functionResponse"), dict):
        return {"type": "tool_call_response", "id": _call_id(response.get("name"), response.get("id")),
                "name": response.get("name"), "response": response.get("response")}
    if isinstance(raw.get("text"), str):
        return {"type": "reasoning" if raw.get("thought") is True else "text", "content": raw["text"]}
    if isinstance(blob := raw.get("inlineData"), dict):
        return {"type": "blob", "mime_type": blob.get("mimeType"), "content": blob.get("data")}
    if isinstance(file := raw.get("fileData"), dict):
        return {"type": "uri", "mime_type": file.get("mimeType"), "uri": file.get("fileUri")}
    return None


def _answer(contents: list[Any]) -> dict[str, Any] | None:
    """The answer's one message: a streamed answer's chunks joined, text and thought pieces as Gemini joins them."""
    parts: list[dict[str, Any]] = []
    for content in contents:
        message = _message(content)
        for part in message["parts"] if message is not None else ():
            last = parts[-1] if parts else None
            if last is not None and last["type"] == part["type"] and part["type"] in ("text", "reasoning"):
                parts[-1] = {**last, "content": last["content"] + part["content"]}
            else:
                parts.append(part)
    return {"role": "assistant", "parts": parts} if parts else None


def _tool_call(reader: SpanReader) -> ToolExecution:
    execution = otel_genai.tool_execution(reader, emitter=NAME)
    attributes = reader.attributes
    execution.call_id = _call_id(execution.name, as_text(attributes.get("gen_ai.tool.call_id")))
    asked = parse_json(attributes.get("gen_ai.input.messages"))
    if isinstance(asked, dict):
        execution.arguments = asked.get("args")
    record = parse_json(attributes.get("gen_ai.output.messages"))
    if not isinstance(record, dict):
        return execution
    response: dict[str, Any] = record["response"] if isinstance(record.get("response"), dict) else {}
    # What the model is sent: the functionResponse's `response` (`{"output": …}`, a failure's `{"error": …}`).
    shown = [part["functionResponse"].get("response") for part in response.get("responseParts") or ()
             if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]
    if shown:
        execution.result = shown[0] if len(shown) == 1 else shown
    if record.get("status") == "error":
        failure = shown[0] if len(shown) == 1 and isinstance(shown[0], dict) else {}
        message = as_text(failure.get("error")) or as_text(response.get("resultDisplay")) or ""
        execution.error = ErrorInfo(status_message=message, error_type=as_text(response.get("errorType")))
    return execution
