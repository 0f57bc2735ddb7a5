"""The emitter families in detection order: the most specific convention first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalkit.trajectory.mappers import (
    langfuse,
    mlflow,
    openinference,
    openllmetry,
    otel_genai,
    pydantic_ai,
    vercel_ai,
)
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation
from evalkit.trajectory.span import LogRecord, Span


@dataclass(frozen=True)
class Emitter:
    name: str
    detect: Callable[[Span], bool]
    map_span: Callable[[SpanReader, Sequence[LogRecord]], Operation | None]
    # Emitters whose reading this one already includes (it delegates to them).
    covers: frozenset[str] = frozenset()


EMITTERS: tuple[Emitter, ...] = (
    Emitter(pydantic_ai.NAME, pydantic_ai.detect, pydantic_ai.map_span, frozenset({otel_genai.NAME})),
    Emitter(openinference.NAME, openinference.detect, openinference.map_span),
    Emitter(vercel_ai.NAME, vercel_ai.detect, vercel_ai.map_span, frozenset({otel_genai.NAME})),
    Emitter(openllmetry.NAME, openllmetry.detect, openllmetry.map_span, frozenset({otel_genai.NAME})),
    Emitter(langfuse.NAME, langfuse.detect, langfuse.map_span, frozenset({otel_genai.NAME})),
    Emitter(mlflow.NAME, mlflow.detect, mlflow.map_span),
    Emitter(otel_genai.NAME, otel_genai.detect, otel_genai.map_span),
)


def detect(span: Span) -> list[Emitter]:
    return [emitter for emitter in EMITTERS if emitter.detect(span)]
