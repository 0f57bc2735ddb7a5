"""OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs`, protobuf or JSON, gzip or not.

Answers follow the OTLP/HTTP specification: 200 with partial success, 400 for a
malformed body (never retried), 401 for a missing or bad key, 413 past the size
limit, 415 for another content type, 429/503 with Retry-After when the client
should retry. Error bodies are `google.rpc.Status` in the request's encoding.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.ingest.encode import MalformedProtobuf
from evalkit.ingest.otlp_grpc import logs_response, trace_response
from evalkit.ingest.otlp_json import MalformedRequest, parse_json
from evalkit.ingest.pipeline import Exhausted, Ingest, Outcome, Unauthenticated, Unavailable

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def _reply(message: Message, content_type: str, status: int = 200,
           headers: dict[str, str] | None = None) -> web.Response:
    if content_type == JSON:
        body = json_format.MessageToJson(message, indent=None).encode()
    else:
        body = message.SerializeToString()
    return web.Response(body=body, status=status, content_type=content_type, headers=headers)


def _error(status: int, code: int, message: str, content_type: str,
           headers: dict[str, str] | None = None) -> web.Response:
    return _reply(status_pb2.Status(code=code, message=message), content_type, status, headers)


Handler = Callable[[bytes, str | None], Awaitable[Outcome]]


def _endpoint(new_request: Callable[[], Message], handle: Handler,
              respond: Callable[[Outcome], Message]) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def endpoint(request: web.Request) -> web.Response:
        media = request.content_type
        reply_as = JSON if media == JSON else PROTOBUF
        if media not in (PROTOBUF, JSON):
            return _error(415, code_pb2.INVALID_ARGUMENT,
                          f"content type {media!r} is not OTLP; send {PROTOBUF} or {JSON}", PROTOBUF)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _error(413, code_pb2.INVALID_ARGUMENT,
                          f"request is over the limit of {request.app['max_request_bytes']} bytes; "
                          "export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", reply_as)
        if media == JSON:
            try:
                body = parse_json(body, new_request()).SerializeToString()
            except MalformedRequest as exc:
                return _error(400, code_pb2.INVALID_ARGUMENT, f"malformed OTLP request: {exc}", reply_as)
        try:
            outcome = await handle(body, request.headers.get("Authorization"))
        except MalformedProtobuf as exc:
            return _error(400, code_pb2.INVALID_ARGUMENT, f"malformed OTLP request: {exc}", reply_as)
        except Unauthenticated as exc:
            return _error(401, code_pb2.UNAUTHENTICATED, str(exc), reply_as)
        except Unavailable as exc:
            status = 429 if isinstance(exc, Exhausted) else 503
            code = code_pb2.RESOURCE_EXHAUSTED if isinstance(exc, Exhausted) else code_pb2.UNAVAILABLE
            return _error(status, code, str(exc), reply_as, {"Retry-After": str(exc.retry_after)})
        return _reply(respond(outcome), reply_as)

    return endpoint


def otlp_http_app(ingest: Ingest, max_request_bytes: int) -> web.Application:
    async def too_large(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                        ) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text=json.dumps({"message": "request too large"}),
                                content_type=JSON)

    app = web.Application(client_max_size=max_request_bytes, middlewares=[web.middleware(too_large)])
    app["max_request_bytes"] = max_request_bytes
    app.router.add_post("/v1/traces", _endpoint(trace_service_pb2.ExportTraceServiceRequest,
                                                ingest.traces, trace_response))
    app.router.add_post("/v1/logs", _endpoint(logs_service_pb2.ExportLogsServiceRequest,
                                              ingest.logs_export, logs_response))
    return app
