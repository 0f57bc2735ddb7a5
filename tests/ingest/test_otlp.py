"""The OTLP receivers driven by the OpenTelemetry SDK's own exporters, unmodified, against a
running service and the real ClickHouse engine."""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.trajectory.read import read_session_spans, read_trace_logs, read_trace_spans
from tests.conftest import ADMIN_TOKEN, Running, own_workspaces, serve

DATA = Path(__file__).parent / "data"

# One service for the module's tests that make nothing but agents of their own (`own_workspaces`): a service per
# test was ~1 s of each. A test that counts what the whole service did (its metrics, its table's merges) starts its
# own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def running(module_running: Running) -> Running:
    return own_workspaces(module_running)


def make_spans(count: int = 3, session_id: str | None = "sess-1", **extra: Any) -> list[ReadableSpan]:
    """Real SDK spans: a root carrying the session id and children that do not."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "test-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests")
    root_attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", **extra}
    if session_id:
        root_attrs["session.id"] = session_id
    with tracer.start_as_current_span("invoke_agent bot", attributes=root_attrs):
        for i in range(count - 1):
            with tracer.start_as_current_span(f"chat gpt-4o #{i}", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 100 + i, "gen_ai.usage.output_tokens": 7,
                "temperature": 0.5, "stream": False, "stop": ["a", "b"],
            }):
                pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def count_spans(running: Running, agent_id: str, final: bool = True) -> int:
    rows = running.store.query(
        f"SELECT count() FROM spans {'FINAL' if final else ''} WHERE agent_id = {{a:String}}", {"a": agent_id})
    return int(rows[0][0])


async def export_grpc(running: Running, spans: list[ReadableSpan], key: str | None) -> SpanExportResult:
    headers = {"authorization": f"Bearer {key}"} if key else None
    exporter = GrpcSpanExporter(endpoint=running.grpc_target, insecure=True, headers=headers, timeout=10)
    try:
        return await asyncio.to_thread(exporter.export, spans)
    finally:
        exporter.shutdown()


async def test_grpc_exporter_spans_are_stored_with_typed_attributes(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    spans = make_spans(3)
    assert await export_grpc(running, spans, key) == SpanExportResult.SUCCESS
    stored = await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-1")
    assert len(stored) == 3
    chat = next(s for s in stored if s.name == "chat gpt-4o #1")
    assert chat.attributes["gen_ai.usage.input_tokens"] == 101
    assert chat.attributes["temperature"] == 0.5
    assert chat.attributes["stream"] is False
    assert chat.attributes["stop"] == ["a", "b"]
    assert chat.resource_attributes["service.name"] == "test-agent"
    assert chat.scope_name == "tests"
    typed = running.store.query(
        "SELECT model, input_tokens, output_tokens, is_llm_call FROM spans FINAL "
        "WHERE agent_id = {a:String} AND name = 'chat gpt-4o #1'", {"a": agent_id})
    assert typed == [("gpt-4o", 101, 7, True)]


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
async def test_http_exporter_protobuf_with_and_without_gzip(running: Running, compression: Compression) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    exporter = HttpSpanExporter(endpoint=f"{running.otlp_http}/v1/traces",
                                headers={"authorization": f"Bearer {key}"}, compression=compression)
    result = await asyncio.to_thread(exporter.export, make_spans(4, session_id="sess-http"))
    exporter.shutdown()
    assert result == SpanExportResult.SUCCESS
    assert len(await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-http")) == 4


def post(url: str, body: bytes, content_type: str, key: str | None,
         encoding: str | None = None) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", content_type)
    if encoding:
        request.add_header("Content-Encoding", encoding)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


async def test_otlp_json_with_hex_ids_and_gzip(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    body = gzip.compress((DATA / "pydantic-ai_offline_v5.otlp.json").read_bytes())
    status, reply, headers = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", body, "application/json", key, "gzip")
    assert status == 200, reply
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(reply) == {}
    spans = await asyncio.to_thread(read_trace_spans, running.store, agent_id, ["cf1a25f92713a2852b2396598bb15ad8"])
    assert {s.name for s in spans} == {"chat test", "execute_tool get_weather", "invoke_agent weather_agent"}
    assert all(len(s.span_id) == 16 for s in spans)
    tool = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool.parent_span_id == "8e91a6d7b48161f7"


def bad_and_good_request() -> trace_service_pb2.ExportTraceServiceRequest:
    def span(name: str, trace_id: bytes, span_id: bytes, start: int, end: int) -> trace_pb2.Span:
        return trace_pb2.Span(name=name, trace_id=trace_id, span_id=span_id, start_time_unix_nano=start,
                              end_time_unix_nano=end, attributes=[common_pb2.KeyValue(
                                  key="session.id", value=common_pb2.AnyValue(string_value="s-partial"))])

    good_trace = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
    spans = [
        span("good", good_trace, bytes.fromhex("b7ad6b7169203331"), 10, 20),
        span("short span id", good_trace, b"\x01\x02\x03\x04", 10, 20),
        span("zero trace id", b"\x00" * 16, bytes.fromhex("b7ad6b7169203332"), 10, 20),
        span("ends before start", good_trace, bytes.fromhex("b7ad6b7169203333"), 5_000_000_030, 20),
        # A clock read in the wrong order (< 1 µs): kept, as lasting nothing.
        span("clock slip", good_trace, bytes.fromhex("b7ad6b7169203334"), 40_000_500, 40_000_000),
    ]
    return trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[trace_pb2.ResourceSpans(scope_spans=[trace_pb2.ScopeSpans(spans=spans)])])


async def test_partial_success_over_http_keeps_the_good_span(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", bad_and_good_request().SerializeToString(),
        "application/x-protobuf", key)
    assert status == 200
    response = trace_service_pb2.ExportTraceServiceResponse.FromString(reply)
    assert response.partial_success.rejected_spans == 3
    assert "span_id must be 8 bytes" in response.partial_success.error_message
    assert "ends 5000000010 ns before it starts" in response.partial_success.error_message
    assert count_spans(running, agent_id) == 2
    rows = running.store.query("SELECT toUnixTimestamp64Nano(start_time), toUnixTimestamp64Nano(end_time) FROM spans "
                               "FINAL WHERE agent_id = {a:String} AND name = 'clock slip'", {"a": agent_id})
    assert [tuple(map(int, row)) for row in rows] == [(40_000_500, 40_000_500)]


async def test_partial_success_over_grpc(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        response = await stub.Export(bad_and_good_request(), metadata=(("authorization", f"Bearer {key}"),))
    assert response.partial_success.rejected_spans == 3
    assert count_spans(running, agent_id) == 2


@pytest.mark.parametrize(("body", "content_type", "expected"), [
    (b"\xff\xfe not protobuf", "application/x-protobuf", 400),
    (b"{not json", "application/json", 400),
    (b"[1, 2]", "application/json", 400),
    (b"resourceSpans", "text/plain", 415),
])
async def test_malformed_requests_are_not_retryable(running: Running, body: bytes, content_type: str,
                                                    expected: int) -> None:
    _, key = await asyncio.to_thread(running.new_agent)
    status, _, headers = await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", body, content_type, key)
    assert status == expected
    assert "Retry-After" not in headers


async def test_missing_unknown_and_revoked_keys_store_nothing(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    body = make_spans(2)
    assert await export_grpc(running, body, None) == SpanExportResult.FAILURE
    assert await export_grpc(running, body, "ek_not_a_key") == SpanExportResult.FAILURE
    request = bad_and_good_request().SerializeToString()
    status, _reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", request, "application/x-protobuf", None)
    assert status == 401
    status, keys = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent_id}/keys")
    assert status == 200
    key_id = keys["keys"][0]["key_id"]
    status, _ = await asyncio.to_thread(running.call, "DELETE", f"/api/agents/{agent_id}/keys/{key_id}")
    assert status == 200
    status, _, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", request, "application/x-protobuf", key)
    assert status == 401
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Export(bad_and_good_request(), metadata=(("authorization", f"Bearer {key}"),))
    assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert count_spans(running, agent_id) == 0


async def test_an_api_token_sent_as_an_ingest_key_is_named_as_such(running: Running) -> None:
    """The admin token `evalkit serve` prints is a new user's first token: sent to an OTLP port, the 401 says it
    is an API token and names the kind of key that sends spans, over HTTP and gRPC (not "unknown or revoked")."""
    request = bad_and_good_request().SerializeToString()
    status, reply, _ = await asyncio.to_thread(
        post, f"{running.otlp_http}/v1/traces", request, "application/x-protobuf", ADMIN_TOKEN)
    message = status_pb2.Status.FromString(reply).message
    assert status == 401 and "API token" in message and "evalkit agents keys create" in message, message
    assert "unknown or revoked" not in message, message
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Export(bad_and_good_request(), metadata=(("authorization", f"Bearer {ADMIN_TOKEN}"),))
    assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED and "API token" in str(failure.value.details())


async def test_a_resent_export_is_stored_once(tmp_path: Path) -> None:
    # A service of its own: the copies must still be apart when counted, and other tests' parts in the table
    # would give its background merges more to do meanwhile.
    async with serve(tmp_path) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        spans = make_spans(5, session_id="sess-twice")
        assert await export_grpc(running, spans, key) == SpanExportResult.SUCCESS
        assert await export_grpc(running, spans, key) == SpanExportResult.SUCCESS
        # Split differently the third time: the table dedups whatever the batches were.
        assert await export_grpc(running, spans[:2], key) == SpanExportResult.SUCCESS
        assert count_spans(running, agent_id) == 5
        assert len(await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-twice")) == 5
        # Each acknowledged export is staged as its own row, so the copies reach spans; they are one
        # span to every read (FINAL) and one row once merged.
        assert count_spans(running, agent_id, final=False) > 5
        await asyncio.to_thread(running.store.command, "OPTIMIZE TABLE spans FINAL")
        assert count_spans(running, agent_id, final=False) == 5


async def test_session_whose_root_arrives_last_gets_every_span(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    spans = make_spans(4, session_id="sess-late-root")
    children = [s for s in spans if s.parent is not None]
    root = [s for s in spans if s.parent is None]
    assert await export_grpc(running, children, key) == SpanExportResult.SUCCESS
    assert await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-late-root") == []
    assert await export_grpc(running, root, key) == SpanExportResult.SUCCESS
    stored = await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-late-root")
    assert len(stored) == 4
    assert sum(1 for s in stored if s.is_root) == 1


async def test_a_session_spanning_two_traces(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    first, second = make_spans(2, session_id="sess-multi"), make_spans(3, session_id="sess-multi")
    assert first[0].context.trace_id != second[0].context.trace_id
    assert await export_grpc(running, first + second, key) == SpanExportResult.SUCCESS
    stored = await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-multi")
    assert len(stored) == 5
    assert len({s.trace_id for s in stored}) == 2


async def test_agents_do_not_see_each_others_spans(running: Running) -> None:
    agent_a, key_a = await asyncio.to_thread(running.new_agent, "a", "one")
    agent_b, _ = await asyncio.to_thread(running.new_agent, "b", "two")
    assert await export_grpc(running, make_spans(2, session_id="shared-id"), key_a) == SpanExportResult.SUCCESS
    assert len(await asyncio.to_thread(read_session_spans, running.store, agent_a, "shared-id")) == 2
    assert await asyncio.to_thread(read_session_spans, running.store, agent_b, "shared-id") == []


async def test_logs_are_kept_and_linked_to_their_span(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    exporter = OTLPLogExporter(endpoint=running.grpc_target, insecure=True,
                               headers={"authorization": f"Bearer {key}"})
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    memory = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = tracer_provider.get_tracer("tests")

    def emit() -> None:
        import logging

        from opentelemetry.sdk._logs import LoggingHandler

        logger = logging.getLogger("evalkit-test-genai")
        logger.propagate = False
        logger.addHandler(LoggingHandler(logger_provider=logger_provider))
        logger.setLevel(logging.INFO)
        with tracer.start_as_current_span("chat gpt-4o", attributes={"session.id": "sess-logs"}):
            logger.info("the user asked", extra={"event.name": "gen_ai.user.message"})
        logger_provider.shutdown()

    await asyncio.to_thread(emit)
    spans = memory.get_finished_spans()
    assert await export_grpc(running, list(spans), key) == SpanExportResult.SUCCESS
    trace_id = format(spans[0].context.trace_id, "032x")
    logs = await asyncio.to_thread(read_trace_logs, running.store, agent_id, [trace_id])
    assert len(logs) == 1
    assert logs[0].span_id == format(spans[0].context.span_id, "016x")
    assert logs[0].body == "the user asked"
    assert logs[0].event_name == "gen_ai.user.message"


async def test_an_attribute_over_the_cap_is_truncated_not_dropped(tmp_path: Path) -> None:
    async with serve(tmp_path, max_attribute_bytes=1000) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        big = "é" * 3000  # 6,000 bytes
        spans = make_spans(2, session_id="sess-big", **{"input.value": big})
        assert await export_grpc(running, spans, key) == SpanExportResult.SUCCESS
        stored = await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-big")
        assert len(stored) == 2
        root = next(s for s in stored if s.is_root)
        assert root.truncated == {"input.value": 6000}
        assert root.attributes["input.value"] == "é" * 500


async def test_request_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    async with serve(tmp_path, max_request_bytes=2000) as running:
        _, key = await asyncio.to_thread(running.new_agent)
        request = make_request_bytes(make_spans(2, **{"input.value": "x" * 5000}))
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", request, "application/x-protobuf", key)
        assert status == 413
        async with grpc.aio.insecure_channel(running.grpc_target) as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as failure:
                await stub.Export(trace_service_pb2.ExportTraceServiceRequest.FromString(request),
                                  metadata=(("authorization", f"Bearer {key}"),))
        assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def make_request_bytes(spans: list[ReadableSpan]) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans).SerializeToString()


async def test_overload_answers_retryable_errors(tmp_path: Path) -> None:
    # One request is inserting and the next waits for its batch, so the queue is full for a third.
    # The insert is held by taking the store's insert connections (one writer slot, one for logs).
    async with serve(tmp_path, queue_max_rows=2, insert_concurrency=1) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        held = [await asyncio.to_thread(running.store._inserters.borrow) for _ in range(running.store.max_inserters)]
        url = f"{running.otlp_http}/v1/traces"
        try:
            first = asyncio.create_task(asyncio.to_thread(
                post, url, make_request_bytes(make_spans(2)), "application/x-protobuf", key))
            second = None
            writer = running.service.span_writer
            for _ in range(600):  # until the first is inserting and the second queued behind it
                if second is None and writer.in_flight:
                    second = asyncio.create_task(asyncio.to_thread(
                        post, url, make_request_bytes(make_spans(2)), "application/x-protobuf", key))
                if second is not None and writer.queued_rows == 2:
                    break
                await asyncio.sleep(0.02)
            assert second is not None and writer.in_flight == 1 and writer.queued_rows == 2
            status, _, headers = await asyncio.to_thread(
                post, url, make_request_bytes(make_spans(2)), "application/x-protobuf", key)
            assert status == 429
            assert headers["Retry-After"] == "2"
        finally:
            for client in held:
                running.store._inserters.give_back(client)
        assert second is not None
        assert (await first)[0] == 200 and (await second)[0] == 200
        assert count_spans(running, agent_id) == 4


async def test_store_unreachable_is_retryable_and_nothing_is_acknowledged(tmp_path: Path) -> None:
    import socket


    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    async with serve(tmp_path, clickhouse_url=f"http://default:@127.0.0.1:{closed_port}/evalkit") as running:
        body = make_request_bytes(make_spans(2))
        status, _reply, headers = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", "ek_whatever")
        assert status == 503
        assert headers["Retry-After"] == "2"
        async with grpc.aio.insecure_channel(running.grpc_target) as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as failure:
                await stub.Export(trace_service_pb2.ExportTraceServiceRequest.FromString(body),
                                  metadata=(("authorization", "Bearer ek_whatever"),))
        assert failure.value.code() == grpc.StatusCode.UNAVAILABLE
        trailing = dict(failure.value.trailing_metadata() or ())
        assert "google.rpc.retryinfo-bin" in trailing
        assert "grpc-status-details-bin" in trailing
        status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
        assert status == 503 and health["store_ready"] is False


def post_get(url: str) -> tuple[int, Any, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


async def test_metrics_count_what_happened(tmp_path: Path) -> None:
    async with serve(tmp_path) as running:  # its own: the counts are the service's, every test's
        _, key = await asyncio.to_thread(running.new_agent)
        assert await export_grpc(running, make_spans(3), key) == SpanExportResult.SUCCESS
        await asyncio.to_thread(post, f"{running.otlp_http}/v1/traces", bad_and_good_request().SerializeToString(),
                                "application/x-protobuf", key)
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{running.api}/metrics").read().decode())
    assert 'evalkit_ingest_accepted_total{signal="spans"} 5.0' in text  # three, the good one, the clock slip
    assert 'evalkit_ingest_rejected_total{signal="spans"} 3.0' in text
    assert "evalkit_ingest_insert_seconds_bucket" in text
    assert 'evalkit_ingest_queue_rows{table="spans"}' in text


async def test_info_tells_clients_where_to_send_spans(running: Running) -> None:
    status, info, _ = await asyncio.to_thread(post_get, f"{running.api}/api/info")
    assert status == 200
    assert info["otlp_http_url"] == running.otlp_http
    assert info["otlp_grpc_endpoint"] == running.grpc_target
    assert info["version"] == "0.1.0"
