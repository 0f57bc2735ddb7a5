"""Where `evalkit serve`'s memory goes, idle and after the first reads.

Starts `evalkit serve` in a subprocess on a fresh data directory, waits for /healthz, then reads
the server's memory 10 s later (idle), after one trajectory read (a 200-span session sent over
OTLP/HTTP first), and after one UI page (the session list, logged in with the admin token).
Each reading, from /proc/PID/smaps:

* RSS: what `ps` and the bench's "peak RSS" count: anonymous pages plus the file pages mapped.
* anon: anonymous memory (heaps, stacks, the engine's allocations): what only this process can free.
* file: file-backed pages mapped, mostly chDB's 555 MB library (`chdb code`: the part of it
  resident); clean pages the kernel can drop and re-read, shared with the page cache.
* USS / PSS: private pages (what stopping the process gives back) / proportional share.
* threads, and the engine's own accounting (`MemoryTracking`, from /metrics).

    python bench/memory.py [--work-dir DIR] [--grpc-port N --http-port N --api-port N]
                           [--env EVALKIT_X=...] [--idle-seconds 10]
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

TOKEN = "evk_bench_memory_admin"
BASE_NS = 1_760_000_000_000_000_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory(pid: int) -> dict[str, float]:
    """MB figures of one process from /proc (see the module docstring)."""
    totals = {"Rss": 0, "Pss": 0, "Anonymous": 0, "Private_Clean": 0, "Private_Dirty": 0}
    chdb_code = 0
    path = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if not parts[0].endswith(":"):  # a mapping's header: range perms offset dev inode [path]
            path = parts[5] if len(parts) > 5 else ""
            continue
        key = parts[0][:-1]
        if key in totals:
            totals[key] += int(parts[1])
        if key == "Rss" and path.endswith("_chdb.abi3.so"):
            chdb_code += int(parts[1])
    threads = len(os.listdir(f"/proc/{pid}/task"))
    return {"rss": totals["Rss"] / 1024, "anon": totals["Anonymous"] / 1024,
            "file": (totals["Rss"] - totals["Anonymous"]) / 1024, "chdb_code": chdb_code / 1024,
            "uss": (totals["Private_Clean"] + totals["Private_Dirty"]) / 1024, "pss": totals["Pss"] / 1024,
            "peak": peak_rss_mb(pid), "threads": threads}


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def engine_tracked_mb(api_port: int) -> float:
    text = call(api_port, "GET", "/metrics").decode()
    match = re.search(r"^evalkit_engine_memory_tracked_bytes (\S+)$", text, re.M)
    return float(match.group(1)) / 2**20 if match else float("nan")


def call(port: int, method: str, path: str, body: bytes | None = None,
         content_type: str = "application/json", token: str = TOKEN) -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=60) as response:
        return bytes(response.read())


def session_export(spans: int) -> bytes:
    """One session: a root agent span and alternating chat and tool spans with ~1 KB messages."""
    trace_id = (7).to_bytes(16, "big")
    root_id = (7_000_000).to_bytes(8, "big")

    def kv(key: str, value: object) -> common_pb2.KeyValue:
        if isinstance(value, int):
            return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(int_value=value))
        return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(string_value=str(value)))

    filler = "lorem ipsum dolor sit amet " * 36
    out = [trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                          start_time_unix_nano=BASE_NS, end_time_unix_nano=BASE_NS + spans * 10**9,
                          attributes=[kv("session.id", "memory-bench"), kv("gen_ai.operation.name", "invoke_agent"),
                                      kv("gen_ai.agent.name", "bench")])]
    for i in range(1, spans):
        start = BASE_NS + i * 10**9
        if i % 2:
            messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"step {i}: {filler}"}]}])
            attrs = [kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o-mini"),
                     kv("gen_ai.provider.name", "openai"), kv("gen_ai.usage.input_tokens", 900),
                     kv("gen_ai.usage.output_tokens", 40), kv("gen_ai.input.messages", messages)]
            name = "chat gpt-4o-mini"
        else:
            attrs = [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search"),
                     kv("gen_ai.tool.call.result", f"result {i}: {filler}")]
            name = "execute_tool search"
        out.append(trace_pb2.Span(trace_id=trace_id, span_id=(7_000_000 + i).to_bytes(8, "big"),
                                  parent_span_id=root_id, name=name, start_time_unix_nano=start,
                                  end_time_unix_nano=start + 5 * 10**8, attributes=attrs))
    request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=[kv("service.name", "bench")]),
        scope_spans=[trace_pb2.ScopeSpans(spans=out)])])
    return request.SerializeToString()


def ui_page(api_port: int, path: str) -> None:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    base = f"http://127.0.0.1:{api_port}"
    form = opener.open(base + "/login").read().decode()
    match = re.search(r'name="csrf" value="([^"]+)"', form)
    assert match, "no csrf field on the login form"
    opener.open(base + "/login", data=urllib.parse.urlencode({"csrf": match.group(1), "token": TOKEN,
                                                                "next": path}).encode()).read()
    opener.open(base + path).read()


def show(label: str, m: dict[str, float], tracked: float) -> None:
    print(f"{label:<26} {m['rss']:>6.0f} {m['anon']:>6.0f} {m['file']:>6.0f} {m['chdb_code']:>9.0f} "
          f"{m['uss']:>6.0f} {m['pss']:>6.0f} {m['peak']:>6.0f} {m['threads']:>7.0f} {tracked:>15.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", type=Path, help="the server's data directory (default: a new temporary one)")
    parser.add_argument("--grpc-port", type=int, help="default: a free port")
    parser.add_argument("--http-port", type=int, help="OTLP/HTTP port; default: a free port")
    parser.add_argument("--api-port", type=int, help="default: a free port")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="wait after /healthz before reading")
    parser.add_argument("--spans", type=int, default=200, help="spans of the session read back")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="more settings for the server (repeatable)")
    args = parser.parse_args()
    data_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="evalkit-bench-memory-"))
    ports = [args.grpc_port or free_port(), args.http_port or free_port(), args.api_port or free_port()]
    env = {**os.environ, "EVALKIT_BOOTSTRAP_TOKEN": TOKEN, **dict(e.split("=", 1) for e in args.env)}
    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(data_dir), "--grpc-port", str(ports[0]),
         "--otlp-http-port", str(ports[1]), "--api-port", str(ports[2])], env=env, stdout=subprocess.DEVNULL)
    api_port = ports[2]
    try:
        for _ in range(600):
            try:
                call(api_port, "GET", "/healthz")
                break
            except Exception:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not become healthy in 60 s")
        print(f"evalkit serve, fresh data directory; MB from /proc/{server.pid}/smaps"
              + (f"; {' '.join(args.env)}" if args.env else ""))
        print(f"{'reading':<26} {'RSS':>6} {'anon':>6} {'file':>6} {'chdb code':>9} {'USS':>6} {'PSS':>6} "
              f"{'peak':>6} {'threads':>7} {'engine tracked':>15}")
        show("at /healthz", memory(server.pid), engine_tracked_mb(api_port))
        time.sleep(args.idle_seconds)
        show(f"idle, {args.idle_seconds:.0f} s later", memory(server.pid), engine_tracked_mb(api_port))
        call(api_port, "POST", "/api/workspaces", b'{"name":"bench"}')
        call(api_port, "POST", "/api/agents", b'{"name":"agent","workspace":"bench"}')
        key = json.loads(call(api_port, "POST", "/api/agents/agent@bench/keys", b"{}"))["key"]
        call(ports[1], "POST", "/v1/traces", session_export(args.spans), "application/x-protobuf", token=key)
        call(api_port, "GET", "/api/agents/agent@bench/sessions/memory-bench/trajectory")
        show(f"after a trajectory ({args.spans})", memory(server.pid), engine_tracked_mb(api_port))
        ui_page(api_port, "/agents/agent@bench/sessions")
        show("after a UI page", memory(server.pid), engine_tracked_mb(api_port))
        time.sleep(args.idle_seconds)
        show(f"idle again, {args.idle_seconds:.0f} s later", memory(server.pid), engine_tracked_mb(api_port))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)


if __name__ == "__main__":
    main()
