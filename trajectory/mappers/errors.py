"""Error status and exception events of a span, as shown on the step it becomes."""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ErrorInfo
from evalkit.trajectory.span import STATUS_ERROR

# OTel's attribute naming the class of error an operation ended with; the session list reads it too
# (trajectory/tables.py, `failed`).
ERROR_TYPE = "error.type"


def span_error(reader: SpanReader) -> ErrorInfo | None:
    span = reader.span
    exceptions = [
        {
            key: event.attributes[attribute]
            for key, attribute in (
                ("type", "exception.type"),
                ("message", "exception.message"),
                ("stacktrace", "exception.stacktrace"),
            )
            if attribute in event.attributes
        }
        for event in span.events
        if event.name == "exception"
    ] if span.events else []
    if len(exceptions) > 1:
        exceptions = _once_each(exceptions)
    if exceptions:
        reader.read_events("exception")
    error_type = reader.text(ERROR_TYPE) if ERROR_TYPE in reader.attributes else None
    if span.status_code != STATUS_ERROR and not exceptions and not error_type:
        return None
    return ErrorInfo(status_message=span.status_message, error_type=error_type, exceptions=exceptions)


# The frame the OpenTelemetry Python API's `use_span` adds to the stack trace of an exception it records
# as the exception leaves a span (`start_as_current_span(record_exception=True)`, the default).
_RECORDED_LEAVING_SPAN = ("opentelemetry/trace/__init__.py", "in use_span")


def _once_each(exceptions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exceptions, each once: frameworks that record an exception themselves inside
    `start_as_current_span` and re-raise it (AutoGen's and Semantic Kernel's tool spans) have it recorded
    again by the OpenTelemetry API as it leaves the span. That second record, the same type and message as
    the one before it, its stack trace starting in `use_span`, is no second failure."""
    kept: list[dict[str, Any]] = []
    for exception in exceptions:
        if kept and _identity(kept[-1]) == _identity(exception) and _recorded_leaving_span(exception):
            continue
        kept.append(exception)
    return kept


def _identity(exception: dict[str, Any]) -> tuple[Any, Any]:
    return exception.get("type"), exception.get("message")


def _recorded_leaving_span(exception: dict[str, Any]) -> bool:
    lines = str(exception.get("stacktrace") or "").splitlines()
    first_frame = next((line for line in lines if line.lstrip().startswith("File ")), "")
    return all(part in first_frame for part in _RECORDED_LEAVING_SPAN)
