"""An export request's bytes -> what the writer inserts, plus a digest of its content
for the insert deduplication token.

Spans: the request is checked (ids and times) and framed for ClickHouse, which
reads the protobuf itself. Logs: decoded in Python into a Native block. Both are
plain functions of their arguments, so they run in worker processes (see
`ingest/workers.py`) as well as inline.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.ingest.decode import LOG_COLUMNS, Limits, Rejections, decode_logs
from evalkit.ingest.export_schema import Framing, NotProtobuf, only_resource_spans
from evalkit.ingest.native import NativeEncoder
from evalkit.ingest.span_checks import DAY_NS, LightExport, drop_rejected, span_parse_check, split_by_day, too_deep

_LOG_TIME = LOG_COLUMNS.index("time")


class MalformedProtobuf(Exception):
    """The body is not a protobuf export request; the client must not retry it."""


# ClickHouse's default `max_partitions_per_insert_block`; every insert also sets it (see writer).
MAX_PARTITIONS_PER_INSERT = 100


@dataclass(frozen=True)
class Part:
    """Rows the writer inserts together, within one insert."""

    rows: int
    block: bytes  # in the writer's input format (a staged span export: its message, framed as it is staged)
    # Of the content, for the insert deduplication token; None where the writer stages the rows
    # (spans: each staged request is a numbered row, deduplicated when flattened, ingest/flattener.py).
    digest: str | None
    partitions: frozenset[int]  # the days (partitions of the target table) the rows fall on


@dataclass(frozen=True)
class Encoded:
    """One request as the writer takes it: usually one part; several when its rows fall on more
    days than one insert may touch (a backfill, a skewed clock). Acknowledged once all are."""

    rows: int
    rejected: int
    # The first reasons (`Rejections.messages`), so rejections found before encoding (OTLP/JSON's) are
    # told with them as one count and one list.
    reasons: tuple[str, ...]
    parts: tuple[Part, ...]


def _parse_spans(body: bytes) -> tuple[Message, Any]:
    """The request parsed, and the extra per-span check its messages need (see span_checks)."""
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        # Parsing also checks what ClickHouse would not: well-formed protobuf, valid UTF-8 strings.
        request.ParseFromString(body)
        return request, None
    except DecodeError as exc:
        failure = exc
    # Nested past protobuf's limit, or one span's string not UTF-8 (a Collector forwards such spans
    # unchecked): read with `Light` messages so each span is checked alone and only a bad one is
    # rejected, not every span of the batch. What surrounds the spans must still be OTLP.
    light = LightExport()
    try:
        light.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    envelope = LightExport()
    envelope.CopyFrom(light)
    for resource_spans in envelope.resource_spans:  # type: ignore[attr-defined]
        for scope_spans in resource_spans.scope_spans:
            del scope_spans.spans[:]
    try:
        trace_service_pb2.ExportTraceServiceRequest.FromString(envelope.SerializeToString())
    except DecodeError as exc:
        if not too_deep(exc):
            raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {failure}") from exc
    return light, span_parse_check(trace_pb2.Span)


def encode_spans(body: bytes, framing: Framing, max_partitions: int = MAX_PARTITIONS_PER_INSERT) -> Encoded:
    try:
        stripped = only_resource_spans(body)
    except NotProtobuf as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    request, extra_check = _parse_spans(stripped)
    kept, rejections, days, clamped = drop_rejected(request, extra_check)
    if not kept:
        return Encoded(0, rejections.rejected, tuple(rejections.messages), ())
    if len(days) > max_partitions:
        parts = tuple(
            Part(count, framing.message(part.SerializeToString()), None, chunk)
            for part, count, chunk in split_by_day(request, days, max_partitions))
        return Encoded(kept, rejections.rejected, tuple(rejections.messages), parts)
    if rejections.rejected or clamped:
        stripped = request.SerializeToString()
    # No digest: spans are staged (a digest of each request was ~0.5 us a span, 1.5% of ingest's CPU, for
    # nothing).
    part = Part(kept, framing.message(stripped), None, frozenset(days))
    return Encoded(kept, rejections.rejected, tuple(rejections.messages), (part,))


def _light_logs() -> type[Message]:
    """An export of logs whose records are left as bytes, each to be parsed alone."""
    file = descriptor_pb2.FileDescriptorProto(name="evalkit_log_checks.proto", package="evalkit.logchecks",
                                              syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    for name, number, kind, type_name in (
            ("ScopeLogs", 2, field.TYPE_BYTES, None),  # log_records: length-delimited, read as bytes
            ("ResourceLogs", 2, field.TYPE_MESSAGE, ".evalkit.logchecks.ScopeLogs"),
            ("Export", 1, field.TYPE_MESSAGE, ".evalkit.logchecks.ResourceLogs")):
        file.message_type.add(name=name).field.add(name="items", number=number, type=kind,
                                                   label=field.LABEL_REPEATED, type_name=type_name)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("evalkit.logchecks.Export"))


LightLogs = _light_logs()


def _parse_logs(body: bytes) -> tuple[Message, Rejections]:
    """The request parsed, without the records that are not OTLP log records alone (a string not
    UTF-8, say: a Collector forwards them unchecked), which are rejected rather than the batch."""
    request = logs_service_pb2.ExportLogsServiceRequest()
    rejections = Rejections()
    try:
        request.ParseFromString(body)
        return request, rejections
    except DecodeError as exc:
        failure = exc
    light = LightLogs()
    try:
        light.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportLogsServiceRequest: {exc}") from exc
    for resource_logs in light.items:  # type: ignore[attr-defined]
        for scope_logs in resource_logs.items:
            records = scope_logs.items
            for index in reversed(range(len(records))):
                try:
                    logs_pb2.LogRecord.FromString(records[index])
                except DecodeError as exc:
                    rejections.reject(f"log record: not a valid OTLP log record ({exc})")
                    del records[index]
    try:
        request.ParseFromString(light.SerializeToString())
    except DecodeError as exc:  # outside the records: it concerns every one
        raise MalformedProtobuf(f"body is not an ExportLogsServiceRequest: {failure}") from exc
    return request, rejections


def encode_logs(body: bytes, agent_id: str, limits: Limits, received_ms: int, encoder: NativeEncoder,
                max_partitions: int = MAX_PARTITIONS_PER_INSERT) -> Encoded:
    request, rejected = _parse_logs(body)
    decoded = decode_logs(request, agent_id, limits, received_ms)
    decoded.merge(rejected)
    if not decoded.rows:
        return Encoded(0, decoded.rejected, tuple(decoded.messages), ())
    by_day: dict[int, list[tuple[Any, ...]]] = {}
    for row in decoded.rows:
        by_day.setdefault(row[_LOG_TIME] // DAY_NS, []).append(row)
    ordered = sorted(by_day)
    parts = []
    for first in range(0, len(ordered), max_partitions):
        chunk = ordered[first:first + max_partitions]
        rows = [row for day in chunk for row in by_day[day]]
        digest = hashlib.blake2b(digest_size=16)
        for key in sorted(f"{r[0]}/{r[1]}/{r[2]}/{r[3]}" for r in rows):
            digest.update(key.encode())
            digest.update(b"\x1f")
        parts.append(Part(len(rows), encoder.encode(rows), digest.hexdigest(), frozenset(chunk)))
    return Encoded(len(decoded.rows), decoded.rejected, tuple(decoded.messages), tuple(parts))
