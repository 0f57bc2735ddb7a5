"""An export request's bytes -> what the writer inserts: Native blocks, session index
rows and a digest of the rows' identities.

This is the CPU-heavy part of ingest and a plain function of its arguments, so
it runs in worker processes (see `ingest/workers.py`) as well as inline.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.ingest.decode import Decoded, Limits, decode_logs, decode_spans
from evalkit.ingest.native import NativeEncoder


class MalformedProtobuf(Exception):
    """The body is not a protobuf export request; the client must not retry it."""


@dataclass(frozen=True)
class Encoded:
    rows: int
    rejected: int
    message: str
    block: bytes  # Native format, "" when no row was accepted
    digest: str  # of the rows' identities, for the insert deduplication token


def _digest(keys: list[str]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for key in sorted(keys):
        digest.update(key.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def _finish(decoded: Decoded, encoder: NativeEncoder, keys: list[str]) -> Encoded:
    return Encoded(len(decoded.rows), decoded.rejected, decoded.error_message, encoder.encode(decoded.rows),
                   _digest(keys))


def encode_spans(body: bytes, agent_id: str, limits: Limits, received_ms: int, session_attribute: str,
                 encoder: NativeEncoder) -> Encoded:
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportTraceServiceRequest: {exc}") from exc
    decoded = decode_spans(request, agent_id, limits, received_ms, session_attribute)
    # The session index (session_traces) is fed by a materialized view inside the same insert.
    return _finish(decoded, encoder, [f"{r[0]}/{r[1]}/{r[2]}" for r in decoded.rows])


def encode_logs(body: bytes, agent_id: str, limits: Limits, received_ms: int, encoder: NativeEncoder) -> Encoded:
    request = logs_service_pb2.ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedProtobuf(f"body is not an ExportLogsServiceRequest: {exc}") from exc
    decoded = decode_logs(request, agent_id, limits, received_ms)
    return _finish(decoded, encoder, [f"{r[0]}/{r[1]}/{r[2]}/{r[3]}" for r in decoded.rows])
