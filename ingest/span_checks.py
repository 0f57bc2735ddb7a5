"""The spans of an export request that OTLP partial success rejects, and their removal.

Everything else about a span is read by ClickHouse (see `ingest/flatten.py`); these
checks touch only ids and times, which keeps the Python side of ingest to a few
microseconds per span.
"""

from __future__ import annotations

from typing import Any

from evalkit.ingest.decode import Rejections

_ZERO_TRACE = b"\x00" * 16
_ZERO_SPAN = b"\x00" * 8


def rejection(span: Any) -> str | None:
    """Why this span cannot be kept, or None."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        return f"span {span.name!r}: trace_id must be 16 bytes and not all zero (got {len(trace_id)} bytes)"
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return f"span {span.name!r}: span_id must be 8 bytes and not all zero (got {len(span_id)} bytes)"
    if parent and len(parent) != 8:
        return f"span {span.name!r}: parent_span_id must be empty or 8 bytes (got {len(parent)} bytes)"
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start == 0:
        return f"span {span.name!r}: start_time_unix_nano is missing"
    if end < start:
        return f"span {span.name!r}: ends before it starts ({end} < {start})"
    return None


def drop_rejected(request: Any) -> tuple[int, Rejections]:
    """Remove the spans that cannot be kept from an `ExportTraceServiceRequest`, in place;
    returns how many spans remain and what was rejected."""
    kept = 0
    rejections = Rejections()
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = scope_spans.spans
            bad: list[int] = []
            for index, span in enumerate(spans):
                reason = rejection(span)
                if reason is None:
                    kept += 1
                else:
                    rejections.reject(reason)
                    bad.append(index)
            for index in reversed(bad):
                del spans[index]
    return kept, rejections
