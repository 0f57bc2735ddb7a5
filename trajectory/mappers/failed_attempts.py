"""A failed attempt at a model request, as the step of the call that answered the request lists it.

A framework that makes a request again after it failed (a fallback to another model, a retry of the same one) records
the attempts that failed beside or under the call that answered: pydantic-ai as ERROR children of the request's `chat`
span (`pydantic_ai_attempts.py`), LiteLLM as `litellm_request` spans of their own beside the answer's
(`litellm_failed_attempts.py`), LangChain's fallbacks under OpenInference as LLM spans side by side under the
`RunnableWithFallbacks` span (`langchain_failed_attempts.py`, `list_before_answers`). None is a step: each is listed on
the answering call's step, in `extra.failed_attempts`, where a reader sees the answer, the model that gave it, and which
model failed before it and how (the UI's "failed attempts before this answer"; each counts as an error,
`summary.summarise`). One shape for every emitter, so that the page and the error counts read them alike.

A request no answer follows (every retry failed, no fallback was left: the run raised) is shown the same way by every
emitter too (`mark_unanswered`): a call whose span failed and records nothing the model answered (no part of an
answer, no tokens, no cost) is a step showing its failure where it happened, counting no LLM call and priced nothing
(`LlmCall.answered` False: `llm_call_count` 0, no metrics), so that it neither counts as a call no model answered nor
leaves the session's total cost unknown; it still counts as an error. Several failed attempts at one request that
an emitter records side by side with no answer after them are one such step, the last attempt's, listing those
before it in `extra.failed_attempts` (`list_before_answers`). The session list counts the same (trajectory/
session_list.py, `_SPANS_COUNTED`: a failed LLM span with no tokens and no cost is no call; its error counts).
What a span does not record it cannot show: a call the model did answer whose instrumentation failed it and lost the
usage (OpenLIT 1.45 on a re-sent Responses output item: tests/captures/openai-sdk_openlit_reasoning) reads the same
as a request that failed, and is shown so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evalkit.trajectory.operations import ErrorInfo, LlmCall
from evalkit.trajectory.span import STATUS_ERROR, Span


def failed_attempt(span: Span, *, model: str | None, provider: str | None, attempt: int | None,
                   error: ErrorInfo | None, http_status_code: int | None = None) -> dict[str, Any]:
    """The attempt recorded by `span`: the model tried, its provider, its position among the request's attempts (0 the
    first), the span, how long it took, the error as an errored call's `extra.error` is, and the provider's HTTP
    status where the emitter records it apart from the error's message."""
    duration = span.end_time_unix_nano - span.start_time_unix_nano
    entry: dict[str, Any] = {
        "model": model,
        "provider": provider,
        "attempt": attempt,
        "span_id": span.span_id,
        "duration_ms": round((duration if duration > 0 else 0) / 1e6, 3),
    }
    if http_status_code is not None:
        entry["http_status_code"] = http_status_code
    if error is not None:
        entry["error"] = error.as_extra()
    return entry


def list_before_answers(calls: Iterable[LlmCall]) -> None:
    """Of calls an emitter records side by side under the span that made the request (LangChain's
    `RunnableWithFallbacks`: one LLM span per model tried), each that answered given the failed calls made before it
    under the same parent since the previous answer there: listed on its step as `extra.failed_attempts` (in the order
    made, 0 the first), each of them marked a failed attempt (`LlmCall.failed_attempt`: no step, no LLM call). The
    failures no answer follows under their parent (every model failed, every retry) are one step where the last
    happened, listing those before it the same way (`mark_unanswered` makes it count no LLM call)."""
    siblings: dict[tuple[str, str], list[LlmCall]] = {}
    for call in calls:
        if call.span.parent_span_id:
            siblings.setdefault((call.span.trace_id, call.span.parent_span_id), []).append(call)
    for group in siblings.values():
        if not any(_failed(call) for call in group):
            continue
        group.sort(key=lambda call: (call.span.start_time_unix_nano, call.span.span_id))
        failed: list[LlmCall] = []
        for call in group:
            if _failed(call):
                failed.append(call)
            elif failed and _answered(call):
                _list_on(call, failed)
                failed = []
        if len(failed) > 1:  # no answer after them: the last attempt's step lists the ones before it
            _list_on(failed[-1], failed[:-1])


def mark_unanswered(calls: Iterable[LlmCall]) -> None:
    """Each call whose span failed with nothing answered or billed (`_failed`), and which no step lists as a failed
    attempt, marked a request the model answered nothing to (`LlmCall.answered`): its step shows the failure and
    counts no LLM call, priced nothing."""
    for call in calls:
        if call.answered and not call.failed_attempt and _failed(call):
            call.answered = False


def _list_on(call: LlmCall, failed: list[LlmCall]) -> None:
    """`failed`, the attempts made before `call` at its request, listed on its step, each no step of its own."""
    call.extra["failed_attempts"] = [_attempt(attempt, position) for position, attempt in enumerate(failed)]
    for attempt in failed:
        attempt.failed_attempt = True


def _failed(call: LlmCall) -> bool:
    """A request that raised before the model answered anything: no part of an answer, no tokens, billed nothing."""
    return (call.span.status_code == STATUS_ERROR and not any(message.parts for message in call.output_messages)
            and not (call.usage.input_tokens or call.usage.output_tokens) and call.reported_cost is None)


def _answered(call: LlmCall) -> bool:
    """The model answered: tokens counted, or a part of an answer where the stream reported none."""
    return not _failed(call) and bool(call.usage.input_tokens or call.usage.output_tokens
                                      or any(message.parts for message in call.output_messages))


def _attempt(call: LlmCall, position: int) -> dict[str, Any]:
    status = call.extra.get("http_status_code")
    return failed_attempt(call.span, model=call.request_model or call.model, provider=call.provider,
                          attempt=position, error=call.error,
                          http_status_code=status if isinstance(status, int) else None)
