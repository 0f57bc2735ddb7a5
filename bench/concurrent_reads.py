"""A quick read beside slow ones: how long a user waits for a page while other reads run.

Starts a Service in this process on a store of `--sessions` sessions of `--spans` spans (bench/session_list.py's,
loaded with `INSERT ... SELECT`, or reused from `--data-dir`), with `--read-connections` store connections for
reads. Then, every request sent by curl (another process, so that the bench's own Python does not compete with the
service's for the interpreter):

- the quick request alone (the first page of the session list, `--quick`), `--repeat` times;
- the slow request alone (a deep page sorted by cost, `--slow`: many seconds of queries at 10M spans);
- the quick request again while `--slow-clients` clients send the slow one in a loop.

    .venv/bin/python bench/concurrent_reads.py [--sessions 20000] [--spans 50] [--repeat 15] [--slow-clients 1]
        [--read-connections 4] [--data-dir DIR] [--work-dir DIR] [--api-port 0]

Prints each figure's p50 and slowest wall time in ms. With one read connection every statement of every
request queues on it, as the store did before it lent each statement a connection of its own.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from session_list import serve_sessions  # bench/session_list.py, beside this file

from evalkit.settings import Settings
from trajectory import curl_ms

AGENT = "bot@bench"


def figures(times: list[float]) -> str:
    return f"p50 {statistics.median(times):8.1f} ms  max {max(times):8.1f} ms  ({len(times)} requests)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--spans", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--slow-clients", type=int, default=1)
    parser.add_argument("--read-connections", type=int, default=Settings().read_connections)
    parser.add_argument("--quick", default="?limit=50", help="query of the session list timed beside the slow one")
    parser.add_argument("--slow", default=None, help="query of the slow request (default: page 100 by cost)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep the loaded store here, and reuse it when it already holds the spans")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--api-port", type=int, default=0)
    args = parser.parse_args()
    loaded = serve_sessions(args.sessions, args.spans, data_dir=args.data_dir, work_dir=args.work_dir,
                            api_port=args.api_port, read_connections=args.read_connections)
    api = f"http://127.0.0.1:{loaded.server.service.api_port}"
    base = f"{api}/api/agents/{AGENT}/sessions"
    deep = min(50 * 99, max(0, args.sessions - 50))
    quick = base + args.quick
    slow = base + (args.slow or f"?limit=50&sort=cost&offset={deep}")
    print(f"evalkit concurrent reads bench: {args.sessions:,} sessions × {args.spans} spans, "
          f"{args.read_connections} read connection(s), {args.slow_clients} slow client(s); "
          f"store {loaded.server.service.settings.store_url}")
    curl_ms(quick)
    curl_ms(slow)  # warm: the first request of each loads code and prices

    alone = [curl_ms(quick)[0] for _ in range(args.repeat)]
    slow_alone = [curl_ms(slow)[0] for _ in range(max(3, args.repeat // 5))]

    stop = threading.Event()
    slow_beside: list[float] = []

    def slow_loop() -> None:
        while not stop.is_set():
            slow_beside.append(curl_ms(slow)[0])

    loops = [threading.Thread(target=slow_loop, daemon=True) for _ in range(args.slow_clients)]
    for loop in loops:
        loop.start()
    time.sleep(0.5)  # the slow requests under way
    beside = []
    for _ in range(args.repeat):
        beside.append(curl_ms(quick)[0])
        time.sleep(0.05)
    stop.set()
    for loop in loops:
        loop.join()

    print(f"quick request alone:           {figures(alone)}")
    print(f"slow request alone:            {figures(slow_alone)}")
    print(f"quick request beside the slow: {figures(beside)}")
    print(f"slow request beside the quick: {figures(slow_beside)}")
    print(f"peak RSS of this process (the service and its engine): "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    loaded.stop()


if __name__ == "__main__":
    main()
