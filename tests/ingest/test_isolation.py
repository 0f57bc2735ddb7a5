"""One client's export never fails another's: a backfill touching hundreds of days (partitions of
`spans` and `logs`) is stored, requests batched with rows the store refuses are retried apart,
and only the store's own trouble is answered "retry later"."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.ingest.encode import Part
from evalkit.ingest.writer import BatchWriter, WriteFailed, WriteRefused
from evalkit.store import Store
from tests.conftest import Running, serve
from tests.ingest.test_otlp import count_spans, make_spans, post, post_get

DAY_NS = 86_400 * 10**9


def backfill_spans(days: int, session_id: str) -> list[ReadableSpan]:
    """Real SDK spans, one per day over `days` days ending five years ago."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "backfill"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests")
    first = time.time_ns() - (5 * 365 + days) * DAY_NS
    for day in range(days):
        start = first + day * DAY_NS
        span = tracer.start_span(f"old step {day}", start_time=start, attributes={"session.id": session_id})
        span.end(end_time=start + 1_000_000)
    provider.shutdown()
    return list(memory.get_finished_spans())


def export(running: Running, spans: list[ReadableSpan], key: str) -> SpanExportResult:
    exporter = GrpcSpanExporter(endpoint=running.grpc_target, insecure=True,
                                headers={"authorization": f"Bearer {key}"}, timeout=30)
    try:
        return exporter.export(spans)
    finally:
        exporter.shutdown()


async def test_a_backfill_over_hundreds_of_days_is_stored_and_stalls_nobody(tmp_path: Path) -> None:
    # A long batch delay makes every concurrent request share the group commit with the backfill.
    async with serve(tmp_path, batch_max_delay_ms=300) as running:
        poisoner, poison_key = await asyncio.to_thread(running.new_agent, "backfill", "old")
        victims = [await asyncio.to_thread(running.new_agent, f"bot{i}", f"tenant{i}") for i in range(3)]
        poison = backfill_spans(250, "sess-backfill")

        async def victim(key: str, round_: int) -> SpanExportResult:
            return await asyncio.to_thread(export, running, make_spans(3, session_id=f"s-{round_}"), key)

        for round_ in range(3):
            results = await asyncio.gather(
                asyncio.to_thread(export, running, poison, poison_key),
                *(victim(key, round_) for _, key in victims))
            assert results == [SpanExportResult.SUCCESS] * 4, round_
        # Acknowledged is stored; readable follows once flattened, in acknowledgement order, so the
        # backfill's 250 day partitions are flattened first. A read waits at most 5 s for that,
        # which two loaded cores can exceed: wait here for the flattener explicitly.
        assert await asyncio.to_thread(running.service.staging.caught_up, 120)
        for agent_id, _ in victims:
            assert count_spans(running, agent_id) == 9
        assert count_spans(running, poisoner) == 250
        partitions = running.store.query(
            "SELECT uniqExact(toYYYYMMDD(start_time)) FROM spans WHERE agent_id = {a:String}", {"a": poisoner})
        assert partitions == [(250,)]


def backfill_logs(days: int) -> bytes:
    first = time.time_ns() - (5 * 365 + days) * DAY_NS
    records = [logs_pb2.LogRecord(time_unix_nano=first + day * DAY_NS, severity_number=9,
                                  body={"string_value": f"day {day}"}) for day in range(days)]
    return logs_service_pb2.ExportLogsServiceRequest(resource_logs=[logs_pb2.ResourceLogs(
        scope_logs=[logs_pb2.ScopeLogs(log_records=records)])]).SerializeToString()


async def test_log_records_over_hundreds_of_days_are_stored(tmp_path: Path) -> None:
    async with serve(tmp_path, batch_max_delay_ms=300) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        _, other_key = await asyncio.to_thread(running.new_agent, "other", "elsewhere")
        url = f"{running.otlp_http}/v1/logs"
        answers = await asyncio.gather(
            asyncio.to_thread(post, url, backfill_logs(230), "application/x-protobuf", key),
            asyncio.to_thread(post, url, backfill_logs(2), "application/x-protobuf", other_key))
        assert [status for status, _, _ in answers] == [200, 200]
        stored = running.store.query("SELECT count() FROM logs FINAL WHERE agent_id = {a:String}", {"a": agent_id})
        assert stored == [(230,)]


def _part(store: Store, rows: list[tuple[int, str]], digest: str) -> Part:
    block = b"".join(f"{n}\t{text}\n".encode() for n, text in rows)
    return Part(len(rows), block, digest, frozenset({0}))


@pytest.fixture
def numbers_table(store: Store) -> Store:
    store.command("CREATE TABLE numbers_in (n UInt8, text String) ENGINE = MergeTree ORDER BY n")
    return store


async def test_a_refused_request_is_isolated_from_its_batch(numbers_table: Store) -> None:
    """The writer's bisection, on the real engine: rows ClickHouse cannot parse fail their own
    request only, with a permanent error; the requests batched with them are stored."""
    writer = BatchWriter(numbers_table, "numbers_in", ("n", "text"), fmt="TabSeparated", max_delay=0.2)
    writer.start()
    try:
        from evalkit.ingest.encode import Encoded

        def item(part: Part) -> Encoded:
            return Encoded(part.rows, 0, "", (part,))

        good = [item(_part(numbers_table, [(i, f"row {i}")], f"g{i}")) for i in range(5)]
        bad = item(Part(1, b"not a number\tx\n", "bad", frozenset({0})))
        outcomes = await asyncio.gather(*(writer.write(i) for i in [*good[:2], bad, *good[2:]]),
                                        return_exceptions=True)
        assert outcomes[:2] == [None, None] and outcomes[3:] == [None, None, None]
        assert isinstance(outcomes[2], WriteRefused)
        assert "Cannot parse" in str(outcomes[2]) or "CANNOT_PARSE" in str(outcomes[2])
        assert numbers_table.query("SELECT count() FROM numbers_in") == [(5,)]
        assert writer.problem() is None
    finally:
        await writer.close()


async def test_an_unstaged_writer_never_deduplicates_parts_that_carry_no_digest(numbers_table: Store) -> None:
    """Span parts carry no digest (they are staged, and deduplicated when flattened): a writer that
    deduplicates by token must not take them, or every such batch would share one token and all but
    the first be dropped as repeats."""
    from evalkit.ingest.encode import Encoded

    writer = BatchWriter(numbers_table, "numbers_in", ("n", "text"), fmt="TabSeparated", max_delay=0.05)
    writer.start()
    try:
        undigested = Part(1, b"1\tone\n", None, frozenset({0}))
        with pytest.raises(WriteFailed, match="no digest"):
            await writer.write(Encoded(1, 0, "", (undigested,)))
        assert numbers_table.query("SELECT count() FROM numbers_in") == [(0,)]
    finally:
        await writer.close()


async def test_a_failing_store_is_retryable_and_shown_by_health(running: Running) -> None:
    """Every insert failing for the store's sake (here the staging table gone): exports get 503 with
    Retry-After, nothing is acknowledged, /healthz says why; all is well again once it is back."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
    assert status == 200 and health["status"] == "ok"
    running.store.command("DETACH TABLE span_staging")
    try:
        assert await asyncio.to_thread(export_http_status, running, key) == 503
        status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
        assert status == 503
        assert health["status"] == "failing"
        assert "inserts into span_staging are failing" in health["reason"]
    finally:
        running.store.command("ATTACH TABLE span_staging")
    assert await asyncio.to_thread(export_http_status, running, key) == 200
    status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
    assert status == 200 and health["status"] == "ok"
    assert await asyncio.to_thread(count_spans, running, agent_id) == 2


async def test_spans_staged_while_flattening_fails_are_kept_and_flattened_later(running: Running) -> None:
    """The spans table gone: exports are still acknowledged (staged), health says flattening fails,
    and once the table is back the staged spans reach it, none lost."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    running.store.command("DETACH TABLE spans")
    try:
        assert await asyncio.to_thread(export_http_status, running, key) == 200
        for _ in range(100):
            status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
            if status == 503:
                break
            await asyncio.sleep(0.05)
        assert status == 503 and health["status"] == "failing"
        assert "flattening staged spans into spans is failing" in health["reason"]
        assert "nothing is lost" in health["reason"]
        assert running.service.staging.backlog_rows == 2
    finally:
        running.store.command("ATTACH TABLE spans")
    # While flattening fails a read waits at most ~1 s at the barrier (one retry), which a loaded
    # machine can exceed before the retry lands: wait for the flattener itself, bounded.
    for _ in range(60):
        if await asyncio.to_thread(running.service.staging.caught_up, 1.0):
            break
    assert await asyncio.to_thread(count_spans, running, agent_id) == 2
    status, health, _ = await asyncio.to_thread(post_get, f"{running.api}/healthz")
    assert status == 200 and health["status"] == "ok"


def export_http_status(running: Running, key: str) -> int:
    from tests.ingest.test_otlp import make_request_bytes

    status, _, headers = post(f"{running.otlp_http}/v1/traces", make_request_bytes(make_spans(2)),
                              "application/x-protobuf", key)
    if status == 503:
        assert headers["Retry-After"] == "2"
    return status


async def test_a_store_that_cannot_take_the_batch_fails_it_retryably(numbers_table: Store) -> None:
    numbers_table.command("DROP TABLE numbers_in")
    writer = BatchWriter(numbers_table, "numbers_in", ("n", "text"), fmt="TabSeparated", max_delay=0.05)
    writer.start()
    try:
        from evalkit.ingest.encode import Encoded

        part = _part(numbers_table, [(1, "one")], "x")
        with pytest.raises(WriteFailed):
            await writer.write(Encoded(1, 0, "", (part,)))
        problem = writer.problem()
        assert problem is not None and "numbers_in" in problem
    finally:
        await writer.close()


async def test_a_batch_holds_at_most_max_bytes(numbers_table: Store) -> None:
    """Requests queued together are inserted in batches of at most `max_bytes` (one request
    alone may be larger), so the engine's memory per insert is bounded by the setting."""
    from evalkit.ingest.encode import Encoded

    batches: list[int] = []
    writer = BatchWriter(numbers_table, "numbers_in", ("n", "text"), fmt="TabSeparated", max_delay=0.3,
                         max_bytes=40, on_batch=lambda rows, _seconds: batches.append(rows))
    writer.start()
    try:
        parts = [_part(numbers_table, [(i, "x" * 15)], f"b{i}") for i in range(5)]  # 19 bytes each
        big = _part(numbers_table, [(9, "y" * 60)], "big")
        await asyncio.gather(*(writer.write(Encoded(1, 0, "", (p,))) for p in [*parts, big]))
    finally:
        await writer.close()
    assert sorted(batches) == [1, 1, 2, 2]
    assert numbers_table.query("SELECT count() FROM numbers_in") == [(6,)]
