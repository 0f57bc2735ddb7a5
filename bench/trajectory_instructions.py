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
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any


def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("trajectory_bench", Path(__file__).with_name("trajectory.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save(path: Path, size: int, history: int, args: argparse.Namespace) -> None:
    from evalkit.trajectory.read import read_spans_to_map, session_window

    bench = _bench_module()
    server, data_dir = bench.serve_one_session(size, history, args)
    try:
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
    _bench_module().add_service_flags(parser)
    args = parser.parse_args()
    if args.save:
        save(args.save, args.size, args.history, args)
    elif args.load:
        load(args.load)
    else:
        parser.error("give --save FILE (then run --load FILE under callgrind)")


if __name__ == "__main__":
    main()
