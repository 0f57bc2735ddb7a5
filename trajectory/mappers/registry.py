"""The emitter families in detection order: the most specific convention first."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def _load(module_name: str, covers: Sequence[str] = ()) -> Emitter | None:
    try:
        module = importlib.import_module(f"evalkit.trajectory.mappers.{module_name}")
    except ModuleNotFoundError:
        return None
    return Emitter(module.NAME, module.detect, module.map_span, frozenset(covers))


EMITTERS: tuple[Emitter, ...] = tuple(
    emitter
    for emitter in (
        _load("pydantic_ai", covers=["otel-genai"]),
        _load("openinference"),
        _load("vercel_ai", covers=["otel-genai"]),
        _load("openllmetry", covers=["otel-genai"]),
        _load("langfuse", covers=["otel-genai"]),
        _load("mlflow"),
        _load("otel_genai"),
    )
    if emitter is not None
)


def detect(span: Span) -> list[Emitter]:
    return [emitter for emitter in EMITTERS if emitter.detect(span)]
