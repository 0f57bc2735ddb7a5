"""OTLP/gRPC receiver: `TraceService/Export` and `LogsService/Export`.

Status codes follow the OTLP/gRPC specification: partial success in the
response for individually bad spans, INVALID_ARGUMENT (never retried) for a
malformed request or one the store refuses for what it is, UNAUTHENTICATED for a
missing or bad key, PERMISSION_DENIED for an archived agent's key, UNAVAILABLE or
RESOURCE_EXHAUSTED with RetryInfo when the store is down, the queue is full or the
memory limit is reached.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import grpc
from google.protobuf import duration_pb2
from google.protobuf.any_pb2 import Any as AnyProto
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.access import Agent
from evalkit.ingest.encode import MalformedProtobuf
from evalkit.ingest.pipeline import Exhausted, Forbidden, Ingest, Outcome, Refused, Unauthenticated, Unavailable

log = logging.getLogger("evalkit.ingest.otlp_grpc")


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


def _export_handler(ingest: Ingest, ingest_call: Callable[[bytes, Agent], Awaitable[Outcome]],
                    respond: Callable[[Outcome], Message]) -> grpc.RpcMethodHandler:
    # The request stays bytes here: decoding happens on the decode threads or workers, not on the
    # event loop, and only once the key is known and the memory limit admits the request.
    async def export(body: bytes, context: grpc.aio.ServicerContext) -> Message:
        try:
            agent = await ingest.authenticate(_authorization(context))
            with ingest.admit(len(body)):
                outcome = await ingest_call(body, agent)
        except Unauthenticated as exc:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(exc))
        except Forbidden as exc:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(exc))
        except (MalformedProtobuf, Refused) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except Unavailable as exc:
            await _refuse_retryable(context, exc)
        except Exception:  # a fault of evalkit's, not the request's: retryable, and logged
            log.exception("OTLP/gRPC export failed")
            await _refuse_retryable(context, Unavailable(
                "evalkit could not process this export because of an internal error (logged by the server); "
                "nothing was kept, retry later", 5))
        return respond(outcome)

    return grpc.unary_unary_rpc_method_handler(
        export, request_deserializer=None, response_serializer=lambda message: message.SerializeToString())


def not_kept(signal: str) -> str:
    """What an exporter of a signal evalkit does not keep is told (both transports)."""
    how = " (OTEL_METRICS_EXPORTER=none)" if signal == "metrics" else ""
    return (f"evalkit keeps traces and logs, not {signal}; stop exporting {signal} to it{how} or send them "
            "to another backend")


def _not_kept_handler(signal: str) -> grpc.RpcMethodHandler:
    async def export(_body: bytes, context: grpc.aio.ServicerContext) -> Message:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, not_kept(signal))
        raise AssertionError("abort raises")

    return grpc.unary_unary_rpc_method_handler(export, request_deserializer=None, response_serializer=None)


def trace_response(outcome: Outcome) -> Message:
    response = trace_service_pb2.ExportTraceServiceResponse()
    if outcome.rejected:
        response.partial_success.rejected_spans = outcome.rejected
        response.partial_success.error_message = outcome.message
    return response


def logs_response(outcome: Outcome) -> Message:
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
    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler("opentelemetry.proto.collector.trace.v1.TraceService",
                                             {"Export": _export_handler(ingest, ingest.traces, trace_response)}),
        grpc.method_handlers_generic_handler("opentelemetry.proto.collector.logs.v1.LogsService",
                                             {"Export": _export_handler(ingest, ingest.logs_export, logs_response)}),
        # Answered UNIMPLEMENTED as by a Collector without their pipeline, but saying why.
        grpc.method_handlers_generic_handler("opentelemetry.proto.collector.metrics.v1.MetricsService",
                                             {"Export": _not_kept_handler("metrics")}),
        grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
            {"Export": _not_kept_handler("profiles")}),
    ))
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen for OTLP/gRPC on {host}:{port}; is the port taken? pass --grpc-port")
    await server.start()
    return server, bound
