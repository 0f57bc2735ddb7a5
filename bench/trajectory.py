"""Time to a trajectory over HTTP for sessions of 100, 1,000 and 3,000 spans.

Starts a Service in this process (its own event loop in a thread, embedded chDB in a
temporary directory), loads one session per size through the OTLP/HTTP receiver
(realistic GenAI chat and tool spans with ~1 KB message payloads), then times
`GET /api/agents/{agent}/sessions/{id}/trajectory` from the main thread.

    /work/venv/bin/python bench/trajectory.py [--repeat 30] [--sizes 100,1000,3000] [--profile 3000] [--history 100]

`--history N` loads agent loops instead: every chat call re-sends the task and the last N messages
of the conversation, as agents do (the default session sends one new message per call).

Prints p50/p99 per size, wall time and the process's CPU time per request (server, embedded
chDB and client share the process, so CPU time is what one request costs whatever else the
machine is running), and the process's peak RSS. Twice per size: `cold`, the service's cache of
settled sessions' documents cleared before each request (a session's first request: read, build,
price, validate, serialise), and `warm`, served from that cache (settle check and serialisation).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import resource
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.serve import Service
from evalkit.settings import Settings

TOKEN = "evk_bench_admin_token"
BASE_NS = 1_760_000_000_000_000_000


def kv(key: str, value: Any) -> common_pb2.KeyValue:
    if isinstance(value, int):
        return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(int_value=value))
    return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(string_value=str(value)))


def session_spans(trace: int, session: str, count: int) -> list[trace_pb2.Span]:
    """A root, then alternating chat calls (each with a tool call) and tool executions."""
    trace_id = trace.to_bytes(16, "big")
    root_id = (trace * 1_000_000).to_bytes(8, "big")
    filler = "lorem ipsum dolor sit amet " * 36  # ~1 KB of message text
    spans = [trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                            start_time_unix_nano=BASE_NS, end_time_unix_nano=BASE_NS + count * 10**9,
                            attributes=[kv("session.id", session), kv("gen_ai.operation.name", "invoke_agent"),
                                        kv("gen_ai.agent.name", "bench"),
                                        kv("gen_ai.system_instructions",
                                           json.dumps([{"type": "text", "content": "You are a bench agent."}]))])]
    for i in range(1, count):
        start = BASE_NS + i * 10**9
        span_id = (trace * 1_000_000 + i).to_bytes(8, "big")
        call_id = f"call_{(i - 1) // 2}"
        if i % 2:
            inputs = [{"role": "user", "parts": [{"type": "text", "content": f"step {i}: {filler}"}]}]
            outputs = [{"role": "assistant", "finish_reason": "tool_call", "parts": [
                {"type": "text", "content": f"thinking about {i}"},
                {"type": "tool_call", "id": call_id, "name": "search", "arguments": {"q": f"query {i}"}}]}]
            attributes = [kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
                          kv("gen_ai.request.model", "gpt-4o-mini"), kv("gen_ai.response.model", "gpt-4o-mini"),
                          kv("gen_ai.usage.input_tokens", 900 + i), kv("gen_ai.usage.output_tokens", 40),
                          kv("gen_ai.input.messages", json.dumps(inputs)),
                          kv("gen_ai.output.messages", json.dumps(outputs))]
            name = "chat gpt-4o-mini"
        else:
            attributes = [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search"),
                          kv("gen_ai.tool.call.id", call_id),
                          kv("gen_ai.tool.call.arguments", json.dumps({"q": f"query {i - 1}"})),
                          kv("gen_ai.tool.call.result", f"result {i}: {filler}")]
            name = "execute_tool search"
        spans.append(trace_pb2.Span(trace_id=trace_id, span_id=span_id, parent_span_id=root_id, name=name,
                                    start_time_unix_nano=start, end_time_unix_nano=start + 5 * 10**8,
                                    attributes=attributes))
    return spans


def agent_loop_spans(trace: int, session: str, count: int, history: int) -> list[trace_pb2.Span]:
    """An agent loop as agents send it: every chat call re-sends the task and the last `history`
    messages of the conversation (assistant tool calls and tool results), then runs the tool it asked for."""
    trace_id = trace.to_bytes(16, "big")
    root_id = (trace * 1_000_000).to_bytes(8, "big")
    filler = "lorem ipsum dolor sit amet " * 36
    task = {"role": "user", "parts": [{"type": "text", "content": f"the task: {filler}"}]}
    spans = [trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                            start_time_unix_nano=BASE_NS, end_time_unix_nano=BASE_NS + count * 10**9,
                            attributes=[kv("session.id", session), kv("gen_ai.operation.name", "invoke_agent"),
                                        kv("gen_ai.agent.name", "bench")])]
    conversation: list[dict[str, Any]] = []
    for i in range(1, count):
        start = BASE_NS + i * 10**9
        span_id = (trace * 1_000_000 + i).to_bytes(8, "big")
        call_id = f"call_{(i - 1) // 2}"
        if i % 2:
            inputs = [task, *conversation[-history:]] if history else [task]
            output = {"role": "assistant", "parts": [
                {"type": "text", "content": f"thinking about {i}"},
                {"type": "tool_call", "id": call_id, "name": "search", "arguments": {"q": f"query {i}"}}]}
            conversation.append(output)
            attributes = [kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
                          kv("gen_ai.request.model", "gpt-4o-mini"), kv("gen_ai.response.model", "gpt-4o-mini"),
                          kv("gen_ai.usage.input_tokens", 900 * (len(inputs) + 1)),
                          kv("gen_ai.usage.output_tokens", 40),
                          kv("gen_ai.input.messages", json.dumps(inputs)),
                          kv("gen_ai.output.messages", json.dumps([{**output, "finish_reason": "tool_call"}]))]
            name = "chat gpt-4o-mini"
        else:
            result = f"result {i}: {filler}"
            conversation.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": call_id, "response": result}]})
            attributes = [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search"),
                          kv("gen_ai.tool.call.id", call_id),
                          kv("gen_ai.tool.call.arguments", json.dumps({"q": f"query {i - 1}"})),
                          kv("gen_ai.tool.call.result", result)]
            name = "execute_tool search"
        spans.append(trace_pb2.Span(trace_id=trace_id, span_id=span_id, parent_span_id=root_id, name=name,
                                    start_time_unix_nano=start, end_time_unix_nano=start + 5 * 10**8,
                                    attributes=attributes))
    return spans


def post(url: str, body: bytes, token: str, content_type: str = "application/json",
         method: str = "POST") -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Content-Type", content_type)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, response.read()


def get(url: str) -> bytes:
    request = urllib.request.Request(url)
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


class InThread:
    """The service on its own event loop, so the bench's blocking calls cannot stall it."""

    def __init__(self, settings: Settings) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.service = Service(settings, say=lambda _line: None)
        self.run(self.service.start())
        self.run(self.service.wait_ready(120))

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.run(self.service.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


def add_service_flags(parser: argparse.ArgumentParser) -> None:
    """The flags every bench that starts a service takes: where it keeps its data, which ports it listens on."""
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="where the service keeps its data (a new temporary folder, removed after, by default)")
    parser.add_argument("--api-port", type=int, default=0, help="0: any free port")
    parser.add_argument("--otlp-http-port", type=int, default=0, help="0: any free port")
    parser.add_argument("--grpc-port", type=int, default=0, help="0: any free port")


def bench_settings(args: argparse.Namespace | None, prefix: str = "evalkit-bench-") -> Settings:
    """A bench service's settings from `add_service_flags`' flags (None: any free ports, a temporary folder);
    its data directory is a new folder under `--work-dir`, which the caller removes."""
    work_dir = getattr(args, "work_dir", None)
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=work_dir))
    return Settings(data_dir=data_dir, grpc_port=getattr(args, "grpc_port", 0),
                    otlp_http_port=getattr(args, "otlp_http_port", 0), api_port=getattr(args, "api_port", 0),
                    bootstrap_token=TOKEN, settle_quiet_seconds=0.0, batch_max_delay_ms=5)


def serve_one_session(size: int, history: int, args: argparse.Namespace | None = None) -> tuple[InThread, Path]:
    """A service in this process holding one bench session `s` of agent `bot@bench` (`size` spans,
    an agent loop re-sending `history` messages when not 0), loaded through OTLP/HTTP; returns the
    server and its data directory (the caller stops the one and removes the other). `args`: the
    `add_service_flags` flags."""
    settings = bench_settings(args)
    data_dir = settings.data_dir
    server = InThread(settings)
    api = f"http://127.0.0.1:{server.service.api_port}"
    post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), TOKEN)
    post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), TOKEN)
    key = json.loads(post(api + "/api/agents/bot@bench/keys", b"{}", TOKEN)[1])["key"]
    spans = agent_loop_spans(1, "s", size, history) if history else session_spans(1, "s", size)
    for chunk in range(0, len(spans), 50):
        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource_pb2.Resource(attributes=[kv("service.name", "bench")]),
            scope_spans=[trace_pb2.ScopeSpans(spans=spans[chunk:chunk + 50])])])
        post(f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces",
             request.SerializeToString(), key, "application/x-protobuf")
    return server, data_dir


def profile_in_process(service: Service, session_id: str, repeat: int) -> None:
    """cProfile what the trajectory route runs, called on this thread.

    The route works on worker threads of the service's loop, which a profiler enabled on the
    bench's thread never sees; so this calls the same functions (read, settle, build, price,
    validate, serialise) here, with the service's store and price book.
    """
    from evalkit.trajectory.assemble import assemble
    from evalkit.trajectory.routes import _dumps, load_prices

    prices = load_prices(service.context)  # as the route's app has it
    profiler = cProfile.Profile()
    cpu = []
    for _ in range(repeat):
        c0 = time.process_time()
        profiler.enable()
        assembled = assemble(service.store, "bot@bench", "bot", session_id, now=time.time(), quiet_period=0.0,
                             overrides=None, prices=prices)
        _dumps(assembled.document())
        profiler.disable()
        cpu.append((time.process_time() - c0) * 1000)
    print(f"in-process (profiled) cpu p50 {statistics.median(cpu):.1f} ms")
    dump = Path(tempfile.gettempdir()) / f"evalkit-trajectory-{session_id}.prof"
    profiler.dump_stats(dump)
    print(f"profile written to {dump} (python -m pstats {dump})")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_callees("assemble")
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


def parts_in_process(service: Service, session_id: str, repeat: int) -> None:
    """The CPU time of each part of what the trajectory route runs (read, settle, build, price, validate,
    encode), called on this thread as `profile_in_process` calls it, without a profiler's overhead:
    this thread's CPU time (`time.thread_time`), which a shared host's other work inflates less than
    wall time. The build runs with the cycle collector paused, as in the route."""
    import evalkit.trajectory.assemble as assemble_module
    from evalkit.trajectory.routes import _dumps, load_prices

    prices = load_prices(service.context)
    spent: dict[str, float] = {}
    parts = ("session_window", "read_spans_to_map_settling", "build_trajectory", "apply_costs", "validate_trajectory")
    originals = {name: getattr(assemble_module, name) for name in parts}

    def timed(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - started
        return call

    figures: dict[str, list[float]] = {name: [] for name in (*parts, "encode", "in all")}
    for name, function in originals.items():
        setattr(assemble_module, name, timed(name, function))
    try:
        for _ in range(repeat):
            spent.clear()
            started = time.thread_time()
            assembled = assemble_module.assemble(service.store, "bot@bench", "bot", session_id, now=time.time(),
                                                 quiet_period=0.0, overrides=None, prices=prices)
            encoding = time.thread_time()
            _dumps(assembled.document())
            spent["encode"] = time.thread_time() - encoding
            spent["in all"] = time.thread_time() - started
            for name in figures:
                figures[name].append(spent.get(name, 0.0) * 1000)
    finally:
        for name, function in originals.items():
            setattr(assemble_module, name, function)
    print(f"in-process parts, thread CPU p50 of {repeat}: "
          + ", ".join(f"{name} {statistics.median(values):.1f} ms" for name, values in figures.items()))


def curl_ms(url: str) -> tuple[float, int]:
    """Wall time of one GET by curl (another process) and the bytes it read."""
    written = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total} %{size_download}",
                              "-H", f"Authorization: Bearer {TOKEN}", url],
                             capture_output=True, text=True, check=True).stdout.split()
    return float(written[0]) * 1000, int(written[1])


def external_client(trajectory_url: str, cache: Any, repeat: int, size: int) -> str:
    """The cold trajectory and the session's spans as a client in another process sees them: the bench's
    own client reads in this process, competing with the server for the interpreter (~280 ms of
    reading the 103 MB of a --history 100 session's spans)."""
    session_url = trajectory_url.removesuffix("/trajectory")
    cold, spans = [], []
    for _ in range(max(3, repeat // 2)):
        cache.clear()
        cold.append(curl_ms(trajectory_url))
        spans.append(curl_ms(session_url))
    return (f"{size:>6} spans by curl: cold trajectory p50 {statistics.median(t for t, _ in cold):7.1f} ms "
            f"({cold[0][1] / 1e6:.1f} MB) | session spans+summary p50 {statistics.median(t for t, _ in spans):7.1f} ms "
            f"({spans[0][1] / 1e6:.1f} MB), alternating")


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,3000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--profile", type=int, default=0, help="cProfile the server for this size")
    parser.add_argument("--parts", action="store_true",
                        help="also time each part of the cold trajectory in process (read, build, price, ...)")
    parser.add_argument("--history", type=int, default=0,
                        help="an agent loop whose every call re-sends the task and the last N messages")
    add_service_flags(parser)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    settings = bench_settings(args)
    data_dir = settings.data_dir
    server = InThread(settings)
    api = f"http://127.0.0.1:{server.service.api_port}"
    otlp = f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces"
    post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), TOKEN)
    post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), TOKEN)
    key = json.loads(post(api + "/api/agents/bot@bench/keys", b"{}", TOKEN)[1])["key"]
    shape = f"agent loop re-sending {args.history} messages" if args.history else "one new message per call"
    print(f"evalkit trajectory bench: repeat {args.repeat}, quiet period 0, {shape}, store {settings.store_url}")
    for trace, size in enumerate(sizes, start=1):
        if args.history:
            spans = agent_loop_spans(trace, f"bench-{size}", size, args.history)
        else:
            spans = session_spans(trace, f"bench-{size}", size)
        started = time.perf_counter()
        chunk_size = 50 if args.history else 500  # requests stay well under the 64 MB limit
        for chunk in range(0, len(spans), chunk_size):
            request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
                resource=resource_pb2.Resource(attributes=[kv("service.name", "bench")]),
                scope_spans=[trace_pb2.ScopeSpans(spans=spans[chunk:chunk + chunk_size])])])
            post(otlp, request.SerializeToString(), key, "application/x-protobuf")
        loaded = time.perf_counter() - started
        url = f"{api}/api/agents/bot@bench/sessions/bench-{size}/trajectory"
        document = json.loads(get(url))  # warm-up, and a check of what is timed
        assert document["extra"]["status"] == "valid", document["extra"]
        steps = len(document["steps"])
        if args.profile == size:
            profile_in_process(server.service, f"bench-{size}", args.repeat)
        if args.parts:
            parts_in_process(server.service, f"bench-{size}", args.repeat)
        cache = server.service.context.extras["trajectory_cache"]
        for label, cold in (("cold", True), ("warm", False)):
            times: list[float] = []
            cpu: list[float] = []
            for _ in range(args.repeat):
                if cold:
                    cache.clear()  # every cold request builds the document, as a session's first one does
                t0, c0 = time.perf_counter(), time.process_time()
                get(url)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
            print(f"{size:>6} spans ({steps} steps, loaded in {loaded:.2f}s) {label}: "
                  f"wall p50 {statistics.median(times):7.1f} ms  p99 {p99(times):7.1f} ms  max {max(times):7.1f} ms"
                  f" | cpu p50 {statistics.median(cpu):7.1f} ms  p99 {p99(cpu):7.1f} ms")
        # The raw spans and their summary (GET /sessions/{id}); the goal: no slower than a cold trajectory.
        times, cpu = [], []
        get(f"{api}/api/agents/bot@bench/sessions/bench-{size}")  # warm-up: its first query plans
        for _ in range(max(1, args.repeat // 3)):
            t0, c0 = time.perf_counter(), time.process_time()
            get(f"{api}/api/agents/bot@bench/sessions/bench-{size}")
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        print(f"{size:>6} spans session spans+summary: wall p50 {statistics.median(times):7.1f} ms  "
              f"max {max(times):7.1f} ms | cpu p50 {statistics.median(cpu):7.1f} ms  p99 {p99(cpu):7.1f} ms")
        if shutil.which("curl"):
            print(external_client(url, cache, args.repeat, size))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS (server + bench client, one process): {peak_mb:.0f} MB")
    server.stop()
    shutil.rmtree(data_dir, ignore_errors=True)  # a few hundred MB of chDB store per run otherwise


if __name__ == "__main__":
    main()
