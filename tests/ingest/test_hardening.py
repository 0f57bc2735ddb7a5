"""Hostile and odd input at the OTLP receivers of a running service: the key is checked before
the body is read, a memory limit bounds what is in flight, deep nesting and far-future times
are handled span by span, evalkit's own framing fields cannot be forged, archived agents stop
ingesting, and the data directory is private. No input gets a 500."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from evalkit.trajectory.read import read_trace_spans
from tests.conftest import Running, own_workspaces, serve
from tests.ingest.test_otlp import count_spans, make_request_bytes, make_spans, post, post_get

# One service for the module's tests that make nothing but agents of their own (`own_workspaces`): a service per
# test was ~1 s of each. A test that needs other settings, or the whole service's figures, starts its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def running(module_running: Running) -> Running:
    return own_workspaces(module_running)

TRACE = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def deep_kvlist(levels: int) -> bytes:
    """An AnyValue's bytes: kvlists nested `levels` deep around a string (built as bytes: the
    protobuf runtime itself refuses to build messages this deep)."""
    value = _field(1, b"the bottom")
    for level in range(levels):
        key_value = _field(1, f"k{level}".encode()) + _field(2, value)
        value = _field(6, _field(1, key_value))  # AnyValue.kvlist_value = KeyValueList{values=[kv]}
    return value


def span_bytes(name: str, span_id: bytes, attributes: bytes = b"", start: int = 1_700_000_000 * 10**9,
               end: int | None = None) -> bytes:
    end = start + 1000 if end is None else end
    return (_field(1, TRACE) + _field(2, span_id) + _field(5, name.encode())
            + b"\x39" + start.to_bytes(8, "little") + b"\x41" + end.to_bytes(8, "little") + attributes)


def request_bytes(*spans: bytes) -> bytes:
    scope = b"".join(_field(2, span) for span in spans)
    return _field(1, _field(2, scope))


def session_attribute(session: str) -> bytes:
    return _field(9, _field(1, b"session.id") + _field(2, _field(1, session.encode())))


async def _accepted(running: Running, key: str, body: bytes) -> Any:
    """POST a protobuf export over OTLP/HTTP, which must answer 200; its partial success."""
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key)
    assert status == 200, reply
    return trace_service_pb2.ExportTraceServiceResponse.FromString(reply).partial_success


async def test_nesting_past_the_protobuf_limit_keeps_every_span(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    deep = _field(9, _field(1, b"deep") + _field(2, deep_kvlist(60)))
    body = request_bytes(span_bytes("shallow", b"\x01" * 8, session_attribute("s-deep")),
                         span_bytes("deep", b"\x02" * 8, session_attribute("s-deep") + deep))
    with pytest.raises(Exception, match="MaxDepth"):
        trace_service_pb2.ExportTraceServiceRequest.FromString(body)  # why this needed care
    assert (await _accepted(running, key, body)).rejected_spans == 0
    assert count_spans(running, agent_id) == 2
    stored = running.store.query("SELECT length(attributes['deep']) + length(payloads['deep']) FROM spans FINAL "
                                 "WHERE agent_id = {a:String} AND name = 'deep'", {"a": agent_id})
    assert stored[0][0] > 60 * 4


async def test_a_bad_span_beside_a_deep_one_is_rejected_alone(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    deep = _field(9, _field(1, b"deep") + _field(2, deep_kvlist(60)))
    body = request_bytes(span_bytes("deep", b"\x02" * 8, deep),
                         span_bytes("bad utf-8 key", b"\x03" * 8, _field(9, _field(1, b"\xff\xfe"))),
                         span_bytes("short id", b"\x04" * 4))
    partial = await _accepted(running, key, body)
    assert partial.rejected_spans == 2
    assert "not a valid OTLP span" in partial.error_message and "span_id must be 8 bytes" in partial.error_message
    assert count_spans(running, agent_id) == 1


def json_span(name: str, span_id: str, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"traceId": TRACE.hex(), "spanId": span_id, "name": name, "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000000000001000", "attributes": attributes}


def deep_json_value(levels: int) -> str:
    """JSON text of a value nested `levels` deep (written out: json.dumps would recurse too)."""
    head = "".join(f'{{"kvlistValue": {{"values": [{{"key": "k{level}", "value": ' for level in range(levels))
    return head + '{"stringValue": "the bottom"}' + "}]}}" * levels


async def test_deep_otlp_json_rejects_only_the_span_it_cannot_read(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": [
        json_span("good", "0102030405060708", [{"key": "session.id", "value": {"stringValue": "s"}}]),
        json_span("too deep", "0102030405060709", [{"key": "deep", "value": "DEEP"}]),
        json_span("wrong type", "010203040506070a", [{"key": "x", "value": {"intValue": "not a number"}}]),
    ]}]}]}
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", json.dumps(document).replace('"DEEP"', deep_json_value(100)).encode(),
        "application/json", key)
    assert status == 200, reply
    answer = json.loads(reply)
    assert answer["partialSuccess"]["rejectedSpans"] == "2"
    assert "nested too deep" in answer["partialSuccess"]["errorMessage"]
    assert count_spans(running, agent_id) == 1
    # Deeper than any JSON parser reads: the whole body is malformed, a 400, not a 500.
    nested = b'{"resourceSpans": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", nested, "application/json", key)
    assert status == 400, reply


async def test_bad_gzip_is_400_and_zstd_is_read(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    url = f"{running.otlp_http}/v1/traces"
    body = make_request_bytes(make_spans(2, session_id="s-zstd"))
    status, reply, headers = await asyncio.to_thread(post, url, b"this is not gzip", "application/x-protobuf",
                                                     key, "gzip")
    assert status == 400, reply
    assert "Retry-After" not in headers
    truncated = gzip.compress(body)[:len(body) // 3]
    status, _, _ = await asyncio.to_thread(post, url, truncated, "application/x-protobuf", key, "gzip")
    assert status == 400
    from backports import zstd

    status, reply, _ = await asyncio.to_thread(post, url, zstd.compress(body), "application/x-protobuf", key, "zstd")
    assert status == 200, reply
    assert count_spans(running, agent_id) == 2
    status, reply, _ = await asyncio.to_thread(post, url, body, "application/x-protobuf", key, "br-unknown")
    assert status == 415
    assert b"Content-Encoding" in reply


async def test_times_past_2_63_are_rejected_spans(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    body = request_bytes(span_bytes("fine", b"\x01" * 8),
                         span_bytes("far future", b"\x02" * 8, start=2**63 + 5, end=2**63 + 10),
                         span_bytes("ends past 2^63", b"\x03" * 8, end=2**64 - 1))
    partial = await _accepted(running, key, body)
    assert partial.rejected_spans == 2
    assert "below 2^63" in partial.error_message
    stored = running.store.query("SELECT name, toYear(start_time) FROM spans WHERE agent_id = {a:String}",
                                 {"a": agent_id})
    assert stored == [("fine", 2023)]


async def test_forged_framing_fields_are_stripped(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    victim, _ = await asyncio.to_thread(running.new_agent, "victim", "other")
    body = request_bytes(span_bytes("forged", b"\x05" * 8, session_attribute("s-forged")))
    forged = body + _field(1001, victim.encode()) + _varint(1002 << 3) + _varint(1) + _field(1003, b"x")
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", forged, "application/x-protobuf", key)
    assert status == 200, reply
    rows = running.store.query("SELECT agent_id, toYear(received_at), session_id FROM spans WHERE name = 'forged'")
    assert len(rows) == 1
    assert rows[0][0] == agent_id and rows[0][1] >= 2025 and rows[0][2] == "s-forged"
    assert count_spans(running, victim) == 0


def raw_request(port: int, path: str, headers: dict[str, str], first_bytes: bytes) -> socket.socket:
    """An HTTP request whose body is still on its way: only `first_bytes` of it are sent."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    connection.sendall(head.encode() + b"\r\n" + first_bytes)
    return connection


def read_status(connection: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]), data


async def test_the_key_is_checked_before_the_body_is_read(running: Running) -> None:
    port = running.service.otlp_http_port
    # 60 MB announced, one kilobyte sent: the answer can only come before the body is read.
    for authorization in ({}, {"Authorization": "Bearer ek_not_a_key"}):
        connection = await asyncio.to_thread(raw_request, port, "/v1/traces", {
            "Content-Type": "application/json", "Content-Length": str(60_000_000), **authorization}, b"{" * 1024)
        try:
            status, answer = await asyncio.to_thread(read_status, connection)
        finally:
            connection.close()
        assert status == 401, answer


async def test_health_answers_while_a_large_body_is_in_flight(running: Running) -> None:
    _, key = await asyncio.to_thread(running.new_agent)
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [
        json_span(f"span {i}", f"{i + 1:016x}", [{"key": "input.value", "value": {"stringValue": "x" * 2000}}])
        for i in range(3000)]}]}]}
    body = json.dumps(document).encode()
    half = len(body) // 2
    connection = await asyncio.to_thread(raw_request, running.service.otlp_http_port, "/v1/traces", {
        "Content-Type": "application/json", "Content-Length": str(len(body)), "Authorization": f"Bearer {key}"},
        body[:half])
    try:
        status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
        assert status == 200 and health["status"] == "ok"
        await asyncio.to_thread(connection.sendall, body[half:])
        # While the server decodes 6 MB of JSON, other requests are answered (decoding is off the loop).
        export = asyncio.create_task(asyncio.to_thread(read_status, connection))
        status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
        assert status == 200
        status, answer = await export
        assert status == 200, answer
    finally:
        connection.close()


async def test_memory_limit_refuses_before_decoding_and_is_on_metrics(tmp_path: Path) -> None:
    async with serve(tmp_path, memory_limit_bytes=50_000) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        body = make_request_bytes(make_spans(3, session_id="s-mem"))
        # One request alone is admitted, whatever its size: here one that holds 60 kB while it arrives.
        held = await asyncio.to_thread(raw_request, running.service.otlp_http_port, "/v1/traces", {
            "Content-Type": "application/x-protobuf", "Content-Length": "60000", "Authorization": f"Bearer {key}"},
            b"\x00" * 100)
        try:
            for _ in range(100):  # wait until the server has read its headers (no time asserted)
                text = await asyncio.to_thread(metrics_text, running)
                if "evalkit_ingest_memory_bytes 60000.0" in text:
                    break
                await asyncio.sleep(0.05)
            assert "evalkit_ingest_memory_bytes 60000.0" in text
            assert "evalkit_ingest_memory_limit_bytes 50000.0" in text
            status, reply, headers = await asyncio.to_thread(
                post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key)
            assert status == 429, reply
            assert headers["Retry-After"] == "2"
            assert b"memory limit" in reply
            async with grpc.aio.insecure_channel(running.grpc_target) as channel:
                stub = trace_service_pb2_grpc.TraceServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as failure:
                    await stub.Export(trace_service_pb2.ExportTraceServiceRequest.FromString(body),
                                      metadata=(("authorization", f"Bearer {key}"),))
            assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert 'evalkit_ingest_refused_requests_total{reason="memory"} 2.0' in await asyncio.to_thread(
                metrics_text, running)
        finally:
            held.close()
        for _ in range(100):
            if "evalkit_ingest_memory_bytes 0.0" in await asyncio.to_thread(metrics_text, running):
                break
            await asyncio.sleep(0.05)
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key)
        assert status == 200
        assert count_spans(running, agent_id) == 3


def metrics_text(running: Running) -> str:
    import urllib.request

    with urllib.request.urlopen(f"{running.api}/metrics", timeout=10) as response:
        return str(response.read().decode())


async def grpc_refusal(running: Running, body: bytes, key: str) -> tuple[grpc.StatusCode, str]:
    """The status and message of an export the gRPC receiver must refuse."""
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Export(trace_service_pb2.ExportTraceServiceRequest.FromString(body),
                              metadata=(("authorization", f"Bearer {key}"),))
    return failure.value.code(), failure.value.details() or ""


async def test_an_archived_agents_key_stops_ingesting(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent, "retired", "acme")
    body = make_request_bytes(make_spans(2))
    status, _, _ = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf",
                                           key)
    assert status == 200
    status, _ = await asyncio.to_thread(running.call, "PATCH", f"/api/agents/{agent_id}", {"archived": True})
    assert status == 200
    status, reply, _ = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", body,
                                               "application/x-protobuf", key)
    assert status == 403
    assert f"agent {agent_id} is archived" in reply.decode(errors="replace")
    code, details = await grpc_refusal(running, body, key)
    assert code == grpc.StatusCode.PERMISSION_DENIED and "archived" in details
    assert count_spans(running, agent_id) == 2


async def test_a_read_only_key_is_refused_at_ingest_naming_its_scope(running: Running) -> None:
    agent_id, _ = await asyncio.to_thread(running.new_agent, "reader", "acme")
    status, made = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent_id}/keys", {"scopes": ["read"]})
    assert status == 201, made
    key = made["key"]
    body = make_request_bytes(make_spans(2))
    status, reply, _ = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf",
                                               key)
    assert status == 403
    text = reply.decode(errors="replace")
    assert "not ingest" in text and f"evalkit agents keys create {agent_id}" in text
    code, details = await grpc_refusal(running, body, key)
    assert code == grpc.StatusCode.PERMISSION_DENIED and "not ingest" in details
    assert count_spans(running, agent_id) == 0


async def test_the_data_directory_is_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "left-by-an-older-version.txt").write_text("secret prompt")
    os.chmod(data / "left-by-an-older-version.txt", 0o644)
    async with serve(data) as running:
        await asyncio.to_thread(running.new_agent)
        assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
        readable = [str(p) for p in data.rglob("*") if os.stat(p).st_mode & 0o077]
        assert readable == []


async def test_fsync_setting_is_applied_to_the_tables_acknowledged_exports_write(tmp_path: Path) -> None:
    async with serve(tmp_path, fsync=True) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        status, _, _ = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces",
                                               make_request_bytes(make_spans(2)), "application/x-protobuf", key)
        assert status == 200
        for table in ("spans", "logs", "session_traces"):
            create = running.store.query("SELECT create_table_query FROM system.tables WHERE database = "
                                         "{d:String} AND name = {t:String}", {"d": running.store.database, "t": table})
            assert "fsync_after_insert = 1" in create[0][0], table
            assert "fsync_part_directory = 1" in create[0][0], table
        assert count_spans(running, agent_id) == 2


async def test_deep_attribute_reads_back(running: Running) -> None:
    """The deep value is kept exactly: the reader decodes what protobuf's own limit allows."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    deep = _field(9, _field(1, b"deep") + _field(2, deep_kvlist(40)))
    body = request_bytes(span_bytes("deep", b"\x02" * 8, deep))
    status, _, _ = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf",
                                           key)
    assert status == 200
    spans = await asyncio.to_thread(read_trace_spans, running.store, agent_id, [TRACE.hex()])
    assert len(spans) == 1
    value = spans[0].attributes["deep"]
    for level in reversed(range(40)):
        value = value[f"k{level}"]
    assert value == "the bottom"


ODD_JSON = [
    b'{"resourceSpans": "x"}', b'{"resourceSpans": [1]}', b'{"resourceSpans": [{"scopeSpans": 5}]}',
    b'{"resourceSpans": [{"scopeSpans": [7]}]}', b'{"resourceSpans": [{"scopeSpans": [{"spans": [1, "a", null]}]}]}',
    b'{"resourceSpans": [{"resource": 3, "scopeSpans": []}]}',
    b'{"resourceSpans": [{"scopeSpans": [{"scope": "x", "spans": []}]}]}',
    b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5, "attributes": "x"}]}]}]}',
    b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "1e400", "kind": "WRONG"}]}]}]}',
    b'{"resource_spans": [{"scope_spans": [{"spans": [{"name": "snake", "links": [{"traceId": "zz"}]}]}]}]}',
    b'{"resourceSpans": [], "extra": {"deep": [[[[]]]]}}', b"null", b'"text"', b"\xff\xfe", b"",
]


async def test_odd_otlp_json_is_never_a_500(running: Running) -> None:
    _, key = await asyncio.to_thread(running.new_agent)
    for body in ODD_JSON:
        for path in ("/v1/traces", "/v1/logs"):
            status, reply, _ = await asyncio.to_thread(
                post, f"{running.otlp_http}{path}", body, "application/json", key)
            assert status in (200, 400), (body, path, status, reply)
            json.loads(reply)  # the answer is JSON (a google.rpc.Status or an export response)


async def test_odd_protobuf_is_never_a_500(running: Running) -> None:
    import random

    _, key = await asyncio.to_thread(running.new_agent)
    rng = random.Random(11)
    good = make_request_bytes(make_spans(3))
    bodies = [rng.randbytes(rng.randint(0, 300)) for _ in range(20)]
    bodies += [bytes(b ^ 0xFF if rng.random() < 0.02 else b for b in good) for _ in range(20)]
    bodies += [good[:cut] for cut in range(0, len(good), max(1, len(good) // 15))]
    for body in bodies:
        for path in ("/v1/traces", "/v1/logs"):
            status, reply, _ = await asyncio.to_thread(
                post, f"{running.otlp_http}{path}", body, "application/x-protobuf", key)
            assert status in (200, 400), (path, status, reply, body)


async def test_a_string_not_utf8_rejects_its_span_not_the_batch(running: Running) -> None:
    # A Collector forwards strings unchecked: one bad span used to cost its whole batch a 400.
    agent_id, key = await asyncio.to_thread(running.new_agent)
    body = request_bytes(span_bytes("good", b"\x01" * 8, session_attribute("s-utf8")),
                         span_bytes("bad value", b"\x02" * 8,
                                    _field(9, _field(1, b"k") + _field(2, _field(1, b"caf\xc3")))))
    partial = await _accepted(running, key, body)
    assert partial.rejected_spans == 1
    assert "span 'bad value'" in partial.error_message and "UTF-8" in partial.error_message
    assert count_spans(running, agent_id) == 1
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString)
        response = await export(body, metadata=(("authorization", f"Bearer {key}"),))
    assert response.partial_success.rejected_spans == 1
    # Outside the spans (here the scope's name) it concerns every span: the request is malformed.
    scope = _field(1, _field(1, b"sc\xffope"))
    bad_scope = _field(1, _field(2, scope + _field(2, span_bytes("in a bad scope", b"\x03" * 8))))
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", bad_scope, "application/x-protobuf", key)
    assert status == 400, reply
    assert count_spans(running, agent_id) == 1


async def test_a_log_record_not_utf8_is_rejected_alone(running: Running) -> None:
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

    agent_id, key = await asyncio.to_thread(running.new_agent)
    record = b"\x09" + (1_700_000_000 * 10**9).to_bytes(8, "little")  # time_unix_nano
    good = record + _field(5, _field(1, b"the prompt"))  # body: AnyValue.string_value
    bad = record + _field(5, _field(1, b"caf\xc3"))
    scope = _field(1, _field(1, b"genai")) + _field(2, good) + _field(2, bad)
    body = _field(1, _field(2, scope))
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/logs", body, "application/x-protobuf", key)
    assert status == 200, reply
    partial = logs_service_pb2.ExportLogsServiceResponse.FromString(reply).partial_success
    assert partial.rejected_log_records == 1 and "UTF-8" in partial.error_message
    stored = running.store.query("SELECT body FROM logs FINAL WHERE agent_id = {a:String}", {"a": agent_id})
    assert len(stored) == 1 and "the prompt" in stored[0][0]


async def _json_partial(running: Running, key: str, spans: list[Any]) -> dict[str, Any]:
    """POST these spans as OTLP/JSON, which must answer 200; its partialSuccess."""
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", json.dumps(document).encode(), "application/json", key)
    assert status == 200, reply
    return json.loads(reply)["partialSuccess"]  # type: ignore[no-any-return]


async def test_otlp_json_rejections_are_one_count_and_one_list_of_reasons(running: Running) -> None:
    """Rejections found reading the JSON and by the span checks were told as two pieces ("1 rejected: …; 1
    rejected: …"); an all-zero trace id was "must be 16 bytes and not all zero (got 16 bytes)"."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    spans = ["not a span", {**json_span("zero trace", "0102030405060709", []), "traceId": "0" * 32},
             {**json_span("zero span", "0000000000000000", [])}, json_span("kept", "0102030405060708", [])]
    partial = await _json_partial(running, key, spans)
    assert partial["rejectedSpans"] == "3"
    assert partial["errorMessage"] == (
        "3 rejected: span: must be a JSON object; "
        "span 'zero trace': trace_id must be 16 bytes and not all zero (got all zero); "
        "span 'zero span': span_id must be 8 bytes and not all zero (got all zero)"), partial
    assert count_spans(running, agent_id) == 1
    # Past the first five reasons, one count of the rest, whichever step rejected them.
    spans = ["not a span"] * 4 + [{**json_span(f"zero {i}", "0102030405060709", []), "traceId": "0" * 32}
                                  for i in range(3)]
    message = (await _json_partial(running, key, spans))["errorMessage"]
    assert message.startswith("7 rejected: ") and message.endswith("'zero 0': trace_id must be 16 bytes and not "
                                                                   "all zero (got all zero) (and 2 more)"), message
    assert message.count("rejected") == 1, message


async def test_otlp_json_ids_that_are_not_hex_reject_their_span(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    session = [{"key": "session.id", "value": {"stringValue": "s-hex"}}]
    spans = [json_span("root", "0102030405060708", session),
             {**json_span("bad parent", "0102030405060709", session), "parentSpanId": "not-hex!"},
             {**json_span("base64 ids", "AQIDBAUGBwg=", session), "traceId": "S/kvNXezTaajzpKdDg5HNg=="},
             {**json_span("bad link", "010203040506070a", session), "links": [{"traceId": "qq", "spanId": "ww"}]}]
    partial = await _json_partial(running, key, spans)
    assert partial["rejectedSpans"] == "3"
    # Each named with the field and what to send, not "must be 16 bytes (got 0 bytes)".
    assert "parentSpanId 'not-hex!' is not hex" in partial["errorMessage"]
    assert "traceId 'S/kvNXezTaajzpKdDg5HNg==' is not hex" in partial["errorMessage"]
    assert "a link's traceId 'qq' is not hex" in partial["errorMessage"]
    # The span with a bad parent id is not kept as a second root of its trace.
    assert [s.name for s in await asyncio.to_thread(read_trace_spans, running.store, agent_id, [TRACE.hex()])] \
        == ["root"]


async def test_an_empty_content_encoding_is_no_encoding(running: Running) -> None:
    import urllib.request

    agent_id, key = await asyncio.to_thread(running.new_agent)
    request = urllib.request.Request(f"{running.otlp_http}/v1/traces", method="POST",
                                     data=make_request_bytes(make_spans(2)),
                                     headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "",
                                              "Authorization": f"Bearer {key}"})
    with await asyncio.to_thread(urllib.request.urlopen, request, timeout=30) as response:
        assert response.status == 200
    assert count_spans(running, agent_id) == 2


async def test_signals_not_kept_and_wrong_paths_say_what_to_do(running: Running) -> None:
    from google.rpc import status_pb2
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc

    _, key = await asyncio.to_thread(running.new_agent)
    base = running.otlp_http
    # A Collector without a metrics pipeline answers 404 / UNIMPLEMENTED; so does evalkit, saying why.
    status, reply, headers = await asyncio.to_thread(
        post, f"{base}/v1/metrics", b"", "application/x-protobuf", key)
    assert status == 404 and headers["Content-Type"] == "application/x-protobuf"
    assert "not metrics" in status_pb2.Status.FromString(reply).message
    assert "OTEL_METRICS_EXPORTER=none" in status_pb2.Status.FromString(reply).message
    status, reply, headers = await asyncio.to_thread(post, f"{base}/v1/metrics", b"{}", "application/json", key)
    assert status == 404 and "not metrics" in json.loads(reply)["message"]
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await metrics_service_pb2_grpc.MetricsServiceStub(channel).Export(
                metrics_service_pb2.ExportMetricsServiceRequest(), metadata=(("authorization", f"Bearer {key}"),))
    assert failure.value.code() == grpc.StatusCode.UNIMPLEMENTED and "not metrics" in (failure.value.details() or "")
    # An endpoint given with its path, to which the exporter adds the path again.
    status, reply, _ = await asyncio.to_thread(
        post, f"{base}/v1/traces/v1/traces", b"", "application/x-protobuf", key)
    assert status == 404
    assert "without a path" in status_pb2.Status.FromString(reply).message
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as refused:
        await asyncio.to_thread(urllib.request.urlopen, f"{base}/v1/traces", timeout=10)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "POST"
    assert "POST the export request to /v1/traces" in status_pb2.Status.FromString(refused.value.read()).message
