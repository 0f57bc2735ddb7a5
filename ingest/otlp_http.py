"""OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs`, protobuf or JSON, gzip or not.

Answers follow the OTLP/HTTP specification: 200 with partial success, 400 for a
malformed body or one the store refuses for what it is (never retried), 401 for a
missing or bad key (checked before the body is read), 403 for an archived agent's
key, 413 past the size limit, 415 for another content type or encoding, 429/503
with Retry-After when the client should retry (the memory limit, a full queue, the
store unavailable). Error bodies are `google.rpc.Status` in the request's encoding.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.compression_utils import HAS_ZSTD
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.web_protocol import RequestPayloadError
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2

from evalkit.access import Agent
from evalkit.ingest.decode import Rejections
from evalkit.ingest.encode import MalformedProtobuf
from evalkit.ingest.otlp_grpc import logs_response, not_kept, trace_response
from evalkit.ingest.otlp_json import MalformedRequest, parse_json
from evalkit.ingest.pipeline import (
    Exhausted,
    Forbidden,
    Ingest,
    Outcome,
    Refused,
    Unauthenticated,
    Unavailable,
)

log = logging.getLogger("evalkit.ingest.otlp_http")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# aiohttp decompresses these itself; zstd needs the zstd module (backports.zstd before Python 3.14).
_ENCODINGS = frozenset({"identity", "gzip", "deflate"} | ({"zstd"} if HAS_ZSTD else set()))
# What aiohttp raises for a body that does not decompress.
_BAD_BODY = (ContentEncodingError, RequestPayloadError, ValueError, OSError, EOFError, zlib.error)


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


Handler = Callable[[bytes, Agent, Rejections | None], Awaitable[Outcome]]


def _endpoint(ingest: Ingest, kind: str, handle: Handler,
              respond: Callable[[Outcome], Message]) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def endpoint(request: web.Request) -> web.Response:
        media = request.content_type
        reply_as = JSON if media == JSON else PROTOBUF
        if media not in (PROTOBUF, JSON):
            return _error(415, code_pb2.INVALID_ARGUMENT,
                          f"content type {media!r} is not OTLP; send {PROTOBUF} or {JSON}", PROTOBUF)
        # An empty header is no encoding, as the Collector's receiver reads it.
        encoding = request.headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding not in _ENCODINGS:
            return _error(415, code_pb2.INVALID_ARGUMENT,
                          f"Content-Encoding {encoding!r} is not supported; send one of "
                          f"{', '.join(sorted(_ENCODINGS))} (OTEL_EXPORTER_OTLP_COMPRESSION=gzip)", reply_as)
        try:
            # The key first: nothing of the body is read for a request that may not write.
            agent = await ingest.authenticate(request.headers.get("Authorization"))
            with ingest.admit(request.content_length or 0) as reservation:
                try:
                    body = await request.read()
                except web.HTTPRequestEntityTooLarge:
                    return _error(413, code_pb2.INVALID_ARGUMENT,
                                  f"request is over the limit of {request.app['max_request_bytes']} bytes; "
                                  "export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", reply_as)
                except _BAD_BODY as exc:
                    return _error(400, code_pb2.INVALID_ARGUMENT,
                                  f"the body could not be read as {encoding} ({exc}); send it compressed as "
                                  "its Content-Encoding says, or uncompressed without one", reply_as)
                reservation.resize(len(body))
                before = None
                if media == JSON:
                    body, before = await ingest.pool.run(parse_json, body, kind)
                outcome = await handle(body, agent, before)
        except (MalformedProtobuf, MalformedRequest) as exc:
            return _error(400, code_pb2.INVALID_ARGUMENT, f"malformed OTLP request: {exc}", reply_as)
        except Unauthenticated as exc:
            return _error(401, code_pb2.UNAUTHENTICATED, str(exc), reply_as)
        except Forbidden as exc:
            return _error(403, code_pb2.PERMISSION_DENIED, str(exc), reply_as)
        except Refused as exc:
            return _error(400, code_pb2.INVALID_ARGUMENT, str(exc), reply_as)
        except Unavailable as exc:
            status = 429 if isinstance(exc, Exhausted) else 503
            code = code_pb2.RESOURCE_EXHAUSTED if isinstance(exc, Exhausted) else code_pb2.UNAVAILABLE
            return _error(status, code, str(exc), reply_as, {"Retry-After": str(exc.retry_after)})
        return _reply(respond(outcome), reply_as)

    return endpoint


# Signals OTLP defines and evalkit does not keep: answered 404 (as a Collector without their
# pipeline answers), not retried by exporters.
_NOT_KEPT = {"/v1/metrics": "metrics", "/v1development/profiles": "profiles"}


def _not_served(request: web.Request) -> str:
    path = request.path
    signal = _NOT_KEPT.get(path.rstrip("/"))
    if signal:
        return not_kept(signal)
    if path.rstrip("/") in ("/v1/traces", "/v1/logs"):
        if request.method != "POST":
            return f"{request.method} is not an OTLP export; POST the export request to {path.rstrip('/')}"
        return f"no OTLP endpoint at {path[:200]}; POST traces to /v1/traces and logs to /v1/logs"
    return (f"no OTLP endpoint at {path[:200]}; POST traces to /v1/traces and logs to /v1/logs (give exporters "
            "OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:4318 without a path: they add it)")


def otlp_http_app(ingest: Ingest, max_request_bytes: int) -> web.Application:
    async def too_large(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                        ) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text=json.dumps({"message": "request too large"}),
                                content_type=JSON)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
            # A Status body like every other OTLP error, saying where exports go.
            return _error(exc.status, code_pb2.UNIMPLEMENTED if exc.status == 404 else code_pb2.INVALID_ARGUMENT,
                          _not_served(request), JSON if request.content_type == JSON else PROTOBUF,
                          {"Allow": "POST"} if exc.status == 405 else None)
        except web.HTTPException:
            raise
        except Exception:  # a fault of evalkit's, not of the request: never a 500, say what to do
            log.exception("OTLP/HTTP request to %s failed", request.path)
            return _error(503, code_pb2.UNAVAILABLE,
                          "evalkit could not process this export because of an internal error (logged by the "
                          "server); nothing was kept, retry later", PROTOBUF, {"Retry-After": "5"})

    app = web.Application(client_max_size=max_request_bytes, middlewares=[web.middleware(too_large)])
    app["max_request_bytes"] = max_request_bytes
    app.router.add_post("/v1/traces", _endpoint(ingest, "traces", ingest.traces, trace_response))
    app.router.add_post("/v1/logs", _endpoint(ingest, "logs", ingest.logs_export, logs_response))
    return app
