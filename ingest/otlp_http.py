"""OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs`, protobuf or JSON, compressed or not
(the encodings an OpenTelemetry Collector's receiver reads, and br).

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
import mmap
import zlib
from collections.abc import Awaitable, Callable

import cramjam
from aiohttp import web
from aiohttp.compression_utils import HAS_BROTLI, HAS_ZSTD
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
# aiohttp decompresses these itself, streaming, so the body's size limit holds for what they decompress to;
# zstd needs the zstd module (backports.zstd before Python 3.14), br the Brotli module (1.2 or later, which
# decompresses in bounded steps).
_AIOHTTP_ENCODINGS = frozenset({"identity", "gzip", "deflate"} | ({"zstd"} if HAS_ZSTD else set())
                               | ({"br"} if HAS_BROTLI else set()))
# The rest of what the OpenTelemetry Collector's receiver reads (confighttp): aiohttp leaves these bodies as
# they came, `decompress` reads them. "snappy" is the block format, or the framed one when the body starts
# with the framing format's stream identifier (as the Collector tells them apart); "lz4" is the LZ4 frame
# format; "zlib" is what the Collector also reads as "deflate".
_SNAPPY_FRAMED = b"\xff\x06\x00\x00sNaPpY"
_DECOMPRESS_INTO = {"zlib": cramjam.zlib.decompress_into, "lz4": cramjam.lz4.decompress_into,
                    "x-snappy-framed": cramjam.snappy.decompress_into}
_ENCODINGS = _AIOHTTP_ENCODINGS | {"snappy", *_DECOMPRESS_INTO}
# What aiohttp raises for a body that does not decompress (and `decompress`, a ValueError).
_BAD_BODY = (ContentEncodingError, RequestPayloadError, ValueError, OSError, EOFError, zlib.error)


class OverLimit(Exception):
    """A body larger once decompressed than the request size limit."""


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """`body` decompressed as `encoding` (one aiohttp does not read); OverLimit past `limit` bytes.

    The output goes into a buffer of `limit` + 1 bytes and the decoder stops when it is full, so a small
    body that decompresses to gigabytes costs no more memory than a body at the limit (the buffer is
    mapped: only the pages written take memory). A snappy block says its length first: checked before.
    """
    if not body:
        return body  # as aiohttp reads an empty compressed body: an empty request
    try:
        if encoding == "snappy" and not body.startswith(_SNAPPY_FRAMED):
            size = cramjam.snappy.decompress_raw_len(body)
            if size > limit:
                raise OverLimit(size)
            return bytes(cramjam.snappy.decompress_raw(body))
        decompress_into = _DECOMPRESS_INTO["x-snappy-framed" if encoding == "snappy" else encoding]
        with mmap.mmap(-1, limit + 1) as out:
            size = decompress_into(body, out)
            if size > limit:
                raise OverLimit(size)
            return out[:size]
    except cramjam.DecompressionError as exc:
        # The decoders' writer says this when the buffer is full before the body ends.
        if "failed to write whole buffer" in str(exc):
            raise OverLimit(limit + 1) from None
        raise ValueError(str(exc)) from None


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
                limit = request.app["max_request_bytes"]
                try:
                    body = await request.read()
                    if encoding not in _AIOHTTP_ENCODINGS:
                        body = await ingest.pool.run(decompress, body, encoding, limit)
                except (web.HTTPRequestEntityTooLarge, OverLimit):
                    decompressed = " once decompressed" if encoding != "identity" else ""
                    return _error(413, code_pb2.INVALID_ARGUMENT,
                                  f"request is over the limit of {limit} bytes{decompressed} "
                                  "(EVALKIT_MAX_REQUEST_BYTES); export smaller batches "
                                  "(OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", reply_as)
                except _BAD_BODY as exc:
                    # aiohttp raises its decoding error's print ("400, message:\n  <message>") as a payload
                    # error caused by it: the cause's message alone is said.
                    why = getattr(exc.__cause__, "message", None) or getattr(exc, "message", None) or exc
                    return _error(400, code_pb2.INVALID_ARGUMENT,
                                  f"the body could not be read as {encoding} ({why}); send it compressed as "
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
