"""How long the UI's pages take to render their HTML, on ordinary and on large data.

    .venv/bin/python bench/ui.py [--repeat 15] [--steps 3000] [--runs 100000] [--browser]

One service in this process (embedded chDB in a temporary folder) gets a 3,000-span session through
the OTLP/HTTP receiver (bench/trajectory.py's shape: chat calls with tool calls, tool executions),
100 small sessions, and two synthetic experiments written in bulk to the tables (bench/scoring.py's
shape: 100 runs, and --runs runs, 5 repetitions, three evaluators). A logged-in client (the login form,
then the session cookie) times GET of each page: wall-clock ms from request to the last byte, p50 and
max over --repeat, and the HTML's size. "cold" empties the service's caches (built trajectories, experiment
records) before each request. With --browser, Debian's Chromium (Playwright) also loads the big pages and
reports the time to the load event, which is what a user waits for.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import importlib.util
import json
import re
import shutil
import statistics
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def _bench_module(name: str) -> ModuleType:
    # bench/trajectory.py and bench/scoring.py would shadow the packages of the same name on import.
    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def login(api: str, token: str, jar: http.cookiejar.CookieJar) -> urllib.request.OpenerDirector:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(api + "/login").read().decode()
    match = re.search(r'name="csrf" value="([^"]+)"', form)
    assert match is not None
    opener.open(api + "/login", data=urllib.parse.urlencode({"csrf": match.group(1), "token": token,
                                                             "next": "/"}).encode()).read()
    return opener


def timed(opener: urllib.request.OpenerDirector, url: str, repeat: int, before: Callable[[], Any] | None
          ) -> tuple[list[float], list[float], int]:
    """Wall and CPU ms per request. CPU is this process's (server threads and client): on a shared, loaded
    machine it moves far less than wall time."""
    times, cpu, size = [], [], 0
    for _ in range(repeat):
        if before is not None:
            before()
        t0, c0 = time.perf_counter(), time.process_time()
        with opener.open(url) as response:
            body = response.read()
            assert response.status == 200, (url, response.status)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        size = len(body)
    return times, cpu, size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--steps", type=int, default=3000, help="spans of the big session")
    parser.add_argument("--runs", type=int, default=100_000, help="runs of the big experiment")
    parser.add_argument("--browser", action="store_true", help="also load the big pages in Chromium")
    parser.add_argument("--only", default="", help="time only the pages whose label contains this")
    traj = _bench_module("trajectory")
    traj.add_service_flags(parser)
    args = parser.parse_args()
    scoring = _bench_module("scoring")
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.resource.v1 import resource_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2

    settings = traj.bench_settings(args, prefix="evalkit-bench-ui-")
    data_dir = settings.data_dir
    server = traj.InThread(settings)
    try:
        api = f"http://127.0.0.1:{server.service.api_port}"
        otlp = f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces"
        traj.post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), traj.TOKEN)
        traj.post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), traj.TOKEN)
        key = json.loads(traj.post(api + "/api/agents/bot@bench/keys", b"{}", traj.TOKEN)[1])["key"]

        def send(spans: list[Any]) -> None:
            for chunk in range(0, len(spans), 500):
                request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
                    resource=resource_pb2.Resource(attributes=[traj.kv("service.name", "bench")]),
                    scope_spans=[trace_pb2.ScopeSpans(spans=spans[chunk:chunk + 500])])])
                traj.post(otlp, request.SerializeToString(), key, "application/x-protobuf")

        send(traj.session_spans(1, "big", args.steps))
        send([s for i in range(100) for s in traj.session_spans(10 + i, f"small-{i:03d}", 9)])
        service = server.service.context.extras["scoring"]
        store = server.service.store
        t0 = time.perf_counter()
        small = scoring._store_experiment(store, service, 900_001, scoring.synthetic(100, 5, 0.0, 1, "s"), 5)
        big = scoring._store_experiment(store, service, 900_002, scoring.synthetic(args.runs, 5, 0.03, 2, "c"), 5)
        base = scoring._store_experiment(store, service, 900_003, scoring.synthetic(args.runs, 5, 0.0, 3, "b"), 5)
        print(f"loaded: {args.steps}-span session, 100 sessions of 9 spans, experiments of 100 and 2 x {args.runs} "
              f"runs ({time.perf_counter() - t0:.1f}s to write the experiments)")

        jar = http.cookiejar.CookieJar()
        opener = login(api, traj.TOKEN, jar)
        cache = server.service.context.extras["trajectory_cache"]

        def cold_all() -> None:
            cache.clear()
            service.records_cache.clear()

        big_steps = args.steps - 1
        pages = [
            ("home", "/", None),
            ("sessions list (50 of 101)", "/agents/bot@bench/sessions", None),
            ("experiments list", "/experiments", None),
            ("trajectory, 9 spans", "/agents/bot@bench/sessions/small-000", None),
            (f"trajectory, {args.steps} spans, steps 1-100, cold", "/agents/bot@bench/sessions/big", cache.clear),
            (f"trajectory, {args.steps} spans, steps 1-100, warm", "/agents/bot@bench/sessions/big", None),
            (f"trajectory, {args.steps} spans, last steps, warm",
             f"/agents/bot@bench/sessions/big?page={-(-big_steps // 100)}", None),
            (f"raw spans, {args.steps} spans, 200 of them", "/agents/bot@bench/sessions/big?tab=spans", None),
            ("experiment, 100 runs, cold", f"/experiments/{small.experiment_id}", cold_all),
            ("experiment, 100 runs, warm", f"/experiments/{small.experiment_id}", None),
            (f"experiment, {args.runs} runs, cold", f"/experiments/{big.experiment_id}", cold_all),
            (f"experiment, {args.runs} runs, warm", f"/experiments/{big.experiment_id}", None),
            (f"experiment, {args.runs} runs, matrix page 200, warm",
             f"/experiments/{big.experiment_id}?page=200", None),
            (f"compare, {args.runs} vs {args.runs} runs, cold",
             f"/experiments/{big.experiment_id}/compare?baseline={base.experiment_id}", cold_all),
            (f"compare, {args.runs} vs {args.runs} runs, warm",
             f"/experiments/{big.experiment_id}/compare?baseline={base.experiment_id}", None),
        ]
        print(f"{'page':<52} {'p50 ms':>9} {'max ms':>9} {'cpu p50':>9} {'HTML KB':>9}")
        for label, path, before in [p for p in pages if args.only in p[0]]:
            opener.open(api + path).read()  # warm-up (and a check that the page answers)
            repeat = max(3, args.repeat // 3) if before is cold_all and "compare" in label else args.repeat
            times, cpu, size = timed(opener, api + path, repeat, before)
            print(f"{label:<52} {statistics.median(times):>9.1f} {max(times):>9.1f} {statistics.median(cpu):>9.1f} "
                  f"{size / 1024:>9.1f}")

        if args.browser:
            from playwright.sync_api import sync_playwright

            cookies = [{"name": c.name, "value": c.value or "", "url": api} for c in jar]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync"])
                context = browser.new_context()
                context.add_cookies(cookies)  # type: ignore[arg-type]
                page = context.new_page()
                for label, path in (("trajectory, big session", "/agents/bot@bench/sessions/big"),
                                    (f"experiment, {args.runs} runs", f"/experiments/{big.experiment_id}"),
                                    ("compare", f"/experiments/{big.experiment_id}/compare"
                                                f"?baseline={base.experiment_id}")):
                    loads = []
                    for _ in range(5):
                        t0 = time.perf_counter()
                        page.goto(api + path, wait_until="load")
                        loads.append((time.perf_counter() - t0) * 1000)
                    print(f"browser load event, {label:<40} p50 {statistics.median(loads):7.1f} ms  "
                          f"max {max(loads):7.1f} ms")
                browser.close()
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
