"""Error status and exception events of a span, as shown on the step it becomes."""

from __future__ import annotations

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ErrorInfo
from evalkit.trajectory.span import STATUS_ERROR


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
    if exceptions:
        reader.read_events("exception")
    error_type = reader.text("error.type") if "error.type" in reader.attributes else None
    if span.status_code != STATUS_ERROR and not exceptions and not error_type:
        return None
    return ErrorInfo(status_message=span.status_message, error_type=error_type, exceptions=exceptions)
