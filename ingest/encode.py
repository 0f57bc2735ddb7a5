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

from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.ingest.decode import LOG_COLUMNS, Limits, decode_logs
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
    message: str
    parts: tuple[Part, ...]


def _parse_spans(body: bytes) -> tuple[Message, Any]:
    """The request parsed, and the extra per-span check its messages need (see span_checks)."""
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        # Parsing also checks what ClickHouse would not: well-formed protobuf, valid UTF-8 strings.
        request.ParseFromString(body)
        return request, None
    except DecodeError as exc:
        if not too_deep(exc):
            raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    light = LightExport()
    try:
        light.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    return light, span_parse_check(trace_pb2.Span)


def encode_spans(body: bytes, framing: Framing, max_partitions: int = MAX_PARTITIONS_PER_INSERT) -> Encoded:
    try:
        stripped = only_resource_spans(body)
    except NotProtobuf as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    request, extra_check = _parse_spans(stripped)
    kept, rejections, days = drop_rejected(request, extra_check)
    if not kept:
        return Encoded(0, rejections.rejected, rejections.error_message, ())
    if len(days) > max_partitions:
        parts = tuple(
            Part(count, framing.message(part.SerializeToString()), None, chunk)
            for part, count, chunk in split_by_day(request, days, max_partitions))
        return Encoded(kept, rejections.rejected, rejections.error_message, parts)
    if rejections.rejected:
        stripped = request.SerializeToString()
    # No digest: spans are staged (a digest of each request was ~0.5 us a span, 1.5% of ingest's CPU, for
    # nothing).
    part = Part(kept, framing.message(stripped), None, frozenset(days))
    return Encoded(kept, rejections.rejected, rejections.error_message, (part,))


def encode_logs(body: bytes, agent_id: str, limits: Limits, received_ms: int, encoder: NativeEncoder,
                max_partitions: int = MAX_PARTITIONS_PER_INSERT) -> Encoded:
    request = logs_service_pb2.ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportLogsServiceRequest: {exc}") from exc
    decoded = decode_logs(request, agent_id, limits, received_ms)
    if not decoded.rows:
        return Encoded(0, decoded.rejected, decoded.error_message, ())
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
    return Encoded(len(decoded.rows), decoded.rejected, decoded.error_message, tuple(parts))
