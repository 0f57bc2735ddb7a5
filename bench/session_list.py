"""Time a page of an agent's session list as the agent's spans grow.

Starts a Service in this process (embedded chDB in a work directory), loads `--sessions` sessions of
`--spans` spans each through the OTLP/HTTP receiver (a root naming the session, chat calls with
usage, one failing tool call per tenth session), then times pages of
`GET /api/agents/{agent}/sessions`: the first page and a deep one by last seen (chosen from the
session index, so a page reads only its own sessions' spans), and the sorts and filters that still
read every span (span count, errors, cost).

    .venv/bin/python bench/session_list.py [--sessions 20000] [--spans 50] [--repeat 10] [--work-dir DIR]

Prints p50/max per query and how long loading took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

sys.path.insert(0, str(Path(__file__).parent))
from evalkit.settings import Settings
from trajectory import BASE_NS, TOKEN, InThread, get, kv, post  # bench/trajectory.py, beside this file


def session(trace: int, spans: int) -> list[trace_pb2.Span]:
    trace_id = trace.to_bytes(16, "big")
    root_id = (trace * 1000).to_bytes(8, "big")
    start = BASE_NS + trace * 10**9
    out = [trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                          start_time_unix_nano=start, end_time_unix_nano=start + spans * 10**7,
                          attributes=[kv("session.id", f"s-{trace}"), kv("gen_ai.operation.name", "invoke_agent")])]
    for i in range(1, spans):
        t = start + i * 10**7
        failing = trace % 10 == 0 and i == 2
        attributes = ([kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search")] if failing
                      else [kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o-mini"),
                            kv("gen_ai.provider.name", "openai"), kv("gen_ai.usage.input_tokens", 500 + i),
                            kv("gen_ai.usage.output_tokens", 20)])
        status = trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR if failing else 0)
        out.append(trace_pb2.Span(trace_id=trace_id, span_id=(trace * 1000 + i).to_bytes(8, "big"),
                                  parent_span_id=root_id, name="chat" if not failing else "execute_tool search",
                                  start_time_unix_nano=t, end_time_unix_nano=t + 5 * 10**6,
                                  attributes=attributes, status=status))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--spans", type=int, default=50, help="spans per session")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--api-port", type=int, default=0)
    parser.add_argument("--otlp-http-port", type=int, default=0)
    args = parser.parse_args()
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="evalkit-bench-", dir=args.work_dir))
    settings = Settings(data_dir=data_dir, grpc_port=0, otlp_http_port=args.otlp_http_port, api_port=args.api_port,
                        bootstrap_token=TOKEN, settle_quiet_seconds=0.0)
    server = InThread(settings)
    api = f"http://127.0.0.1:{server.service.api_port}"
    otlp = f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces"
    post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), TOKEN)
    post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), TOKEN)
    key = json.loads(post(api + "/api/agents/bot@bench/keys", json.dumps({"scopes": ["ingest", "read"]}).encode(),
                          TOKEN)[1])["key"]
    started = time.perf_counter()
    per_request = max(1, 10_000 // args.spans)
    for first in range(1, args.sessions + 1, per_request):
        spans = [s for trace in range(first, min(first + per_request, args.sessions + 1))
                 for s in session(trace, args.spans)]
        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource_pb2.Resource(attributes=[kv("service.name", "bench")]),
            scope_spans=[trace_pb2.ScopeSpans(spans=spans)])])
        post(otlp, request.SerializeToString(), key, "application/x-protobuf")
    total = args.sessions * args.spans
    print(f"evalkit session list bench: {args.sessions:,} sessions × {args.spans} spans = {total:,} spans, "
          f"loaded in {time.perf_counter() - started:.1f}s; store {settings.store_url}")
    base = f"{api}/api/agents/bot@bench/sessions"
    queries = {
        "first page, last seen": "?limit=50",
        "page 100, last seen": f"?limit=50&offset={min(50 * 99, max(0, args.sessions - 50))}",
        "first page, first seen": "?limit=50&sort=first_seen",
        "first page, most spans (scans)": "?limit=50&sort=spans",
        "first page, errors only (scans)": "?limit=50&errors=true",
        "first page, by cost (scans, prices all)": "?limit=50&sort=cost",
    }
    for label, query in queries.items():
        body = json.loads(get(base + query))
        assert len(body["sessions"]) > 0, body
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            get(base + query)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"{label:<42} p50 {statistics.median(times):8.1f} ms  max {max(times):8.1f} ms")
    server.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
