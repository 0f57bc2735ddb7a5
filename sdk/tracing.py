"""Tracing task calls: one root span `evalkit.run` per call, exported to the service with the agent's key.

Spans go through the caller's own tracer provider when one is set globally
(we never replace it). Otherwise through evalkit's provider, installed as the
global one so that the task's own instrumentation (pydantic-ai, OpenInference,
OpenLLMetry…) records into it too. Several experiments may share that one
provider in a process, for different agents; the exporter routes each span by
its trace id to the endpoint and key of the run that opened the trace.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Status, StatusCode

ROOT_SPAN_NAME = "evalkit.run"
_MAX_VALUE_CHARS = 64 * 1024


class RoutingExporter(SpanExporter):
    """Sends each span to the exporter registered for its trace; spans of unknown traces are dropped."""

    def __init__(self) -> None:
        self._routes: dict[int, SpanExporter] = {}
        self._lock = threading.Lock()
        self.failures: dict[int, int] = defaultdict(int)  # id(exporter) -> failed exports

    def route(self, trace_id: int, exporter: SpanExporter) -> None:
        with self._lock:
            self._routes[trace_id] = exporter

    def forget(self, trace_ids: Sequence[int]) -> None:
        with self._lock:
            for trace_id in trace_ids:
                self._routes.pop(trace_id, None)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        groups: dict[int, tuple[SpanExporter, list[ReadableSpan]]] = {}
        with self._lock:
            for span in spans:
                exporter = self._routes.get(span.context.trace_id) if span.context else None
                if exporter is not None:
                    groups.setdefault(id(exporter), (exporter, []))[1].append(span)
        result = SpanExportResult.SUCCESS
        for key, (exporter, batch) in groups.items():
            if exporter.export(batch) is not SpanExportResult.SUCCESS:
                self.failures[key] += 1
                result = SpanExportResult.FAILURE
        return result

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_PROVIDER: TracerProvider | None = None
_ROUTER = RoutingExporter()
_PROVIDER_LOCK = threading.Lock()


def evalkit_provider() -> TracerProvider:
    """evalkit's provider, created once per process, global unless the caller had set one."""
    global _PROVIDER
    with _PROVIDER_LOCK:
        if _PROVIDER is None:
            _PROVIDER = TracerProvider(resource=Resource.create({"service.name": "evalkit-sdk"}))
            _PROVIDER.add_span_processor(BatchSpanProcessor(_ROUTER, schedule_delay_millis=200))
            if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                trace.set_tracer_provider(_PROVIDER)
        return _PROVIDER


def callers_provider() -> trace.TracerProvider | None:
    """The global provider when the caller set one (and it is not evalkit's)."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider) or provider is _PROVIDER:
        return None
    return provider


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= _MAX_VALUE_CHARS else text[:_MAX_VALUE_CHARS] + "…"


@dataclass
class RunTracer:
    """The tracing of one experiment's task calls."""

    exporter: SpanExporter | None  # where this experiment's spans go (None: the caller's provider)
    provider: trace.TracerProvider
    uses_callers_provider: bool
    _trace_ids: list[int] = field(default_factory=list)

    @classmethod
    def to_service(cls, endpoint: str, key: str) -> RunTracer:
        """Spans to the service's OTLP/HTTP endpoint (`…/v1/traces`) with the agent's ingest key."""
        provider = callers_provider()
        if provider is not None:
            return cls(None, provider, True)
        exporter = OTLPSpanExporter(endpoint=endpoint, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        return cls(exporter, evalkit_provider(), False)

    @classmethod
    def to_exporter(cls, exporter: SpanExporter) -> RunTracer:
        """Spans of this experiment to any exporter (an in-memory one in tests, a file, …)."""
        return cls(exporter, evalkit_provider(), False)

    @property
    def export_failures(self) -> int:
        return _ROUTER.failures.get(id(self.exporter), 0) if self.exporter is not None else 0

    @contextmanager
    def root_span(self, *, session_id: str, case_id: str, repetition: int, experiment_id: str | None,
                  input: Any, attempt: int = 1) -> Iterator[Span]:
        """The span a task call runs in; made current so the task's own spans nest under it.

        It starts a fresh trace (an empty parent context): a run inside the caller's own span would
        otherwise belong to a trace whose root never reaches the service.
        """
        tracer = self.provider.get_tracer("evalkit.sdk")
        attributes: dict[str, Any] = {
            "session.id": session_id, "evalkit.case_id": case_id, "evalkit.repetition": repetition,
            "evalkit.attempt": attempt, "evalkit.input": _text(input),
        }
        if experiment_id:
            attributes["evalkit.experiment_id"] = experiment_id
        token = otel_context.attach(otel_context.Context())
        try:
            with tracer.start_as_current_span(ROOT_SPAN_NAME, attributes=attributes,
                                              kind=trace.SpanKind.INTERNAL, record_exception=False,
                                              set_status_on_exception=False) as span:
                if self.exporter is not None:
                    trace_id = span.get_span_context().trace_id
                    _ROUTER.route(trace_id, self.exporter)
                    self._trace_ids.append(trace_id)
                yield span
        finally:
            otel_context.detach(token)

    @staticmethod
    def record_outcome(span: Span, *, status: str, answer: str | None, output: Any, error: str | None,
                       returned_session_id: str | None = None) -> None:
        if answer is not None:
            span.set_attribute("evalkit.output", _text(answer))
        elif output is not None:
            span.set_attribute("evalkit.output", _text(output))
        span.set_attribute("evalkit.status", status)
        if returned_session_id:
            span.set_attribute("evalkit.task_session_id", returned_session_id)
        if error:
            span.set_status(Status(StatusCode.ERROR, error[:1000]))
            span.set_attribute("error.type", error.split(":", 1)[0][:200])

    def flush(self, timeout_millis: int = 30000) -> bool:
        """Push every ended span out; done before waiting for a trajectory the spans build."""
        flush = getattr(self.provider, "force_flush", None)
        ok = bool(flush(timeout_millis)) if flush is not None else True
        return ok

    def close(self) -> None:
        self.flush()
        _ROUTER.forget(self._trace_ids)
        self._trace_ids.clear()
