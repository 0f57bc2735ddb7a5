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

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.ingest.decode import Limits, decode_logs
from evalkit.ingest.export_schema import Framing
from evalkit.ingest.native import NativeEncoder
from evalkit.ingest.span_checks import drop_rejected


class MalformedProtobuf(Exception):
    """The body is not a protobuf export request; the client must not retry it."""


@dataclass(frozen=True)
class Encoded:
    rows: int
    rejected: int
    message: str
    block: bytes  # in the writer's input format; b"" when nothing was accepted
    digest: str  # of the content, for the insert deduplication token


def encode_spans(body: bytes, framing: Framing) -> Encoded:
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        # Parsing also checks what ClickHouse would not: well-formed protobuf, valid UTF-8 strings.
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    kept, rejections = drop_rejected(request)
    if rejections.rejected:
        body = request.SerializeToString()
    if not kept:
        return Encoded(0, rejections.rejected, rejections.error_message, b"", "")
    # The same spans re-sent by the same agent give the same digest, whenever they arrive.
    digest = hashlib.blake2b(framing.agent_id.encode(), digest_size=16)
    digest.update(b"\x1f")
    digest.update(body)
    return Encoded(kept, rejections.rejected, rejections.error_message, framing.frame(body), digest.hexdigest())


def encode_logs(body: bytes, agent_id: str, limits: Limits, received_ms: int, encoder: NativeEncoder) -> Encoded:
    request = logs_service_pb2.ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportLogsServiceRequest: {exc}") from exc
    decoded = decode_logs(request, agent_id, limits, received_ms)
    digest = hashlib.blake2b(digest_size=16)
    for key in sorted(f"{r[0]}/{r[1]}/{r[2]}/{r[3]}" for r in decoded.rows):
        digest.update(key.encode())
        digest.update(b"\x1f")
    return Encoded(len(decoded.rows), decoded.rejected, decoded.error_message, encoder.encode(decoded.rows),
                   digest.hexdigest())
