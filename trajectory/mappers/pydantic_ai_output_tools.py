"""Pydantic AI's output tools: the call that gives a run its structured output, and the retry refusing one.

An agent whose `output_type` is structured (a pydantic model, in pydantic-ai's default `ToolOutput` mode) is given an
output tool, `final_result` unless named otherwise: the model ends the run by calling it, the call's arguments being
the output. Each chat span lists the output tools its request offered in `model_request_parameters.output_tools`
(each `kind: "output"`; a `NativeOutput` or text run offers none). No tool span records an output tool's call: what it
was answered is only in the next call's input (and the run's `pydantic_ai.all_messages`), a `tool_call_response` part
naming the tool.

pydantic-ai answers an output tool call one of two ways (`_tool_execution.py`). Accepted, skipped or not used, with a
fixed status text (`_tool_status.TOOL_STATUS_TEXTS`: "Final result processed." for the call that ended the run, which
the model is shown only if a later run re-sends the history). Refused, because its arguments failed validation or an
output validator or output function raised `ModelRetry`, with a retried tool return (`outcome='retried'`, an error
outcome) holding the error: the message, or the validation errors as a JSON array. The spans record that return's
content alone, not its outcome, so a return to an output tool call that is no status text is a refusal: pydantic-ai
tells its status texts from anything else the same way ("to tell them from text a tool returned").

So each output tool call is kept as the model's call with its arguments (what the model answered, and what later
calls re-send), marked `extra.output_tool`; a refusal is its call's result flagged as an error, and on OpenAI shown as
the adapter sent it, `{"error": …}` (`pydantic_ai_tool_errors.wrapped_retry`), not the bare message the spans record.
The run's output itself (its span's `final_result`, as the output validators returned it) is `extra.structured_output`
of the step of the run's last call, the one that gave it: the accepted output tool call's, or a `NativeOutput` or
prompted output's JSON text (which stays the step's message), as LangChain's structured output is shown.

A refusal of a `NativeOutput`, prompted or text output answers no call (a `RetryFeedbackPart`, sent as a fenced user
message): not read here, no capture has one yet.

Seen in a real capture: tests/captures/pydantic-ai_openai_structured-output (pydantic-ai 2.78, Chat Completions: an
output validator refusing the first `final_result` once).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import pydantic_ai, pydantic_ai_deferred, pydantic_ai_tool_errors
from evalkit.trajectory.mappers.reader import dig, parse_json
from evalkit.trajectory.operations import LlmCall, Message
from evalkit.trajectory.span import Span

# pydantic-ai's `_tool_status.TOOL_STATUS_TEXTS` (2.78; the first, third and last since 2.31 at least): the returns
# that accept, skip or set aside a call, never a refusal.
STATUS_TEXTS = frozenset({
    "Final result processed.",
    "Output not used as the final result - addressing tool retries from this round first.",
    "Output tool not used - a final result was already processed.",
    "Output tool processed, but its value will not be the final result of the agent run.",
    "Output tool not used - output function execution failed.",
    "Output tool not used - output failed validation.",
    "Tool not executed - a final result was already processed.",
})
MARK = "output_tool"  # the ATIF tool call's `extra` key saying it is the run's output tool
STRUCTURED_OUTPUT = "structured_output"  # the step's `extra` key holding the run's output (LangChain's too)
# pydantic-ai's `StructuredOutputMode`s (output.py): a request's `model_request_parameters.output_mode` for an output
# the model gives as an object, by an output tool's arguments or as JSON text ("text" and "image" are none).
_STRUCTURED_MODES = frozenset({"tool", "native", "prompted"})


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each pydantic-ai call offering output tools: its calls to them marked, the refusals its input shows of earlier
    ones flagged (and, on OpenAI, shown as sent); each run's structured output on the step of the call that gave it."""
    calls = [call for call in calls if call.emitter == pydantic_ai.NAME]
    if not calls:
        return
    _structured_outputs(spans, calls)
    for call in calls:
        names = output_tool_names(call.span)
        if not names:
            continue
        # New messages, never the read ones changed: a re-sent message is one object for every call (`MessageMemo`).
        call.output_messages = [_marked(message, names) for message in call.output_messages]
        refused = _refusals(call.span, names)
        if refused:
            call.input_messages = [_flagged(message, set(refused)) for message in call.input_messages]
        for call_id, value in refused.items():
            shown = pydantic_ai_tool_errors.wrapped_retry(value, call.provider)
            if shown is not None:
                call.shown_tool_results[call_id] = shown


def _structured_outputs(spans: Sequence[Span], calls: Sequence[LlmCall]) -> None:
    """Each run's structured output (its span's `final_result`, as the output validators returned it) as
    `extra.structured_output` of the run's last call, whose answer gave it: the accepted output tool call's, a native
    or prompted output's JSON text. A text output is that call's message already; a run ending asking a person
    (`DeferredToolRequests`) output no answer."""
    outputs: dict[tuple[str, str], Any] = {}
    for span in spans:
        if "final_result" not in span.attributes:
            continue
        value = span.attributes["final_result"]
        if pydantic_ai_deferred.deferred_requests(value) is None:
            outputs[(span.trace_id, span.span_id)] = parse_json(value)
    last: dict[tuple[str, str], LlmCall] = {}
    for call in calls:
        run = (call.span.trace_id, call.span.parent_span_id or "")
        latest = last.get(run)
        if run in outputs and (latest is None or call.span.start_time_unix_nano >= latest.span.start_time_unix_nano):
            last[run] = call
    for run, call in last.items():
        mode = dig(parse_json(call.span.attributes.get("model_request_parameters")), "output_mode")
        if mode in _STRUCTURED_MODES and not isinstance(outputs[run], str):
            call.extra[STRUCTURED_OUTPUT] = outputs[run]


def _marked(message: Message, names: frozenset[str]) -> Message:
    """`message` with its calls of the output tools marked: a new message, or `message` where it calls none."""
    if not any(part.kind == "tool_call" and part.name in names for part in message.parts):
        return message
    parts = [replace(part, extra={**(part.extra or {}), MARK: True}) if part.kind == "tool_call" and part.name in names
             else part for part in message.parts]
    return Message(message.role, parts, name=message.name)


def _flagged(message: Message, refused: set[str]) -> Message:
    """`message` with the refusals among its tool results flagged as failed: a new message, or `message` where it holds
    none."""
    if not any(part.kind == "tool_result" and part.call_id in refused for part in message.parts):
        return message
    parts = [replace(part, error=True) if part.kind == "tool_result" and part.call_id in refused else part
             for part in message.parts]
    return Message(message.role, parts, name=message.name)


def output_tool_names(span: Span) -> frozenset[str]:
    """The output tools a chat span's request offered (`model_request_parameters.output_tools`)."""
    tools = dig(parse_json(span.attributes.get("model_request_parameters")), "output_tools")
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(tool["name"] for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str))


def _refusals(span: Span, names: frozenset[str]) -> dict[str, Any]:
    """The returns to output tool calls a call's input shows after its last answer that are no status text, by call
    id: the content each records (a message, or the validation errors as the list they are)."""
    messages = parse_json(span.attributes.get("gen_ai.input.messages"))
    refused: dict[str, Any] = {}
    for message in reversed(messages) if isinstance(messages, list) else ():
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        parts = message.get("parts")
        for part in parts if isinstance(parts, list) else ():
            if not (isinstance(part, dict) and part.get("type") == "tool_call_response" and part.get("name") in names
                    and isinstance(part.get("id"), str)):
                continue
            result = part.get("result")
            if not (isinstance(result, str) and result in STATUS_TEXTS):
                refused[part["id"]] = result
    return refused
