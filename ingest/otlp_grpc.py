"""OTLP/gRPC receiver: `TraceService/Export` and `LogsService/Export`.

Status codes follow the OTLP/gRPC specification: partial success in the
response for individually bad spans, INVALID_ARGUMENT (never retried) for a
malformed request, UNAUTHENTICATED for a missing or bad key, UNAVAILABLE or
RESOURCE_EXHAUSTED with RetryInfo when the store is down or the queue is full.
"""

from __future__ import annotations

import grpc
from evalkit.ingest.pipeline import Exhausted, Ingest, Unauthenticated, Unavailable
from google.protobuf import duration_pb2
from google.protobuf.any_pb2 import Any as AnyProto
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def _authorization(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key.lower() == "authorization":
            return value if isinstance(value, str) else value.decode()
    return None


async def _refuse_retryable(context: grpc.aio.ServicerContext, exc: Unavailable) -> None:
    code = grpc.StatusCode.RESOURCE_EXHAUSTED if isinstance(exc, Exhausted) else grpc.StatusCode.UNAVAILABLE
    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=exc.retry_after))
    detail = AnyProto()
    detail.Pack(retry)
    status = status_pb2.Status(
        code=code_pb2.RESOURCE_EXHAUSTED if isinstance(exc, Exhausted) else code_pb2.UNAVAILABLE,
        message=str(exc), details=[detail])
    # `grpc-status-details-bin` is the standard carrier; the Python OTel exporter reads the second.
    context.set_trailing_metadata((
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", retry.SerializeToString()),
    ))
    await context.abort(code, str(exc))


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, ingest: Ingest) -> None:
        self.ingest = ingest

    async def Export(self, request: trace_service_pb2.ExportTraceServiceRequest,
                     context: grpc.aio.ServicerContext) -> trace_service_pb2.ExportTraceServiceResponse:
        try:
            outcome = await self.ingest.traces(request, _authorization(context))
        except Unauthenticated as exc:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(exc))
        except Unavailable as exc:
            await _refuse_retryable(context, exc)
        response = trace_service_pb2.ExportTraceServiceResponse()
        if outcome.rejected:
            response.partial_success.rejected_spans = outcome.rejected
            response.partial_success.error_message = outcome.message
        return response


class LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, ingest: Ingest) -> None:
        self.ingest = ingest

    async def Export(self, request: logs_service_pb2.ExportLogsServiceRequest,
                     context: grpc.aio.ServicerContext) -> logs_service_pb2.ExportLogsServiceResponse:
        try:
            outcome = await self.ingest.logs_export(request, _authorization(context))
        except Unauthenticated as exc:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(exc))
        except Unavailable as exc:
            await _refuse_retryable(context, exc)
        response = logs_service_pb2.ExportLogsServiceResponse()
        if outcome.rejected:
            response.partial_success.rejected_log_records = outcome.rejected
            response.partial_success.error_message = outcome.message
        return response


async def start_grpc_server(ingest: Ingest, host: str, port: int,
                            max_request_bytes: int) -> tuple[grpc.aio.Server, int]:
    """Start the receiver; returns the server and the port it bound (port 0 picks one)."""
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", max_request_bytes),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
    ])
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(ingest), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(LogsService(ingest), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen for OTLP/gRPC on {host}:{port}; is the port taken? pass --grpc-port")
    await server.start()
    return server, bound
