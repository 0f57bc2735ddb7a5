"""Pydantic AI's errored tool returns as its OpenAI adapters show them to the model: wrapped as `{"error": …}`.

A tool return whose outcome is an error (`ERROR_OUTCOMES` in pydantic-ai's messages.py: `'retried'`, a `ModelRetry` or
rejected arguments; `'failed'`, a `ToolFailed`) goes to a provider with an error channel as it is (Anthropic's
`is_error`), and to one without wrapped: `model_response_str()` is `{"error": <the return's text>}`, compact JSON, and
a retry's structured content (the arguments' validation errors) is put in as the JSON array it is, not as a string of
it (`_error_value`). The OpenAI Chat Completions adapter (`model_response_str_and_user_content()`) and the Responses
adapter (`_map_tool_return_output`) both send that; a denied or interrupted return goes as it is. So read in
pydantic-ai 2.60 (where retried returns and their span attributes came in), 2.68 and 2.78; `'failed'` is wrapped so
since 2.31 at least.

No span records the wrapped text: the tool span records the return unwrapped (`model_response_str(
wrap_if_error=False)` as `gen_ai.tool.call.result`) and the next call's input the content as it is. What the spans do
record is the outcome, on the tool span: a retry that answers a tool call sets `pydantic_ai.tool.retry.cause`
(capabilities/instrumentation.py `_set_retry_attributes`, only for a retried `ToolReturnPart`), a `ToolFailed` is the
span's exception `pydantic_ai.exceptions.ToolFailedError`. The call whose input first shows such a return (a result
after the input's last answer, in the tool span's trace) shows it wrapped (`LlmCall.shown_tool_results`).

Only calls to the OpenAI provider are read so: the spans name the provider (`gen_ai.provider.name`), not the
adapter, and other providers' names are not tied to an adapter here.

Seen in real captures: tests/captures/pydantic-ai_openai_history-retry-parallel (Chat Completions, pydantic-ai 2.68),
pydantic-ai_openinference (the same under OpenInference's span processor, 2.78), pydantic-ai_openai_deferred-approval
(the Responses API, 2.78).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers import pydantic_ai
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

_RETRY_CAUSE = "pydantic_ai.tool.retry.cause"
_FAILED = "ToolFailedError"  # the exception's class; module-qualified by newer OpenTelemetry SDKs
_RETRIED, _FAILED_OUTCOME = "retried", "failed"
# The provider pydantic-ai's OpenAIChatModel and OpenAIResponsesModel name with OpenAIProvider (their `system`).
_WRAPPING_PROVIDERS = frozenset({"openai"})


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each OpenAI call of the session given the errored returns its input first shows as the adapter sent them."""
    errored = _errored_returns(spans)
    if not errored:
        return
    for call in calls:
        if call.emitter != pydantic_ai.NAME or call.provider not in _WRAPPING_PROVIDERS:
            continue
        for call_id, value in _new_results(call.span):
            found = errored.get((call.span.trace_id, call_id))
            if found is not None:
                outcome, recorded = found
                call.shown_tool_results[call_id] = _wrapped(outcome, value, recorded)


def _errored_returns(spans: Sequence[Span]) -> dict[tuple[str, str], tuple[str, str | None]]:
    """The tool spans whose return is an error outcome, by (trace id, tool call id): the outcome and the text the span
    recorded for the return (None where it recorded none: a retry a hook raised)."""
    found: dict[tuple[str, str], tuple[str, str | None]] = {}
    for span in spans:
        attributes = span.attributes
        call_id = attributes.get("gen_ai.tool.call.id")
        if not isinstance(call_id, str):
            continue
        if _RETRY_CAUSE in attributes:
            outcome = _RETRIED
        elif any(event.name == "exception" and str(event.attributes.get("exception.type", "")).rsplit(".", 1)[-1]
                 == _FAILED for event in span.events):
            outcome = _FAILED_OUTCOME
        else:
            continue
        recorded = attributes.get("gen_ai.tool.call.result")
        found[(span.trace_id, call_id)] = (outcome, recorded if isinstance(recorded, str) else None)
    return found


def _new_results(span: Span) -> list[tuple[str, Any]]:
    """The tool returns a call's input shows after its last answer, with the content each records (the value as it
    is: a string stays one, structured content stays structured)."""
    messages = parse_json(span.attributes.get("gen_ai.input.messages"))
    if not isinstance(messages, list):
        return []
    new: list[tuple[str, Any]] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        parts = message.get("parts")
        for part in reversed(parts) if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get("type") == "tool_call_response" and isinstance(part.get("id"), str):
                new.append((part["id"], part.get("result")))
    new.reverse()
    return new


def wrapped_retry(value: Any, provider: str | None) -> str | None:
    """A retried return no tool span recorded (an output tool call's refusal, `pydantic_ai_output_tools`) as the
    provider's adapter sent it, from the content the next call's input records; None where the adapter sends it as it
    is (a provider with an error channel)."""
    return _wrapped(_RETRIED, value, None) if provider in _WRAPPING_PROVIDERS else None


def _wrapped(outcome: str, value: Any, recorded: str | None) -> str:
    """`model_response_str()` of an errored return: `{"error": text}` (pydantic's compact JSON, non-ASCII as it is),
    a retry's structured content put in as the JSON it is. The text is the tool span's (pydantic's own rendering of
    the content), else the input's content rendered the same way."""
    text = recorded if recorded is not None else value if isinstance(value, str) else (
        "" if value is None else _compact(value))
    if outcome == _RETRIED and value is not None and not isinstance(value, str):
        return f'{{"error":{text}}}'
    return _compact({"error": text})


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
