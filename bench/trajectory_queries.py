"""CPU and wall time of each query a cold trajectory request makes, for one bench session.

    .venv/bin/python bench/trajectory_queries.py [--size 3000] [--history 0] [--repeat 20]

Loads a bench session (`bench/trajectory.py`'s shapes) into an in-process service, then runs, in
rounds (each round every variant once, in turn, so the machine's load falls on all alike):
the session window (the index), the settle check's trace shapes, the builder's span read, and the
span read that also brings the settle facts (what a session's first request now makes instead of
the last two), the two in sequence; then, in process on the spans read, the build, pricing,
validation (the rules) and serialising. Prints per variant the p50 of the process's CPU time (the
engine's threads are this process's) and, for the queries, of wall time.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("trajectory_bench", Path(__file__).with_name("trajectory.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--history", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=20)
    bench = _bench_module()
    bench.add_service_flags(parser)
    args = parser.parse_args()

    from evalkit.trajectory import read
    from evalkit.trajectory.read import read_spans_to_map, read_spans_to_map_settling, session_window
    from evalkit.trajectory.settle import shapes_of, trace_shapes

    server, data_dir = bench.serve_one_session(args.size, args.history, args)
    try:
        store, agent = server.service.store, "bot@bench"
        window = session_window(store, agent, "s")
        assert window is not None
        traces = window.trace_ids
        variants: dict[str, Callable[[], object]] = {
            "session window (index)": lambda: session_window(store, agent, "s"),
            "settle check: trace shapes": lambda: trace_shapes(store, agent, traces),
            "spans for the map": lambda: read_spans_to_map(store, agent, traces),
            "spans for the map + settle facts (+ shapes_of)": lambda: shapes_of(
                read_spans_to_map_settling(store, agent, traces)[1]),
            "A: settle check, then the map's read (3 queries)": lambda: (
                session_window(store, agent, "s"), trace_shapes(store, agent, traces),
                read_spans_to_map(store, agent, traces)),
            "B: window, then the read that settles (2 queries)": lambda: (
                session_window(store, agent, "s"), shapes_of(read_spans_to_map_settling(store, agent, traces)[1])),
            "(its query alone)": lambda: store.query(read._SPAN_TO_MAP_SETTLING_SELECT,
                                                     {"agent": agent, "traces": list(traces)}),
            "(the map's query alone)": lambda: store.query(read._SPAN_TO_MAP_SELECT,
                                                           {"agent": agent, "traces": list(traces)}),
        }
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        wall: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(2):  # warm-up: the engine's caches and the first query plans
            for run in variants.values():
                run()
        for _ in range(args.repeat):
            for name, run in variants.items():
                c, w = time.process_time(), time.perf_counter()
                run()
                cpu[name].append(time.process_time() - c)
                wall[name].append(time.perf_counter() - w)
        print(f"{args.size} spans, history {args.history}, {args.repeat} rounds")
        for name in variants:
            print(f"  {name:52s} cpu p50 {statistics.median(cpu[name]) * 1000:6.1f} ms"
                  f"  wall p50 {statistics.median(wall[name]) * 1000:6.1f} ms")
        _parts(read_spans_to_map(store, agent, traces), args.repeat)
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _parts(spans: list[Any], repeat: int) -> None:
    """The rest of a cold request, in process on the spans read: build, price, validate, serialise."""
    import gc

    from evalkit.api import dumps_json
    from evalkit.trajectory.build import build_trajectory
    from evalkit.trajectory.cost import apply_costs
    from evalkit.trajectory.prices import PriceBook
    from evalkit.trajectory.validate import validate_trajectory

    book = PriceBook()
    cpu: dict[str, list[float]] = {"build": [], "price": [], "validate (rules)": [], "serialise": []}
    gc.disable()  # as the route builds: the cycle collector paused
    try:
        for round_ in range(repeat + 2):
            marks = [time.process_time()]
            document = build_trajectory(spans, [], overrides=None, session_id="s").document
            marks.append(time.process_time())
            document = apply_costs(document, book)
            marks.append(time.process_time())
            validate_trajectory(document, schema=False)
            marks.append(time.process_time())
            dumps_json(document)
            marks.append(time.process_time())
            del document
            gc.collect()
            if round_ >= 2:  # the first two warm the price tables and caches
                for times, start, end in zip(cpu.values(), marks, marks[1:], strict=False):
                    times.append(end - start)
    finally:
        gc.enable()
    for name, times in cpu.items():
        print(f"  {name:52s} cpu p50 {statistics.median(times) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
