"""`evalkit serve` as a user runs it: a subprocess that drains on SIGTERM, keeps its data across a
restart, refuses a second owner of its data directory; and the cluster shape of the migrations."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from evalkit.ingest.tables import SPAN_EXPORTS, SPAN_EXPORTS_TO_SPANS
from evalkit.migrations import SESSION_TRACES_FEED, SPANS, Backfill, TableSettings, all_migrations
from tests.conftest import release_shared_engine
from tests.ingest.test_otlp import make_spans

TOKEN = "evk_lifecycle_admin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, data_dir: Path, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.ports = {"grpc": free_port(), "http": free_port(), "api": free_port()}
        self.env = dict(env or {})

    def start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "EVALKIT_BOOTSTRAP_TOKEN": TOKEN, "EVALKIT_INGEST_WORKERS": "0", **self.env}
        process = subprocess.Popen(
            [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(self.data_dir),
             "--grpc-port", str(self.ports["grpc"]), "--otlp-http-port", str(self.ports["http"]),
             "--api-port", str(self.ports["api"])],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"evalkit serve exited: {process.stderr.read() if process.stderr else ''}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ports['api']}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return process
            except OSError:
                time.sleep(0.1)
        raise AssertionError("evalkit serve did not become healthy in 60 s")

    def call(self, method: str, path: str, body: object = None) -> dict[str, object]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.ports['api']}{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"Bearer {TOKEN}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]


def test_data_survives_a_restart_and_sigterm_drains(tmp_path: Path) -> None:
    served = Served(tmp_path / "data")
    process = served.start()
    try:
        served.call("POST", "/api/workspaces", {"name": "acme"})
        served.call("POST", "/api/agents", {"name": "bot", "workspace": "acme"})
        key = served.call("POST", "/api/agents/bot@acme/keys", {})["key"]
        exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{served.ports['http']}/v1/traces",
                                    headers={"authorization": f"Bearer {key}"})
        assert exporter.export(make_spans(5, session_id="sess-restart")) == SpanExportResult.SUCCESS
        exporter.shutdown()
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert "stopped; every acknowledged span is stored" in out

    # A second start on the same directory sees the agent, the key and the spans.
    process = served.start()
    try:
        # The key still works: ingest accepts another span for the same agent.
        exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{served.ports['http']}/v1/traces",
                                    headers={"authorization": f"Bearer {key}"})
        assert exporter.export(make_spans(2, session_id="sess-after")) == SpanExportResult.SUCCESS
        exporter.shutdown()
        # A second process may not open the same data directory.
        other = Served(served.data_dir)
        clash = subprocess.run(
            [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(served.data_dir),
             "--grpc-port", str(other.ports["grpc"]), "--otlp-http-port", str(other.ports["http"]),
             "--api-port", str(other.ports["api"])], capture_output=True, text=True, timeout=60,
            env={**os.environ, "EVALKIT_BOOTSTRAP_TOKEN": TOKEN})
        assert clash.returncode != 0
        assert f"in use by another process (pid {process.pid})" in clash.stderr
        # Said by evalkit alone: before, the engine's own "Cannot lock file … Another server instance" came first.
        assert "Cannot lock file" not in clash.stderr and "DB::Exception" not in clash.stderr, clash.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)

    from evalkit.store import Store
    from evalkit.trajectory.read import read_session_spans

    release_shared_engine()
    store = Store(f"chdb://{served.data_dir / 'clickhouse'}")
    store.connect()
    try:
        assert len(read_session_spans(store, "bot@acme", "sess-restart")) == 5
        assert len(read_session_spans(store, "bot@acme", "sess-after")) == 2
    finally:
        store.close()


def test_cluster_migrations_are_replicated_behind_distributed_tables() -> None:
    local, distributed = SPANS.statements("evalkit", "prod")
    assert local.startswith("CREATE TABLE IF NOT EXISTS evalkit.spans_local ON CLUSTER prod")
    assert "ENGINE = ReplicatedReplacingMergeTree(received_at)" in local
    assert "PARTITION BY toYYYYMMDD(start_time)" in local
    assert distributed == ("CREATE TABLE IF NOT EXISTS evalkit.spans ON CLUSTER prod AS evalkit.spans_local "
                           "ENGINE = Distributed(prod, evalkit, spans_local, cityHash64(agent_id, trace_id))")
    (feed,) = SESSION_TRACES_FEED.statements("evalkit", "prod")
    assert feed.startswith("CREATE MATERIALIZED VIEW IF NOT EXISTS evalkit.session_traces_feed ON CLUSTER prod "
                           "TO evalkit.session_traces_local AS SELECT")
    assert "FROM evalkit.spans_local WHERE session_id != ''" in feed
    # Exports land on the node that was asked (a Null table on each) and the view shards them.
    (staging,) = SPAN_EXPORTS.statements("evalkit", "prod")
    assert staging.startswith("CREATE TABLE IF NOT EXISTS evalkit.span_exports ON CLUSTER prod (")
    assert staging.endswith("ENGINE = Null")
    (flatten,) = SPAN_EXPORTS_TO_SPANS.statements("evalkit", "prod")
    assert flatten.startswith("CREATE MATERIALIZED VIEW IF NOT EXISTS evalkit.span_exports_to_spans ON CLUSTER prod "
                              "TO evalkit.spans AS")
    assert "FROM evalkit.span_exports\n" in flatten
    for migration in all_migrations():
        for table in migration.tables:
            for statement in table.statements("evalkit", "prod"):
                if isinstance(table, Backfill):
                    # Rows copied once, from the node migrating, Distributed table to Distributed table.
                    assert statement.startswith("INSERT INTO evalkit.") and "_local" not in statement, statement
                elif isinstance(table, TableSettings):
                    # Settings are the tables' that keep the rows: spans_local, each node's own staging.
                    name = f"{table.table}_local" if table.replicated else table.table
                    assert statement.startswith(f"ALTER TABLE evalkit.{name} ON CLUSTER prod MODIFY SETTING ")
                else:
                    assert "ON CLUSTER prod" in statement
    # A table created again with another engine (the session list's kept rows, migration 210): both of its names
    # dropped on every node first.
    (kept_rows,) = [m for m in all_migrations() if m.version == 210]
    assert kept_rows.tables[0].statements("evalkit", "prod") == [
        "DROP TABLE IF EXISTS evalkit.session_rows ON CLUSTER prod SYNC",
        "DROP TABLE IF EXISTS evalkit.session_rows_local ON CLUSTER prod SYNC"]
    assert "ENGINE = ReplicatedVersionedCollapsingMergeTree(sign, version)" in kept_rows.tables[1].statements(
        "evalkit", "prod")[0]


def test_a_failing_migration_stops_serve_with_the_reason(tmp_path: Path) -> None:
    from evalkit.store import Store

    # A table in the way of migration 10: its view cannot read the columns it needs.
    release_shared_engine()
    store = Store(f"chdb://{tmp_path / 'clickhouse'}")
    store.connect()
    store.command("CREATE TABLE evalkit.span_exports (x UInt8) ENGINE = Null")
    store.close()
    served = Served(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(tmp_path),
         "--grpc-port", str(served.ports["grpc"]), "--otlp-http-port", str(served.ports["http"]),
         "--api-port", str(served.ports["api"])],
        env={**os.environ, "EVALKIT_BOOTSTRAP_TOKEN": TOKEN}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        _, stderr = process.communicate(timeout=90)
    finally:
        process.kill()
    assert process.returncode != 0
    assert "could not prepare the store: migration 10 (span exports read by ClickHouse" in stderr
    assert "start `evalkit serve` again" in stderr


def test_a_setting_it_cannot_take_stops_serve_with_the_variable_and_the_value(tmp_path: Path) -> None:
    served = Served(tmp_path)
    process = subprocess.run(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(tmp_path),
         "--grpc-port", str(served.ports["grpc"]), "--otlp-http-port", str(served.ports["http"]),
         "--api-port", "70000"],
        env={**os.environ, "EVALKIT_FLATTEN_WORKERS": "0", "EVALKIT_QUEUE_MAX_ROWS": "many"},
        capture_output=True, text=True, timeout=90)
    assert process.returncode == 1
    assert "Traceback" not in process.stderr
    assert "EVALKIT_FLATTEN_WORKERS='0': input should be greater than or equal to 1" in process.stderr
    assert "EVALKIT_QUEUE_MAX_ROWS='many': input should be a valid integer" in process.stderr
    assert "--api-port=70000: input should be less than or equal to 65535" in process.stderr
    assert "change or unset it and start again" in process.stderr
