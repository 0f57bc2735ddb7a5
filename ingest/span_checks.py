"""The spans of an export request that OTLP partial success rejects, their removal, and the
days (partitions of `spans`) the kept ones fall on.

Everything else about a span is read by ClickHouse (see `ingest/flatten.py`); these
checks touch only ids and times, which keeps the Python side of ingest to a few
microseconds per span.

A request is parsed with OTLP's own messages, which also checks what ClickHouse would
not (well-formed protobuf, valid UTF-8). Attribute values nested past protobuf's
recursion limit (~31 levels of kvlists) fail that parse although ClickHouse keeps them
at any depth (it reads a nested value as bytes): such a request is parsed again with
`Light` messages, which name only what the checks read and carry the rest as unknown
fields, re-serialised untouched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from evalkit.ingest.decode import Rejections

_ZERO_TRACE = b"\x00" * 16
_ZERO_SPAN = b"\x00" * 8
DAY_NS = 86_400 * 1_000_000_000
# ClickHouse stores times as signed 64-bit nanoseconds: later ones would wrap to 1969.
MAX_TIME_NS = 2**63 - 1
# A span that ends at most this much before it starts read its clock twice in the wrong order (OpenLIT's Claude
# Agent SDK chat spans: the start taken after the end it stamped, < 1 µs apart): it is kept as lasting nothing
# (its end set to its start), not refused; further apart, its times are nonsense and it is refused.
CLOCK_SLIP_NS = 1_000_000


def _name(span: Any) -> str:
    name = span.name
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


def rejection(span: Any) -> str | None:
    """Why this span cannot be kept, or None."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        got = "all zero" if trace_id == _ZERO_TRACE else f"{len(trace_id)} bytes"
        return f"span {_name(span)!r}: trace_id must be 16 bytes and not all zero (got {got})"
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        got = "all zero" if span_id == _ZERO_SPAN else f"{len(span_id)} bytes"
        return f"span {_name(span)!r}: span_id must be 8 bytes and not all zero (got {got})"
    if parent and len(parent) != 8:
        return f"span {_name(span)!r}: parent_span_id must be empty or 8 bytes (got {len(parent)} bytes)"
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start == 0:
        return f"span {_name(span)!r}: start_time_unix_nano is missing"
    if start > MAX_TIME_NS or end > MAX_TIME_NS:
        return (f"span {_name(span)!r}: times must be below 2^63 ns (year 2262); got start {start}, end {end}")
    if end < start - CLOCK_SLIP_NS:
        return (f"span {_name(span)!r}: ends {start - end} ns before it starts ({end} < {start}); "
                f"up to {CLOCK_SLIP_NS} ns is kept as lasting nothing")
    for event in span.events:
        if event.time_unix_nano > MAX_TIME_NS:
            return f"span {_name(span)!r}: event time {event.time_unix_nano} is not below 2^63 ns (year 2262)"
    return None


def _spans(request: Any) -> Iterable[Any]:
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            yield from scope_spans.spans


def drop_rejected(request: Any, extra_check: Any = None) -> tuple[int, Rejections, set[int], bool]:
    """Remove the spans that cannot be kept from an export request, in place; returns how many
    spans remain, what was rejected, the days (since 1970, UTC) the kept spans start on, and whether a
    kept span was changed (its end set to its start: `CLOCK_SLIP_NS`), so that the request must be
    serialised again.

    `extra_check(span)` may give one more reason to reject a span (see `parse_light`)."""
    kept = 0
    clamped = False
    rejections = Rejections()
    days: set[int] = set()
    add_day = days.add
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = scope_spans.spans
            bad: list[int] = []
            for index, span in enumerate(spans):
                # The common case in one expression (this loop is most of ingest's Python time);
                # `rejection` says why only for a span that fails it.
                trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
                start, end = span.start_time_unix_nano, span.end_time_unix_nano
                if (len(trace_id) == 16 and len(span_id) == 8 and (not parent or len(parent) == 8)
                        and 0 < start <= end <= MAX_TIME_NS and trace_id != _ZERO_TRACE and span_id != _ZERO_SPAN
                        and (not span.events or all(e.time_unix_nano <= MAX_TIME_NS for e in span.events))):
                    reason = None
                else:
                    reason = rejection(span)
                    if reason is None and end < start:  # a clock slip `rejection` lets through: lasting nothing
                        span.end_time_unix_nano = start
                        clamped = True
                if reason is None and extra_check is not None:
                    reason = extra_check(span)
                if reason is None:
                    kept += 1
                    add_day(start // DAY_NS)
                else:
                    rejections.reject(reason)
                    bad.append(index)
            for index in reversed(bad):
                del spans[index]
    return kept, rejections, days, clamped


def split_by_day(request: Message, days: set[int], limit: int) -> list[tuple[Message, int, frozenset[int]]]:
    """The request as several, each with spans of at most `limit` days: ClickHouse refuses an
    insert block touching more than `max_partitions_per_insert_block` partitions of `spans`.

    Returns (request, span count, days) for each part."""
    ordered = sorted(days)
    parts: list[tuple[Message, int, frozenset[int]]] = []
    for first in range(0, len(ordered), limit):
        chunk = frozenset(ordered[first:first + limit])
        part = type(request)()
        part.CopyFrom(request)
        count = 0
        for resource_spans in part.resource_spans:  # type: ignore[attr-defined]
            for scope_spans in resource_spans.scope_spans:
                spans = scope_spans.spans
                for index in reversed(range(len(spans))):
                    if spans[index].start_time_unix_nano // DAY_NS in chunk:
                        count += 1
                    else:
                        del spans[index]
        parts.append((part, count, chunk))
    return parts


def _light_classes() -> type[Message]:
    file = descriptor_pb2.FileDescriptorProto(name="evalkit_span_checks.proto", package="evalkit.checks",
                                              syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    optional, repeated = field.LABEL_OPTIONAL, field.LABEL_REPEATED

    def message(name: str, *fields: tuple[str, int, int, int, str]) -> None:
        proto = file.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            proto.field.add(name=field_name, number=number, type=kind, label=label,
                            type_name=type_name or None)

    message("Event", ("time_unix_nano", 1, field.TYPE_FIXED64, optional, ""))
    # Names as bytes: a malformed name is reported, not a reason to refuse the whole request.
    message("Span", ("trace_id", 1, field.TYPE_BYTES, optional, ""), ("span_id", 2, field.TYPE_BYTES, optional, ""),
            ("parent_span_id", 4, field.TYPE_BYTES, optional, ""), ("name", 5, field.TYPE_BYTES, optional, ""),
            ("start_time_unix_nano", 7, field.TYPE_FIXED64, optional, ""),
            ("end_time_unix_nano", 8, field.TYPE_FIXED64, optional, ""),
            ("events", 11, field.TYPE_MESSAGE, repeated, ".evalkit.checks.Event"))
    message("ScopeSpans", ("spans", 2, field.TYPE_MESSAGE, repeated, ".evalkit.checks.Span"))
    message("ResourceSpans", ("scope_spans", 2, field.TYPE_MESSAGE, repeated, ".evalkit.checks.ScopeSpans"))
    message("Export", ("resource_spans", 1, field.TYPE_MESSAGE, repeated, ".evalkit.checks.ResourceSpans"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("evalkit.checks.Export"))


LightExport = _light_classes()


def too_deep(error: DecodeError) -> bool:
    return "MaxDepth" in str(error)


def span_parse_check(full_span_type: type[Message]) -> Any:
    """A check for `drop_rejected` on `Light` spans: the span parses as an OTLP span (its
    strings valid UTF-8, its bytes well-formed), or fails only for being nested deep."""
    def check(span: Any) -> str | None:
        try:
            full_span_type.FromString(span.SerializeToString())
        except DecodeError as exc:
            if too_deep(exc):
                return None
            return f"span {_name(span)!r}: not a valid OTLP span ({exc})"
        return None

    return check
