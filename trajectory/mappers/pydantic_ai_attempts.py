"""Pydantic AI's failed attempts at a model request: the call that answered, not calls of their own.

A request pydantic-ai makes more than one attempt at (a `FallbackModel` moving on from a model that raised, such as a
provider's HTTP 500 or 429) records each attempt that failed as an ERROR child span of the request's `chat` span,
`model request attempt <model>` (`_model_request_attempts.record_attempt_span`): the tried model's attributes
(`gen_ai.request.model`, `gen_ai.provider.name`), its position among the request's attempts
(`pydantic_ai.model_request.attempt`), the error as an `exception` event and the span's status. It is deliberately
not named `chat` and has no `gen_ai.operation.name`, so that it is no model call; the `chat` span is the request, and
names the model that answered (`FallbackModel._set_span_attributes`). Read as an LLM call, each attempt was an empty
step of the failed model wrapping nothing, and the answer it sits under was dropped as its wrapper.

So an attempt is no step: it is listed on the step of the call it was made for, as `extra.failed_attempts` (each the
model tried, its provider, its position and its error as an errored call's `extra.error` is), where a reader sees the
answer, the model that gave it, and which model failed first and how. A failed attempt is billed nothing (a rejected
response, the other kind, records its usage on the attempt span, left unmapped there: none seen yet).

Seen in a real capture: tests/captures/pydantic-ai_openai_fallback-model (pydantic-ai 2.78, `FallbackModel` over two
OpenAI chat models, the first failing once with HTTP 500 and once with 429).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.failed_attempts import failed_attempt
from evalkit.trajectory.mappers.reader import SpanReader, as_int
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

ATTEMPT = "pydantic_ai.model_request.attempt"  # `_model_request_attempts.ATTEMPT_ATTRIBUTE`
_MODEL_KEYS = ("gen_ai.request.model", "gen_ai.provider.name", "gen_ai.system")


def is_attempt(span: Span) -> bool:
    return ATTEMPT in span.attributes


def read(reader: SpanReader) -> dict[str, Any]:
    """A failed attempt's span as its call's step lists it (`failed_attempts.failed_attempt`'s shape)."""
    model = reader.text("gen_ai.request.model")
    provider = reader.text("gen_ai.provider.name", "gen_ai.system")
    position = as_int(reader.get(ATTEMPT))
    reader.consume(ATTEMPT, *_MODEL_KEYS)
    return failed_attempt(reader.span, model=model, provider=provider, attempt=position, error=span_error(reader))


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each call given the failed attempts recorded under its span, in the order they were made."""
    under: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        if is_attempt(span) and span.parent_span_id:
            under.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    if not under:
        return
    for call in calls:
        attempts = under.get((call.span.trace_id, call.span.span_id))
        if attempts:
            attempts.sort(key=lambda s: (as_int(s.attributes.get(ATTEMPT)) or 0, s.start_time_unix_nano))
            call.extra["failed_attempts"] = [read(SpanReader(span)) for span in attempts]
