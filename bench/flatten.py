"""The flattening insert alone, A/B in one process: CPU time and peak engine memory per variant.

Stages `--spans` spans of bench/ingest.py's generator in an embedded engine (one staging part per
export request, as the server's group inserts make them), then runs the flattener's statement
(`INSERT INTO spans SELECT <ingest/flatten.py> FROM span_staging ...`) with each variant's extra
settings, the variants alternating `--repeat` times so that the machine's load falls on all alike.
Merges are stopped, so the CPU time is the insert's own. Prints, per variant: the process's CPU
time per span (median), the engine's peak tracked memory above its level before the insert
(MemoryTracking, read every 20 ms on a connection of its own) and the parts of `spans` written.

    python bench/flatten.py [--spans 51200] [--repeat 3] [--work-dir DIR]
        [--variant NAME='{"max_threads": 1}' ...]   (default: the flattener's settings, and one thread)

"Write" cost and memory can be told apart from the SELECT's with a variant inserting into a Null
table: `--null NAME` runs that variant into `spans_null` (same columns, ENGINE = Null). What one view over
`spans` costs: `--without NAME=VIEW[,VIEW]` adds a variant with the flattener's settings that runs with those
views detached (e.g. `--without 'no activity=trace_activity_feed'`). What a computed column of `spans` costs:
`--column NAME=DEFINITION` adds a variant run with that column's definition changed, then restored (e.g.
`--column 'status only=failed Bool MATERIALIZED status_code = 2'`; the same NAME again changes another column in
that variant too, and a NAME given to `--without` as well runs with those views detached too: a migration's
whole change, against the store as migrated before it, in one variant).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evalkit.ingest import export_schema
from evalkit.ingest.export_schema import Framing, sequenced
from evalkit.ingest.flatten import SPAN_COLUMNS, span_rows
from evalkit.migrations import migrate
from evalkit.store import Store
from ingest import build_requests

# The flattener's own settings (ingest/flattener.py, Flattener._insert), without the token.
FLATTENER = {"compile_expressions": 0, "merge_tree_min_rows_for_concurrent_read": 1,
             "merge_tree_min_bytes_for_concurrent_read": 1, "max_insert_threads": 2,
             "query_plan_enable_optimizations": 0, "optimize_on_insert": 0}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=51_200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work-dir", type=Path, help="the engine's data directory (default: a new temporary one)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON",
                        help="settings added to the flattener's (repeatable)")
    parser.add_argument("--null", action="append", default=[], metavar="NAME",
                        help="run this variant into a Null table (the SELECT's cost alone)")
    parser.add_argument("--without", action="append", default=[], metavar="NAME=VIEW[,VIEW]",
                        help="a variant run with these views over spans detached (repeatable)")
    parser.add_argument("--column", action="append", default=[], metavar="NAME=DEFINITION",
                        help="a variant run with this column of spans defined so (repeatable)")
    args = parser.parse_args()
    variants: dict[str, dict[str, Any]] = {"flattener": {}}
    one_thread = 'one thread={"max_threads": 1, "max_insert_threads": 1}'
    for spec in args.variant or ([] if args.without or args.column else [one_thread]):
        name, settings = spec.split("=", 1)
        variants[name] = json.loads(settings)
    detached: dict[str, list[str]] = {}
    for spec in args.without:
        name, views = spec.split("=", 1)
        variants[name] = {}
        detached[name] = views.split(",")
    redefined: dict[str, list[str]] = {}
    for spec in args.column:
        name, definition = spec.split("=", 1)
        variants[name] = {}
        redefined.setdefault(name, []).append(definition)

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="evalkit-bench-flatten-"))
    store = Store(f"chdb://{work / 'clickhouse'}")
    store.connect()
    migrate(store)
    db = store.database
    # Each redefined column's definition as migrated, to restore after its variant.
    defined = {column: f"{column} {kind} {default_kind} {expression}" for column, kind, default_kind, expression in
               store.query(f"SELECT name, type, default_kind, default_expression FROM system.columns "
                           f"WHERE database = '{db}' AND table = 'spans'")}
    requests = build_requests(args.spans, seed=3)
    schema = export_schema.write_schema_file(work / "schemas")
    staging_settings = {**export_schema.insert_settings(schema), "insert_deduplicate": 0}
    framing = Framing("agent@bench", int(time.time() * 1000), "", 16 << 20, 1024)
    for seq, request in enumerate(requests, 1):
        store.insert_raw("span_staging", export_schema.STAGING_COLUMN_NAMES, sequenced(framing.message(request), seq),
                         "Protobuf", staging_settings)
    store.command("SYSTEM STOP MERGES")
    store.command(f"CREATE TABLE IF NOT EXISTS {db}.spans_null AS {db}.spans ENGINE = Null")
    columns = ", ".join(SPAN_COLUMNS)
    select = span_rows().format(source=f"(SELECT * FROM {db}.span_staging WHERE seq BETWEEN 1 AND {len(requests)})")

    # The engine's tracked memory, read on a connection of its own (the main one runs the inserts).
    watcher = Store(f"chdb://{work / 'clickhouse'}")
    watcher.connect()
    peak = [0.0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            tracked = watcher.memory_tracked()
            if tracked == tracked:
                peak[0] = max(peak[0], tracked)
            stop.wait(0.02)

    threading.Thread(target=watch, daemon=True).start()

    def parts() -> int:
        return int(store.query(f"SELECT count() FROM system.parts WHERE database = '{db}' AND table = 'spans' "
                               "AND active")[0][0])

    results: dict[str, tuple[list[float], list[float], list[int]]] = {name: ([], [], []) for name in variants}
    for _ in range(args.repeat):
        for name, extra in variants.items():
            target = "spans_null" if name in args.null else "spans"
            before = parts()
            time.sleep(0.1)
            floor = watcher.memory_tracked()
            peak[0] = 0.0
            for view in detached.get(name, []):
                store.command(f"DETACH TABLE {db}.{view}")
            for definition in redefined.get(name, []):
                store.command(f"ALTER TABLE {db}.spans MODIFY COLUMN {definition}")
            started = cpu_seconds()
            store.execute(f"INSERT INTO {db}.{target} ({columns}) {select}",
                          settings={**FLATTENER, "insert_deduplicate": 0, **extra})
            spent = cpu_seconds() - started
            for view in detached.get(name, []):
                store.command(f"ATTACH TABLE {db}.{view}")
            for definition in redefined.get(name, []):
                store.command(f"ALTER TABLE {db}.spans MODIFY COLUMN {defined[definition.split()[0]]}")
            time.sleep(0.05)
            results[name][0].append(spent)
            results[name][1].append((peak[0] - floor) / 1e6)
            results[name][2].append(parts() - before)
    stop.set()
    print(f"{args.spans:,} spans per insert, "
          f"{len(requests)} staged requests, {args.repeat} runs per variant, alternating")
    for name, (spent, memory, written) in results.items():
        print(f"{name:>20}: CPU {statistics.median(spent) / args.spans * 1e6:6.1f} us/span "
              f"{[round(s * 1000) for s in spent]} ms; peak engine memory +{statistics.median(memory):5.0f} MB; "
              f"parts {written}")


if __name__ == "__main__":
    main()
