"""Instructions to build one trajectory: a figure that does not move with the machine's load.

Wall and CPU time on a shared VM vary by a third between minutes; the instructions a build
executes do not. Two steps:

    /work/venv/bin/python bench/trajectory_instructions.py --save /tmp/spans.pkl [--size 3000] [--history 0]
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        /work/venv/bin/python bench/trajectory_instructions.py --load /tmp/spans.pkl

The first loads a bench session (`bench/trajectory.py`'s shapes) into an in-process service and
saves its spans as the trajectory route reads them. The second builds, prices, validates and
serialises that session once to warm up, then once more inside `functools.reduce`, the only
stretch callgrind counts (`--toggle-collect`); it prints "Collected : N", N instructions.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import json
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any


def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("trajectory_bench", Path(__file__).with_name("trajectory.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save(path: Path, size: int, history: int) -> None:
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.resource.v1 import resource_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2

    from evalkit.settings import Settings
    from evalkit.trajectory.read import read_spans_to_map, session_window

    bench = _bench_module()
    data_dir = Path(tempfile.mkdtemp(prefix="evalkit-bench-"))
    settings = Settings(data_dir=data_dir, grpc_port=0, otlp_http_port=0, api_port=0,
                        bootstrap_token=bench.TOKEN, settle_quiet_seconds=0.0, batch_max_delay_ms=5)
    server = bench.InThread(settings)
    try:
        api = f"http://127.0.0.1:{server.service.api_port}"
        bench.post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), bench.TOKEN)
        bench.post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), bench.TOKEN)
        key = json.loads(bench.post(api + "/api/agents/bot@bench/keys", b"{}", bench.TOKEN)[1])["key"]
        spans = (bench.agent_loop_spans(1, "s", size, history) if history else bench.session_spans(1, "s", size))
        for chunk in range(0, len(spans), 50):
            request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
                resource=resource_pb2.Resource(attributes=[bench.kv("service.name", "bench")]),
                scope_spans=[trace_pb2.ScopeSpans(spans=spans[chunk:chunk + 50])])])
            bench.post(f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces",
                       request.SerializeToString(), key, "application/x-protobuf")
        store = server.service.store
        window = session_window(store, "bot@bench", "s")
        assert window is not None
        read = read_spans_to_map(store, "bot@bench", window.trace_ids)
        path.write_bytes(pickle.dumps(read))
        print(f"{len(read)} spans saved to {path}")
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def load(path: Path) -> None:
    import orjson

    from evalkit.trajectory.build import build_trajectory
    from evalkit.trajectory.cost import apply_costs
    from evalkit.trajectory.prices import PriceBook
    from evalkit.trajectory.validate import validate_trajectory

    spans = pickle.loads(path.read_bytes())
    prices = PriceBook()

    def once(*_: Any) -> bytes:
        document = apply_costs(build_trajectory(spans, (), session_id="s").document, prices)
        validate_trajectory(document, schema=False)
        return orjson.dumps(document)

    once()  # imports, price tables and caches: not what a request pays
    gc.collect()
    gc.disable()  # as the route builds: the cycle collector paused
    functools.reduce(once, [0], None)
    print("built once inside functools.reduce; callgrind's 'Collected' line is the figure", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--save", type=Path)
    parser.add_argument("--load", type=Path)
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--history", type=int, default=0)
    args = parser.parse_args()
    if args.save:
        save(args.save, args.size, args.history)
    elif args.load:
        load(args.load)
    else:
        parser.error("give --save FILE (then run --load FILE under callgrind)")


if __name__ == "__main__":
    main()
