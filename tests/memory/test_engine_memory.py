"""The engine's memory settings reach the real engine, an insert over its memory cap is answered
"retry later" with nothing kept, and the process gives back the code pages starting touched."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.engine_memory import EngineMemory, machine_memory_bytes, write_config_file
from evalkit.ingest import export_schema
from evalkit.ingest.export_schema import Framing, sequenced
from evalkit.ingest.flattener import Flattener
from evalkit.ingest.staging import StagingLedger
from evalkit.migrations import migrate
from evalkit.process_memory import _read_only_file_mappings, bound_malloc, release_code_pages
from evalkit.settings import load_settings
from evalkit.store import Store, StoreUnavailable
from tests.conftest import chdb_url, fresh_database, serve
from tests.ingest.test_otlp import count_spans, make_request_bytes, make_spans, post

_PROBE = """
import json, sys
from pathlib import Path
from evalkit.serve import make_store
from evalkit.settings import load_settings
store = make_store(load_settings({"data_dir": Path(sys.argv[1])}))
store.connect()
server = dict(store.query("SELECT name, value FROM system.server_settings WHERE name IN "
                          "('max_server_memory_usage', 'mark_cache_size', 'primary_index_cache_size', "
                          "'uncompressed_cache_size')"))
merge = dict(store.query("SELECT name, value FROM system.merge_tree_settings WHERE name IN "
                         "('vertical_merge_algorithm_min_rows_to_activate', 'merge_max_block_size')"))
inserter = store._inserters.borrow()
insert_limit = inserter.query("SELECT getSetting('max_memory_usage')").result_rows[0][0]
reader_limit = store.query("SELECT getSetting('max_memory_usage')")[0][0]
print(json.dumps({"server": server, "merge": merge, "insert": int(insert_limit), "read": int(reader_limit)}))
"""


def test_the_memory_settings_reach_the_engine(tmp_path: Path) -> None:
    # A process of its own: server settings apply when the engine is first opened in a process,
    # and this test process opened its engine long before.
    env = {"EVALKIT_ENGINE_MEMORY_BYTES": str(3 << 30), "EVALKIT_INSERT_MEMORY_BYTES": str(300 << 20),
           "EVALKIT_ENGINE_CACHE_BYTES": str(64 << 20), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path)], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["server"] == {"max_server_memory_usage": str(3 << 30), "mark_cache_size": str(32 << 20),
                              "primary_index_cache_size": str(16 << 20), "uncompressed_cache_size": str(64 << 20)}
    assert seen["merge"] == {"vertical_merge_algorithm_min_rows_to_activate": "1", "merge_max_block_size": "1024"}
    assert seen["insert"] == 300 << 20  # the insert connections' cap ...
    assert seen["read"] == 0  # ... and not the reads' (bounded by the engine's own cap)
    assert (tmp_path / "engine-config.xml").is_file()


def test_defaults_follow_the_machine_and_settings_override_them() -> None:
    small = EngineMemory.for_machine(2 << 30, insert_concurrency=2)
    assert (small.engine_bytes, small.insert_bytes, small.cache_bytes) == (1 << 30, (1 << 30) // 3, 32 << 20)
    large = EngineMemory.for_machine(64 << 30, insert_concurrency=1)
    assert (large.engine_bytes, large.insert_bytes, large.cache_bytes) == (4 << 30, 2 << 30, 256 << 20)
    mid = EngineMemory.for_machine(8 << 30)
    assert mid.engine_bytes == 2 << 30 and mid.cache_bytes == 32 << 20
    chosen = EngineMemory.for_machine(8 << 30, engine_bytes=512 << 20, insert_bytes=1 << 30, cache_bytes=8 << 20)
    # An insert cap above the engine's would never be reached: it is the engine's.
    assert (chosen.engine_bytes, chosen.insert_bytes, chosen.cache_bytes) == (512 << 20, 512 << 20, 8 << 20)
    settings = load_settings(env={"EVALKIT_ENGINE_MEMORY_BYTES": "1073741824", "EVALKIT_RELEASE_CODE_PAGES": "0"})
    assert settings.engine_memory_bytes == 1 << 30 and settings.release_code_pages is False
    with pytest.raises(ValueError):
        load_settings(env={"EVALKIT_INSERT_MEMORY_BYTES": "0"})


def test_a_container_limit_below_the_ram_is_the_machine(tmp_path: Path) -> None:
    v1 = tmp_path / "v1"
    (v1 / "memory" / "docker" / "abc").mkdir(parents=True)
    (v1 / "memory" / "docker" / "abc" / "memory.limit_in_bytes").write_text(f"{1 << 30}\n")
    (tmp_path / "cgroup-v1").write_text("12:pids:/docker/abc\n4:memory:/docker/abc\n")
    assert machine_memory_bytes(v1, tmp_path / "cgroup-v1") == 1 << 30
    v2 = tmp_path / "v2"
    (v2 / "app").mkdir(parents=True)
    (tmp_path / "cgroup-v2").write_text("0::/app\n")
    (v2 / "app" / "memory.max").write_text("max\n")
    unlimited = machine_memory_bytes(v2, tmp_path / "cgroup-v2")
    assert unlimited > 1 << 30  # the RAM
    (v2 / "app" / "memory.max").write_text(f"{512 << 20}\n")
    assert machine_memory_bytes(v2, tmp_path / "cgroup-v2") == 512 << 20
    assert machine_memory_bytes(v2, tmp_path / "no-such-file") == unlimited


def test_the_config_file_is_rewritten_only_when_it_changes(tmp_path: Path) -> None:
    path = write_config_file(tmp_path / "engine-config.xml", {"merge_max_block_size": 2048})
    assert "<merge_max_block_size>2048</merge_max_block_size>" in path.read_text()
    before = path.stat().st_mtime_ns
    write_config_file(path, {"merge_max_block_size": 2048})
    assert path.stat().st_mtime_ns == before
    write_config_file(path)
    assert "<vertical_merge_algorithm_min_rows_to_activate>1<" in path.read_text()


def test_an_insert_over_its_memory_cap_is_retryable(tmp_path: Path) -> None:
    store = Store(chdb_url(fresh_database()), insert_settings={"max_memory_usage": 1 << 20})
    store.connect()
    try:
        store.command("CREATE TABLE wide (id UInt64, text String) ENGINE = MergeTree ORDER BY id")
        rows = b"".join(b"%d\t%s\n" % (i, b"x" * 2000) for i in range(5000))
        with pytest.raises(StoreUnavailable, match="MEMORY_LIMIT_EXCEEDED"):
            store.insert_raw("wide", ["id", "text"], rows, "TabSeparated")
        assert store.query("SELECT count() FROM wide") == [(0,)]
        store.insert_raw("wide", ["id", "text"], rows[:2000], "TabSeparated")  # a small one fits
        assert store.query("SELECT count() FROM wide")[0][0] > 0
    finally:
        store.close()


async def test_exports_refused_for_memory_get_retry_later_and_nothing_is_kept(tmp_path: Path) -> None:
    async with serve(tmp_path, insert_memory_bytes=1 << 20) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        # Staging this request alone needs more than the 1 MiB cap: refused, retryable, nothing kept.
        body = make_request_bytes(make_spans(3000, payload="p" * 4000))
        status, _, headers = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key)
        assert status == 503 and int(headers["Retry-After"]) > 0
        staged = running.store.query("SELECT count() FROM span_staging")
        assert staged == [(0,)] and count_spans(running, agent_id, final=False) == 0
        health = await asyncio.to_thread(_get_json, f"{running.api}/healthz")
        assert health["status"] == "failing" and "memory limit" in health["reason"].lower()


async def test_a_staged_export_the_cap_cannot_flatten_stays_staged_and_health_says_why(tmp_path: Path) -> None:
    async with serve(tmp_path, insert_memory_bytes=1 << 20) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        body = make_request_bytes(make_spans(200, payload="p" * 4000))
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", body, "application/x-protobuf", key)
        assert status == 200  # durable once staged; flattening it needs more than the cap
        health: dict[str, object] = {}
        for _ in range(100):  # until the flattener has tried (it runs behind the acknowledgement)
            health = await asyncio.to_thread(_get_json, f"{running.api}/healthz")
            if health["status"] != "ok":
                break
            await asyncio.sleep(0.1)
        assert health["status"] == "failing" and "memory limit" in str(health["reason"]).lower()
        with running.store.unfenced():
            assert running.store.query("SELECT count() FROM span_staging") == [(1,)]
            assert count_spans(running, agent_id, final=False) == 0


def _get_json(url: str) -> dict[str, object]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as exc:
        return dict(json.loads(exc.read()))


async def test_metrics_show_the_process_and_the_engine_memory(tmp_path: Path) -> None:
    async with serve(tmp_path, release_code_pages=True) as running:  # and the service still answers
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{running.api}/metrics").read().decode())
    values = {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
              if line and not line.startswith("#")}
    assert values["process_resident_memory_bytes"] > 0
    assert values["evalkit_engine_memory_tracked_bytes"] > 0
    # The store's connections in use and the statements that waited for one, per pool (tests/store says when).
    assert 0 <= values['evalkit_store_connections_lent{pool="read"}'] <= running.settings.read_connections
    assert values['evalkit_store_connection_waits{pool="read"}'] == 0
    assert 'evalkit_store_connections_lent{pool="insert"}' in values


def test_code_pages_are_released_and_the_engine_still_works(store: Store) -> None:
    assert bound_malloc()
    assert release_code_pages() > 0
    assert store.query("SELECT sum(number) FROM numbers(1000)") == [(499500,)]


def test_only_read_only_file_mappings_without_private_pages_are_advised() -> None:
    smaps = "\n".join([
        "7f0000000000-7f0000100000 r-xp 00000000 08:01 1 /lib/code.so", "Rss: 400 kB", "Anonymous: 0 kB",
        "7f0000100000-7f0000200000 r--p 00100000 08:01 1 /lib/code.so", "Rss: 100 kB", "Anonymous: 8 kB",
        "7f0000200000-7f0000300000 rw-p 00200000 08:01 1 /lib/code.so", "Rss: 100 kB", "Anonymous: 0 kB",
        "7f0000300000-7f0000400000 r--p 00000000 00:00 0 ", "Rss: 100 kB", "Anonymous: 0 kB",
        "7f0000400000-7f0000500000 r--p 00000000 08:01 2 /lib/cold.so", "Rss: 0 kB", "Anonymous: 0 kB",
    ])
    assert _read_only_file_mappings(smaps) == [(0x7f0000000000, 0x7f0000100000, 400 << 10)]


def test_spans_and_staged_exports_are_written_in_small_compressed_blocks(store: Store) -> None:
    migrate(store)
    for table in ("spans", "span_staging"):
        (query,) = store.query("SELECT create_table_query FROM system.tables WHERE database = {d:String} "
                               "AND name = {t:String}", {"d": store.database, "t": table})[0]
        assert "max_compress_block_size = 131072" in query, (table, query)


def test_a_large_flattening_batch_fits_a_small_insert_cap(tmp_path: Path) -> None:
    # 10,240 spans of ~1.5 KB in one batch are written as a wide part (one compressed stream per
    # column, ~100 of them in spans): with ClickHouse's default 1 MiB blocks the part's buffers
    # alone took ~230 MB (~280 MB in all, past this cap, so the batch could never be flattened
    # whole). With 128 KiB blocks the batch needs ~70 MB.
    store = Store(chdb_url(fresh_database()), insert_settings={"max_memory_usage": 160 << 20})
    store.connect()
    try:
        migrate(store)
        spans = _spans_with_text(20 * 512, 1500)
        schema = export_schema.write_schema_file(tmp_path / "schemas")
        framing = Framing("agent@test", int(time.time() * 1000), "", 16 << 20, 1024)
        for seq in range(1, 21):
            request = make_request_bytes(spans[(seq - 1) * 512:seq * 512])
            store.insert_raw("span_staging", export_schema.STAGING_COLUMN_NAMES,
                             sequenced(framing.message(request), seq), "Protobuf",
                             {**export_schema.insert_settings(schema), "insert_deduplicate": 0})
        Flattener(store, StagingLedger())._insert(1, 20, record=False)  # the flattener's own statement
        assert store.query("SELECT count() FROM spans FINAL") == [(20 * 512,)]
        assert store.query("SELECT count() FROM system.parts WHERE database = {d:String} AND table = 'spans' "
                           "AND active AND part_type = 'Wide'", {"d": store.database}) == [(1,)]
    finally:
        store.close()


def _spans_with_text(count: int, size: int) -> list[ReadableSpan]:
    """Real SDK spans under one root, each with `size` bytes of message text."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("invoke_agent bot", attributes={"session.id": "big"}):
        for i in range(count - 1):
            with tracer.start_as_current_span("chat", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.input.messages": f"{i} " + "m" * size}):
                pass
    provider.shutdown()
    return list(memory.get_finished_spans())
