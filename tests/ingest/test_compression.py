"""OTLP/HTTP bodies compressed as an OpenTelemetry Collector's exporter sends them (`compression: zlib`,
`snappy`, `x-snappy-framed`, `lz4`) and as `br`, made by the codecs' own compressors and read by a running
service; a body that decompresses past the request size limit is refused, whatever its encoding."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli
import cramjam
import lz4.frame
import pytest
from google.rpc import status_pb2

from tests.conftest import Running, own_workspaces, serve
from tests.ingest.test_otlp import count_spans, make_request_bytes, make_spans, post

# One service for the module's tests that make nothing but agents of their own (`own_workspaces`): a service per
# test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def running(module_running: Running) -> Running:
    return own_workspaces(module_running)

# Encoding, and how a sender compresses for it (the Collector's "snappy" is the block format; it reads a
# framed body under that name too, telling the two apart by the framing format's stream identifier).
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "zlib": zlib.compress,
    "snappy": lambda data: bytes(cramjam.snappy.compress_raw(data)),
    "snappy (framed)": lambda data: bytes(cramjam.snappy.compress(data)),
    "x-snappy-framed": lambda data: bytes(cramjam.snappy.compress(data)),
    "lz4": lz4.frame.compress,
    "br": brotli.compress,
}


def _header(name: str) -> str:
    return name.split(" ")[0]


@pytest.mark.parametrize("encoding", list(COMPRESSORS))
async def test_the_collectors_encodings_are_read(running: Running, encoding: str) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    body = COMPRESSORS[encoding](make_request_bytes(make_spans(3, session_id=f"s-{_header(encoding)}")))
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key, _header(encoding).upper())
    assert status == 200, reply
    assert count_spans(running, agent_id) == 3


async def test_a_body_that_decompresses_past_the_limit_is_refused(tmp_path: Path) -> None:
    limit = 200_000
    async with serve(tmp_path, max_request_bytes=limit) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        # A real export, 10 times the limit once decompressed, under it compressed (snappy's blocks compress
        # at most ~21 times; the others far more).
        export = make_request_bytes(make_spans(2, **{"input.value": "x" * (10 * limit)}))
        for encoding, compress in COMPRESSORS.items():
            body = compress(export)
            assert len(body) < limit, encoding
            status, reply, headers = await asyncio.to_thread(
                post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key, _header(encoding))
            assert status == 413, (encoding, reply)
            message = status_pb2.Status.FromString(reply).message
            assert message == (f"request is over the limit of {limit} bytes once decompressed "
                               "(EVALKIT_MAX_REQUEST_BYTES); export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)")
            assert "Retry-After" not in headers
        # Nothing was kept, and nothing is still held against the memory limit.
        assert count_spans(running, agent_id) == 0
        assert running.service.ingest.memory.in_flight_bytes == 0
        # A snappy block says its length first: one claiming more than the limit is refused before decoding.
        claims_a_lot = bytes([0x80, 0x80, 0x80, 0x40]) + b"\x00" * 8
        status, reply, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", claims_a_lot, "application/x-protobuf", key, "snappy")
        assert status == 413, reply


@pytest.mark.parametrize("encoding", ["zlib", "snappy", "x-snappy-framed", "lz4"])
async def test_a_body_that_does_not_decompress_is_400(running: Running, encoding: str) -> None:
    _, key = await asyncio.to_thread(running.new_agent)
    good = COMPRESSORS[encoding](make_request_bytes(make_spans(2)))
    for body in (b"this is not compressed at all", good[: len(good) // 2]):
        status, reply, headers = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key, encoding)
        assert status == 400, (body, reply)
        message = status_pb2.Status.FromString(reply).message
        assert message.startswith(f"the body could not be read as {encoding} ("), message
        assert "Retry-After" not in headers


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
async def test_a_body_aiohttp_cannot_decompress_is_a_400_in_one_line(running: Running, encoding: str) -> None:
    """The encodings aiohttp itself decompresses: its error is said by its message, not by its print
    ("400, message:\n  Can not decode content-encoding: gzip")."""
    _, key = await asyncio.to_thread(running.new_agent)
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", b"this is not compressed at all", "application/x-protobuf", key,
        encoding)
    message = status_pb2.Status.FromString(reply).message
    assert status == 400 and message.startswith(f"the body could not be read as {encoding} ("), message
    assert "\n" not in message and "message:" not in message, message
