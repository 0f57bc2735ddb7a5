"""Ingest throughput: realistic GenAI spans over OTLP/gRPC into `evalkit serve` (embedded engine).

Starts `evalkit serve` in a subprocess on a fresh data directory, sends pre-encoded
export requests (512 spans each, like the OTel SDK's batch processor) from several
concurrent gRPC clients, and prints, per concurrency: spans/s acknowledged (each ack
means durable), p50/p99 export latency, the server's peak RSS and its CPU time per
span (server and worker processes; unlike spans/s, not skewed by other load). At the end it
stops the server and counts the rows on disk: every acknowledged span must be there.

After that, on the data directory the server left and in the same run, it measures the engine
alone: the same spans as flat rows inserted in large blocks (the ceiling evalkit's rate is
compared with) and one export request inserted bare (what one exporter's latency is compared with).

    python bench/ingest.py [--spans 200000] [--concurrency 1,4,16] [--fsync] [--work-dir DIR]
                           [--grpc-port N --http-port N --api-port N] [--env EVALKIT_X=...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

TOKEN = "evk_bench_admin"
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
WORDS = ("weather", "paris", "tool", "answer", "agent", "model", "cache", "token", "price", "city", "rain")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kv(key: str, value: object) -> common_pb2.KeyValue:
    if isinstance(value, bool):
        return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(bool_value=value))
    if isinstance(value, int):
        return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(int_value=value))
    if isinstance(value, float):
        return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(double_value=value))
    return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(string_value=str(value)))


def text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def session_spans(rng: random.Random, session: str, count: int, now: int) -> list[trace_pb2.Span]:
    """A root agent span, then alternating chat and tool spans with ~1 KB payloads."""
    trace_id = rng.randbytes(16)
    root_id = rng.randbytes(8)
    spans = []
    start = now
    for i in range(count - 1):
        is_chat = i % 2 == 0
        attrs = [kv("gen_ai.conversation.id", session)] if i == 0 else []
        if is_chat:
            attrs += [
                kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
                kv("gen_ai.request.model", "gpt-4o"), kv("gen_ai.response.model", "gpt-4o-2024-08-06"),
                kv("gen_ai.usage.input_tokens", rng.randint(200, 4000)),
                kv("gen_ai.usage.output_tokens", rng.randint(10, 400)),
                kv("gen_ai.usage.cache_read.input_tokens", rng.randint(0, 200)),
                kv("gen_ai.request.temperature", 0.0),
                kv("gen_ai.input.messages", '[{"role":"user","parts":[{"type":"text","content":"'
                   + text(rng, 700) + '"}]}]'),
                kv("gen_ai.output.messages", '[{"role":"assistant","parts":[{"type":"text","content":"'
                   + text(rng, 250) + '"}]}]'),
                kv("openinference.span.kind", "LLM"), kv("llm.model_name", "gpt-4o"),
            ]
            name = "chat gpt-4o"
        else:
            attrs += [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "get_weather"),
                      kv("gen_ai.tool.call.id", f"call_{i}"), kv("gen_ai.tool.call.arguments", '{"city":"Paris"}'),
                      kv("gen_ai.tool.call.result", text(rng, 300))]
            name = "execute_tool get_weather"
        duration = rng.randint(1_000_000, 800_000_000)
        kind = trace_pb2.Span.SPAN_KIND_CLIENT if is_chat else trace_pb2.Span.SPAN_KIND_INTERNAL
        spans.append(trace_pb2.Span(trace_id=trace_id, span_id=rng.randbytes(8), parent_span_id=root_id, name=name,
                                    kind=kind, start_time_unix_nano=start, end_time_unix_nano=start + duration,
                                    attributes=attrs))
        start += duration
    spans.append(trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                                start_time_unix_nano=now, end_time_unix_nano=start + 1000,
                                attributes=[kv("gen_ai.operation.name", "invoke_agent"), kv("session.id", session)]))
    return spans


def build_requests(total: int, seed: int = 7, per_request: int = 512) -> list[bytes]:
    rng = random.Random(seed)
    now = time.time_ns()
    spans: list[trace_pb2.Span] = []
    session = 0
    while len(spans) < total:
        spans += session_spans(rng, f"bench-{seed}-{session}", rng.randint(20, 200), now)
        session += 1
    spans = spans[:total]
    resource = resource_pb2.Resource(attributes=[kv("service.name", "bench-agent")])
    requests = []
    for i in range(0, len(spans), per_request):
        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource, scope_spans=[trace_pb2.ScopeSpans(spans=spans[i:i + per_request])])])
        requests.append(request.SerializeToString())
    return requests


def api(port: int, method: str, path: str, body: bytes | None = None) -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                     headers={"Authorization": f"Bearer {TOKEN}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return bytes(response.read())


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_cpu_seconds(pid: int) -> float:
    """CPU time of the server and its worker processes so far (user + system, all threads)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid] + [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for each in pids:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / ticks
    return total


async def send_all(target: str, key: str, requests: list[bytes], concurrency: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    queue = list(requests)
    async with grpc.aio.insecure_channel(target, options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
        export = channel.unary_unary(EXPORT, request_serializer=lambda b: b, response_deserializer=lambda b: b)

        async def worker() -> None:
            while queue:
                body = queue.pop()
                started = time.perf_counter()
                while True:
                    try:
                        await export(body, metadata=(("authorization", f"Bearer {key}"),), timeout=60)
                        break
                    except grpc.aio.AioRpcError as exc:
                        if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
                            raise
                        await asyncio.sleep(0.2)  # retried: counted in this export's latency
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies


def engine_ceiling(store: object, requests: list[bytes], agent_id: str, repeat: int) -> tuple[float, float, float]:
    """What the engine alone does with the same spans, in the same run, on the data directory the
    server left: (flat spans/s, bare insert p50 s, the same with fsync on s).

    - ceiling: the spans as flat rows of a table like `spans` (same engine, order and partitions),
      pre-encoded as Native blocks of 20,000 rows, inserted two at a time (as the writer does);
    - bare insert: one export request framed as evalkit frames it, inserted alone into
      `span_exports` (through the view): the least an acknowledged export can cost; alternately
      with the tables' fsync off and on (EVALKIT_FSYNC), which is what fsync costs an export."""
    from concurrent.futures import ThreadPoolExecutor

    from evalkit.ingest import export_schema
    from evalkit.ingest.export_schema import Framing
    from evalkit.ingest.flatten import SPAN_COLUMNS
    from evalkit.ingest.native import NativeEncoder
    from evalkit.migrations import set_fsync
    from evalkit.store import Store

    assert isinstance(store, Store)
    store.command("CREATE TABLE IF NOT EXISTS ceiling_spans AS spans")
    store.command("TRUNCATE TABLE ceiling_spans")
    types = store.column_types("spans", SPAN_COLUMNS)
    encoder = NativeEncoder("ceiling_spans", SPAN_COLUMNS, types)
    rows = store.query(f"SELECT {', '.join(SPAN_COLUMNS)} FROM spans LIMIT 200000")
    blocks = [encoder.encode(rows[i:i + 20_000]) for i in range(0, len(rows), 20_000)]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda block: store.insert_raw("ceiling_spans", SPAN_COLUMNS, block, "Native"), blocks))
    ceiling = len(rows) / (time.perf_counter() - started)
    store.command("DROP TABLE ceiling_spans")

    schema = export_schema.write_schema_file(Path(tempfile.mkdtemp(prefix="evalkit-bench-schema-")))
    settings = export_schema.insert_settings(schema)
    # Interleaved, so that the machine's load drifting during the run falls on both alike.
    bare: dict[bool, list[float]] = {False: [], True: []}
    for i in range(repeat * 2):
        fsync = bool(i % 2)
        set_fsync(store, fsync)
        framed = Framing(agent_id, int(time.time() * 1000), "", 16 << 20, 1024).frame(requests[i % len(requests)])
        started = time.perf_counter()
        store.insert_raw("span_exports", export_schema.COLUMN_NAMES, framed, "Protobuf",
                         {**settings, "insert_deduplicate": 0})
        bare[fsync].append(time.perf_counter() - started)
    set_fsync(store, False)
    return ceiling, statistics.median(bare[False]), statistics.median(bare[True])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=200_000, help="spans per concurrency level")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--pid-file", help="write the server's pid here (for a profiler to attach)")
    parser.add_argument("--work-dir", type=Path, help="the server's data directory (default: a new temporary one)")
    parser.add_argument("--grpc-port", type=int, help="default: a free port")
    parser.add_argument("--http-port", type=int, help="OTLP/HTTP port; default: a free port")
    parser.add_argument("--api-port", type=int, help="default: a free port")
    parser.add_argument("--fsync", action="store_true", help="run the server with EVALKIT_FSYNC=1")
    parser.add_argument("--export-spans", type=int, default=512,
                        help="spans per export request (512: the OTel SDK batch processor's default)")
    parser.add_argument("--bare-repeat", type=int, default=15,
                        help="bare inserts measured each way (fsync off, on) after the run")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="more settings for the server (repeatable), e.g. EVALKIT_INGEST_WORKERS=2")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]

    data_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="evalkit-bench-ingest-"))
    grpc_port = args.grpc_port or free_port()
    http_port = args.http_port or free_port()
    api_port = args.api_port or free_port()
    env = {**os.environ, "EVALKIT_BOOTSTRAP_TOKEN": TOKEN, **dict(e.split("=", 1) for e in args.env)}
    if args.fsync:
        env["EVALKIT_FSYNC"] = "1"
    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(data_dir), "--grpc-port", str(grpc_port),
         "--otlp-http-port", str(http_port), "--api-port", str(api_port)], env=env,
        stdout=subprocess.DEVNULL)
    if args.pid_file:
        Path(args.pid_file).write_text(str(server.pid))
    acked = 0
    try:
        for _ in range(300):
            try:
                api(api_port, "GET", "/healthz")
                break
            except Exception:
                time.sleep(0.1)
        idle_rss = rss_mb(server.pid)
        api(api_port, "POST", "/api/workspaces", b'{"name":"bench"}')
        api(api_port, "POST", "/api/agents", b'{"name":"agent","workspace":"bench"}')
        import json

        key = json.loads(api(api_port, "POST", "/api/agents/agent@bench/keys", b"{}"))["key"]
        print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; {args.spans} spans per level, "
              f"{args.export_spans} spans per export, ~1.3 KB of attributes per span; "
              f"fsync {'on' if args.fsync else 'off'}"
              + (f"; {' '.join(args.env)}" if args.env else ""))
        print(f"server idle RSS: {idle_rss:.0f} MB")
        print(f"{'clients':>7} {'spans/s acked':>14} {'spans/s readable':>17} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'server peak RSS MB':>19} {'server CPU us/span':>19}")
        requests: list[bytes] = []
        for level_index, concurrency in enumerate(levels):
            requests = build_requests(args.spans, seed=level_index + 1, per_request=args.export_spans)
            cpu_before = server_cpu_seconds(server.pid)
            started = time.perf_counter()
            elapsed, latencies = asyncio.run(send_all(f"127.0.0.1:{grpc_port}", key, requests, concurrency))
            # Acknowledged means staged: "readable" is when every span is flattened into spans too.
            while staged_spans(api_port):
                time.sleep(0.02)
            readable = time.perf_counter() - started
            # CPU per span does not depend on what else the machine runs; spans/s does.
            cpu_per_span = (server_cpu_seconds(server.pid) - cpu_before) / args.spans * 1e6
            acked += args.spans
            latencies.sort()
            p50 = statistics.median(latencies) * 1000
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
            print(f"{concurrency:>7} {args.spans / elapsed:>14,.0f} {args.spans / readable:>17,.0f} {p50:>8.1f} "
                  f"{p99:>8.1f} {peak_rss_mb(server.pid):>19.0f} {cpu_per_span:>19.1f}")
        metrics = api(api_port, "GET", "/metrics").decode()
        for table, what in (("spans", "acknowledged inserts (group commit into span_staging)"),
                            ("flattened", "flattening inserts (span_staging -> spans)")):
            inserts = rows = seconds = 0.0
            for line in metrics.splitlines():
                if line.startswith(f'evalkit_ingest_batch_rows_count{{table="{table}"}}'):
                    inserts = float(line.split()[-1])
                elif line.startswith(f'evalkit_ingest_batch_rows_sum{{table="{table}"}}'):
                    rows = float(line.split()[-1])
                elif line.startswith(f'evalkit_ingest_insert_seconds_sum{{table="{table}"}}'):
                    seconds = float(line.split()[-1])
            if inserts:
                print(f"{what}: {inserts:,.0f} of {rows / inserts:,.0f} spans on average, "
                      f"{seconds / inserts * 1000:,.0f} ms each")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    # Durable: reopen the data directory after the server stopped and count what is there.
    from evalkit.store import Store

    store = Store(f"chdb://{data_dir / 'clickhouse'}")
    store.connect()
    stored = store.query("SELECT count() FROM spans FINAL")[0][0]
    print(f"after shutdown: {stored:,} spans on disk of {acked:,} acknowledged"
          + ("" if stored == acked else "  <-- MISMATCH"))
    ceiling, bare_p50, bare_fsync_p50 = engine_ceiling(store, requests, "agent@bench", repeat=args.bare_repeat)
    print(f"engine alone, same run: {ceiling:,.0f} spans/s as flat rows (20,000-row Native inserts, two at a "
          f"time); one export request inserted bare through the view: p50 {bare_p50 * 1000:.0f} ms, "
          f"{bare_fsync_p50 * 1000:.0f} ms with fsync ({args.bare_repeat} each, interleaved)")


def staged_spans(port: int) -> float:
    """Spans acknowledged and not yet flattened, from /metrics (0 for a server without staging)."""
    for line in api(port, "GET", "/metrics").decode().splitlines():
        if line.startswith("evalkit_ingest_staged_rows "):
            return float(line.split()[-1])
    return 0.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
