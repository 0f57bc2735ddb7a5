"""Span exports are acknowledged once staged and flattened behind (ingest/flattener.py): a kill
between the two loses nothing and duplicates nothing, a read sees every acknowledged span, and a
staged request the engine refuses to flatten is set aside without holding up the rest."""

from __future__ import annotations

import asyncio
import signal
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.sdk.trace.export import SpanExportResult

from evalkit.ingest import export_schema
from evalkit.ingest.encode import Encoded, Part, encode_spans
from evalkit.ingest.export_schema import Framing
from evalkit.ingest.flattener import Flattener
from evalkit.ingest.span_checks import DAY_NS
from evalkit.ingest.staging import Staged, StagingLedger
from evalkit.ingest.writer import BatchWriter
from evalkit.migrations import migrate
from evalkit.store import Store
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import read_session_spans
from evalkit.trajectory.session_list import SessionQuery, list_sessions
from tests.conftest import release_shared_engine, serve
from tests.ingest.test_lifecycle import Served
from tests.ingest.test_otlp import count_spans, export_grpc, make_request_bytes, make_spans


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def staged_rows(api_port: int) -> float:
    for line in fetch(f"http://127.0.0.1:{api_port}/metrics").splitlines():
        if line.startswith("evalkit_ingest_staged_rows "):
            return float(line.split()[-1])
    raise AssertionError("no evalkit_ingest_staged_rows on /metrics")


def test_sigkill_right_after_acks_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    # The flattener lingers (no read comes to cut it short), so the acknowledged spans are
    # certainly still staged when the process is killed.
    served = Served(tmp_path / "data", env={"EVALKIT_FLATTEN_DELAY_MS": "600000"})
    process = served.start()
    try:
        served.call("POST", "/api/workspaces", {"name": "acme"})
        served.call("POST", "/api/agents", {"name": "bot", "workspace": "acme"})
        key = served.call("POST", "/api/agents/bot@acme/keys", {})["key"]
        exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{served.ports['http']}/v1/traces",
                                    headers={"authorization": f"Bearer {key}"})
        for i in range(3):
            assert exporter.export(make_spans(5, session_id=f"sess-kill-{i}")) == SpanExportResult.SUCCESS
        exporter.shutdown()
        assert staged_rows(served.ports["api"]) == 15
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)

    served.env = {}
    process = served.start()
    try:
        # Read through the API at once: the staged spans were flattened at start-up (or the read
        # waits for them).
        listed = served.call("GET", "/api/agents/bot@acme/sessions?limit=10")
        assert sorted(s["session_id"] for s in listed["sessions"]) == [f"sess-kill-{i}" for i in range(3)]
        assert staged_rows(served.ports["api"]) == 0
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    assert process.returncode == 0

    release_shared_engine()
    store = Store(f"chdb://{served.data_dir / 'clickhouse'}")
    store.connect()
    try:
        assert store.query("SELECT count() FROM spans") == [(15,)]  # no copy, even before merges
        assert store.query("SELECT count() FROM span_staging") == [(0,)]
    finally:
        store.close()


async def test_a_read_right_after_the_ack_sees_the_spans(tmp_path: Path) -> None:
    # A long linger: without the read barrier the spans would stay staged for a minute.
    async with serve(tmp_path, flatten_delay_ms=60_000) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        assert await export_grpc(running, make_spans(4, session_id="sess-now"), key) == SpanExportResult.SUCCESS
        assert running.service.staging.backlog_rows == 4
        status, body = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent_id}/sessions/sess-now")
        assert status == 200, body
        assert body["summary"]["span_count"] == 4
        # A read of the store itself waits the same way.
        assert await export_grpc(running, make_spans(3, session_id="sess-next"), key) == SpanExportResult.SUCCESS
        assert count_spans(running, agent_id) == 7


def far_days_request(days: int) -> bytes:
    """One export whose spans start on `days` different days."""
    spans = [trace_pb2.Span(trace_id=bytes([1] * 16), span_id=(i + 1).to_bytes(8, "big"), name="old",
                            start_time_unix_nano=i * DAY_NS + 1, end_time_unix_nano=i * DAY_NS + 2)
             for i in range(days)]
    return trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        scope_spans=[trace_pb2.ScopeSpans(spans=spans)])]).SerializeToString()


async def test_a_staged_request_the_engine_refuses_is_set_aside_and_the_rest_flows(tmp_path: Path) -> None:
    async with serve(tmp_path) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        # Staged as one request over 150 days (the receivers split such a request; this one is
        # written as it is): staging takes it, flattening it alone passes the engine's limit of
        # 100 partitions per insert.
        body = far_days_request(150)
        message = Framing(agent_id, 1, "session.id", 1 << 20, 1024).message(body)
        part = Part(150, message, "", frozenset(range(150)))
        await running.service.span_writer.write(Encoded(150, 0, "", (part,)))
        assert await export_grpc(running, make_spans(3, session_id="sess-after"), key) == SpanExportResult.SUCCESS
        assert count_spans(running, agent_id) == 3
        assert running.store.query("SELECT count(), any(reason) LIKE '%partitions%' FROM span_staging_refused") \
            == [(1, True)]
        status, _ = await asyncio.to_thread(running.call, "GET", "/healthz")
        assert status == 200
        metrics = await asyncio.to_thread(fetch, f"{running.api}/metrics")
        assert "evalkit_ingest_flatten_refused_requests_total 1.0" in metrics


@pytest.mark.parametrize("in_progress", [[(1, 2)], [(1, 1), (2, 2)]], ids=["one worker", "two workers"])
async def test_a_range_flattened_again_after_a_crash_is_not_stored_twice(
        store: Store, tmp_path: Path, in_progress: list[tuple[int, int]]) -> None:
    migrate(store)
    ledger = StagingLedger()
    await _stage(store, tmp_path, ledger, [make_request_bytes(make_spans(3, session_id=f"s{i}")) for i in range(3)])
    assert ledger.acked_upto == 3
    # A first run recorded the ranges of requests 1-2 in progress and flattened them, then died
    # before it could note it (and before request 3).
    first_run = Flattener(store, ledger)
    for first, last in in_progress:  # handed out to workers, each recorded and inserted
        first_run._in_progress[(first, last)] = last
        await asyncio.to_thread(first_run._insert, first, last, True)
    assert store.query("SELECT count() FROM spans") == [(6,)]
    # The next run repeats exactly those ranges, with the same tokens (dropped), then flattens 3.
    again = StagingLedger()
    flattener = Flattener(store, again)
    assert await asyncio.to_thread(flattener.recover) == 3
    flattener.start()
    await flattener.close()
    assert again.flattened_upto == 3
    assert store.query("SELECT count() FROM spans") == [(9,)]
    assert store.query("SELECT count() FROM spans FINAL") == [(9,)]


def test_the_flattener_never_passes_an_insert_still_running() -> None:
    """Inserts finish out of order: a request staged by a later insert waits for the earlier one,
    a failed insert's numbers are skipped, and ranges flattened out of order count in order."""
    ledger = StagingLedger()
    parts = [Part(2, b"xx", "", frozenset({1}))]
    first = ledger.reserve(parts)
    second = ledger.reserve(parts)
    ledger.landed(second, parts)
    assert ledger.acked_upto == second
    assert not ledger.caught_up(0.01)  # acknowledged, not flattened: a read would wait
    assert ledger.durable_upto == first - 1
    ledger.abandoned(first)

    def one_at_a_time(ready: list[Staged], upto: int) -> tuple[list[Staged], int]:
        return ready[:1], ready[0].seq

    got = ledger.hand_out(one_at_a_time)
    assert got is not None and [s.seq for s in got[0]] == [second] and got[2] == second
    third = ledger.reserve(parts)
    ledger.landed(third, parts)
    later = ledger.hand_out(one_at_a_time)
    assert later is not None and [s.seq for s in later[0]] == [third]
    ledger.finish(later[1], 2)  # the later range first: the ledger does not pass the earlier
    assert ledger.flattened_upto < second and not ledger.caught_up(0.01)
    ledger.finish(got[1], 2)
    assert ledger.flattened_upto == third and ledger.caught_up(0.01) and ledger.backlog_rows == 0
    ledger.close()
    assert ledger.hand_out(one_at_a_time) is None


async def test_a_span_sent_twice_in_one_batch_reads_once(store: Store, tmp_path: Path) -> None:
    # The flattening insert keeps both copies (it skips the within-batch replacing a ReplacingMergeTree
    # does by default, docs/performance.md): every read must still see the span once.
    migrate(store)
    ledger = StagingLedger()
    request = make_request_bytes(make_spans(4, session_id="twice"))
    await _stage(store, tmp_path, ledger, [request, request])
    await asyncio.to_thread(Flattener(store, ledger)._insert, 1, 2, False)  # one batch, both copies
    assert store.query("SELECT count() FROM spans") == [(8,)]
    assert store.query("SELECT count() FROM spans FINAL") == [(4,)]
    assert len(read_session_spans(store, "bot@acme", "twice")) == 4
    for sort in ("last_seen", "spans", "cost"):
        page = list_sessions(store, "bot@acme", SessionQuery(sort=sort), PriceBook())
        assert [(row.session_id, row.spans, row.prompt_tokens, row.completion_tokens) for row in page.rows] \
            == [("twice", 4, 303, 21)], sort


async def _stage(store: Store, tmp_path: Path, ledger: StagingLedger, requests: list[bytes]) -> None:
    """Each request acknowledged (staged) for agent bot@acme, in order, by the server's own writer."""
    writer = BatchWriter(store, "span_staging", export_schema.STAGING_COLUMN_NAMES, fmt="Protobuf",
                         format_settings=export_schema.insert_settings(
                             export_schema.write_schema_file(tmp_path / "schemas")),
                         max_delay=0.001, staging=ledger, sequence=export_schema.sequenced_pieces)
    writer.start()
    framing = Framing("bot@acme", 1, "session.id", 1 << 20, 1024)
    try:
        for request in requests:
            await writer.write(encode_spans(request, framing))
    finally:
        await writer.close()


async def test_two_flattening_workers_store_every_span_once(tmp_path: Path) -> None:
    """`EVALKIT_FLATTEN_WORKERS=2` (a ClickHouse server with cores to spare): consecutive batches
    flattened at once, every acknowledged span readable, each once."""
    async with serve(tmp_path, flatten_workers=2, flatten_max_rows=4) as running:
        assert len(running.service.flattener._threads) == 2
        agent_id, key = await asyncio.to_thread(running.new_agent)
        results = await asyncio.gather(*(
            export_grpc(running, make_spans(3, session_id=f"two-workers-{i}"), key) for i in range(12)))
        assert results == [SpanExportResult.SUCCESS] * 12
        for i in range(12):
            spans = await asyncio.to_thread(read_session_spans, running.store, agent_id, f"two-workers-{i}")
            assert len(spans) == 3
        assert running.store.query("SELECT count() FROM spans FINAL") == [(36,)]
