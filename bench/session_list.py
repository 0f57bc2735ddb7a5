"""Time a page of an agent's session list as the agent's spans grow.

Starts a Service in this process (embedded chDB in a work directory), loads `--sessions` sessions of
`--spans` spans each (a root naming the session, chat calls with usage, one failing tool call per
tenth session), then times pages of `GET /api/agents/{agent}/sessions`: the first page and a deep
one by last and first seen (picked from the session index in list order, so a page reads only its
own sessions' spans), deep pages reached by offset and by the keyset cursor the previous page gives,
the sort by span count and the errors and model filters (picked from the per-trace summary, a row per
trace), a search of session ids (the index, walked in list order), the sort by cost (sessions read by a
bound of their cost, the top ones priced) and a cost floor, which still prices every session. Sessions'
token counts vary (their costs do, as real sessions' do).

`--load otlp` (the default) sends the spans through the OTLP/HTTP receiver. `--load direct` writes
the same spans with `INSERT INTO spans ... SELECT ... FROM numbers()` in blocks of `--block` spans:
the same table and the same views over it (the session index and what it feeds) as the receiver's
inserts, without the receiver's decoding, so that 10M spans load in minutes on two cores. Session ids are
`s-` and the session's number, or with `--scattered-ids` as random as UUIDs (the kept rows, ordered by id, then
hold a page by time in as many granules as it has sessions).

    .venv/bin/python bench/session_list.py [--sessions 20000] [--spans 50] [--repeat 10] [--load otlp|direct]
        [--block 1000000] [--skip-scans] [--fresh] [--scattered-ids] [--work-dir DIR] [--data-dir DIR] [--api-port 0]
        [--otlp-http-port 0]

Prints p50/max wall time per query, and the median CPU time of this process per query (the service and
its embedded engine run in it, so that is what a page costs whatever else loads the machine), and how
long loading took. A request repeated finds in the engine's query condition cache which granules its
filters kept last time, and in its cache of decompressed blocks those of the index tables it looked up (the
page's spans are not put there); `--fresh` times each as a page seen for the first time in a running service:
both caches dropped, then another page read untimed (page 200 by last seen), as a service has read others, so
the index tables' blocks are cached again and the timed page's granules of `spans` are not known.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

sys.path.insert(0, str(Path(__file__).parent))
from evalkit.settings import Settings
from evalkit.store import Store
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_rows import traces_not_kept
from trajectory import BASE_NS, TOKEN, InThread, get, kv, post  # bench/trajectory.py, beside this file

# Trace ids are random in real telemetry, so sessions next to each other in time are far apart in `spans`
# (ordered by agent and trace): a page reads a granule per session. The bench's ids are as scattered: the
# session's number times a large odd constant (mod 2^64) before the number itself.
_SCATTER = 0x9E3779B97F4A7C15


def trace_id_of(trace: int) -> bytes:
    return ((trace * _SCATTER % 2**64) << 64 | trace).to_bytes(16, "big")


def session_id_of(trace: int, scattered: bool) -> str:
    """The session's id: `s-` and its number, so ids sort nearly as the sessions' times do (the kept rows, ordered
    by id, hold a page by time in few granules); or, `scattered`, its trace id's first half, as random as a UUID."""
    return f"s-{trace_id_of(trace)[:8].hex()}" if scattered else f"s-{trace}"


def session(trace: int, spans: int, scattered_ids: bool = False) -> list[trace_pb2.Span]:
    trace_id = trace_id_of(trace)
    root_id = (trace * 1000).to_bytes(8, "big")
    start = BASE_NS + trace * 10**9
    out = [trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent bench",
                          start_time_unix_nano=start, end_time_unix_nano=start + spans * 10**7,
                          attributes=[kv("session.id", session_id_of(trace, scattered_ids)),
                                      kv("gen_ai.operation.name", "invoke_agent")])]
    for i in range(1, spans):
        t = start + i * 10**7
        failing = trace % 10 == 0 and i == 2
        attributes = ([kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search")] if failing
                      else [kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o-mini"),
                            kv("gen_ai.provider.name", "openai"),
                            kv("gen_ai.usage.input_tokens", 500 + i + trace % 1009),
                            kv("gen_ai.usage.output_tokens", 20 + trace % 17)])
        status = trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR if failing else 0)
        out.append(trace_pb2.Span(trace_id=trace_id, span_id=(trace * 1000 + i).to_bytes(8, "big"),
                                  parent_span_id=root_id, name="chat" if not failing else "execute_tool search",
                                  start_time_unix_nano=t, end_time_unix_nano=t + 5 * 10**6,
                                  attributes=attributes, status=status))
    return out


# The spans `session()` builds, as rows of `spans` made from a span number n (trace, then span in trace).
_DIRECT = """
INSERT INTO spans (agent_id, trace_id, span_id, parent_span_id, session_id, name, start_time, end_time, status_code,
                   service_name, operation, provider, model, is_llm_call, input_tokens, output_tokens, tool_name,
                   attributes, attribute_types, resource_attributes, received_at)
SELECT {agent:String}, concat(scattered, leftPad(lower(hex(t)), 16, '0')),
       leftPad(lower(hex(t * 1000 + i)), 16, '0'),
       if(i = 0, '', leftPad(lower(hex(t * 1000)), 16, '0')), if(i = 0, session_id, ''),
       multiIf(i = 0, 'invoke_agent bench', failing, 'execute_tool search', 'chat'),
       fromUnixTimestamp64Nano(toInt64(start)),
       fromUnixTimestamp64Nano(toInt64(if(i = 0, start + {spans:UInt64} * 10000000, start + 5000000))),
       if(failing, 2, 0), 'bench', multiIf(i = 0, 'invoke_agent', failing, 'execute_tool', 'chat'),
       if(chat, 'openai', ''), if(chat, 'gpt-4o-mini', ''), chat, if(chat, 500 + i + t % 1009, 0),
       if(chat, 20 + t % 17, 0),
       if(failing, 'search', ''),
       multiIf(i = 0, map('session.id', session_id, 'gen_ai.operation.name', 'invoke_agent'),
               failing, map('gen_ai.operation.name', 'execute_tool', 'gen_ai.tool.name', 'search'),
               map('gen_ai.operation.name', 'chat', 'gen_ai.request.model', 'gpt-4o-mini',
                   'gen_ai.provider.name', 'openai', 'gen_ai.usage.input_tokens', toString(500 + i + t % 1009),
                   'gen_ai.usage.output_tokens', toString(20 + t % 17))),
       if(chat, map('gen_ai.usage.input_tokens', toUInt8(2), 'gen_ai.usage.output_tokens', toUInt8(2)),
          map()),
       map('service.name', 'bench'), now64(3)
FROM (SELECT intDiv(number, {spans:UInt64}) + {first:UInt64} AS t, number % {spans:UInt64} AS i,
             t % 10 = 0 AND i = 2 AS failing, i > 0 AND NOT failing AS chat,
             {base:UInt64} + t * 1000000000 + i * 10000000 AS start,
             leftPad(lower(hex(t * __SCATTER__)), 16, '0') AS scattered,
             concat('s-', if({scattered:Bool}, scattered, toString(t))) AS session_id
      FROM numbers({count:UInt64}))
""".replace("__SCATTER__", f"toUInt64({_SCATTER})")


def load_direct(store: Store, agent_id: str, sessions: int, spans: int, block: int, scattered_ids: bool) -> None:
    per_insert = max(1, block // spans)
    for first in range(1, sessions + 1, per_insert):
        count = min(per_insert, sessions + 1 - first)
        store.command(_DIRECT, {"agent": agent_id, "spans": spans, "first": first, "count": count * spans,
                                "base": BASE_NS, "scattered": scattered_ids})


def load_otlp(otlp: str, key: str, sessions: int, spans_each: int, scattered_ids: bool) -> None:
    per_request = max(1, 10_000 // spans_each)
    for first in range(1, sessions + 1, per_request):
        spans = [s for trace in range(first, min(first + per_request, sessions + 1))
                 for s in session(trace, spans_each, scattered_ids)]
        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource_pb2.Resource(attributes=[kv("service.name", "bench")]),
            scope_spans=[trace_pb2.ScopeSpans(spans=spans)])])
        post(otlp, request.SerializeToString(), key, "application/x-protobuf")


@dataclass
class LoadedSessions:
    """A service in this process holding the bench's sessions (`serve_sessions`)."""

    server: InThread
    data_dir: Path
    reused: bool  # found in `--data-dir`, not loaded
    seconds: float  # loading (or finding) them took
    keep: bool  # `--data-dir` given: the data stays after `stop`

    def stop(self) -> None:
        self.server.stop()
        if not self.keep:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def serve_sessions(sessions: int, spans: int, *, load: str = "direct", block: int = 1_000_000,
                   data_dir: Path | None = None, work_dir: Path | None = None, api_port: int = 0,
                   otlp_http_port: int = 0, scattered_ids: bool = False, **settings: Any) -> LoadedSessions:
    """A service in this process whose agent `bot@bench` holds `sessions` sessions of `spans` spans (`session()`,
    their ids `session_id_of`), loaded through the receiver (`load="otlp"`) or `load_direct`, or found already in
    `data_dir` from an earlier run; checked complete, with the load's merges over (they run in this process: their
    CPU is not a page's). `settings`: more of the service's settings."""
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    reused = data_dir is not None and (data_dir / "clickhouse").exists()
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
    directory = data_dir or Path(tempfile.mkdtemp(prefix="evalkit-bench-", dir=work_dir))
    server = InThread(Settings(data_dir=directory, grpc_port=0, otlp_http_port=otlp_http_port, api_port=api_port,
                               bootstrap_token=TOKEN, settle_quiet_seconds=0.0, **settings))
    store = server.service.store
    api = f"http://127.0.0.1:{server.service.api_port}"
    started = time.perf_counter()
    if not reused:
        post(api + "/api/workspaces", json.dumps({"name": "bench"}).encode(), TOKEN)
        post(api + "/api/agents", json.dumps({"name": "bot", "workspace": "bench"}).encode(), TOKEN)
        key = json.loads(post(api + "/api/agents/bot@bench/keys",
                              json.dumps({"scopes": ["ingest", "read"]}).encode(), TOKEN)[1])["key"]
        if load == "direct":
            load_direct(store, "bot@bench", sessions, spans, block, scattered_ids)
        else:
            load_otlp(f"http://127.0.0.1:{server.service.otlp_http_port}/v1/traces", key, sessions, spans,
                      scattered_ids)
    total = sessions * spans
    stored = store.query("SELECT count() FROM spans FINAL WHERE agent_id = 'bot@bench'")[0][0]
    assert stored == total, f"{stored:,} spans stored of {total:,} loaded"
    first_id = session_id_of(1, scattered_ids)
    named = store.query("SELECT count() FROM trace_sessions WHERE agent_id = 'bot@bench' AND session_id = {id:String}",
                        {"id": first_id})[0][0]
    assert named, f"no session {first_id!r} in {directory}: it was loaded with the other kind of ids (--scattered-ids)"
    seconds = time.perf_counter() - started
    while store.query("SELECT count() FROM system.merges")[0][0]:
        time.sleep(0.5)
    if server.service.settings.session_rows_interval_seconds > 0:
        wait_for_kept_rows(server, "bot@bench")
    return LoadedSessions(server, directory, reused, seconds, keep=data_dir is not None)


def wait_for_kept_rows(server: InThread, agent_id: str) -> None:
    """Wait until the service's keeper has kept the row of every session (trajectory/session_rows.py), showing
    how far it is; then its merges, as for the load."""
    store = server.service.store
    prices = PriceBook.from_file(server.service.settings.price_file_path) \
        if server.service.settings.price_file_path else PriceBook()
    started = time.perf_counter()
    while True:
        behind = traces_not_kept(store, agent_id, prices, 1_000_000)
        kept = store.query("SELECT sum(sign) FROM session_rows WHERE agent_id = {agent:String}", {"agent": agent_id})
        print(f"\r  session rows kept: {kept[0][0]:,}; traces not kept yet: "
              f"{'all' if behind is None else f'{len(behind):,}'}   ", end="", file=sys.stderr, flush=True)
        if behind == []:
            break
        time.sleep(2.0)
    print(f"\n  every session's row kept after {time.perf_counter() - started:.1f} s", file=sys.stderr)
    while store.query("SELECT count() FROM system.merges")[0][0]:
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--spans", type=int, default=50, help="spans per session")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--load", choices=("otlp", "direct"), default="otlp")
    parser.add_argument("--block", type=int, default=1_000_000, help="spans per INSERT with --load direct")
    parser.add_argument("--skip-scans", action="store_true",
                        help="skip the cost floor, which prices every session (at 10M spans it outlasts the client)")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--api-port", type=int, default=0)
    parser.add_argument("--otlp-http-port", type=int, default=0)
    parser.add_argument("--fresh", action="store_true",
                        help="time each request as a page seen for the first time: the engine's query condition "
                             "cache and its cache of decompressed blocks dropped before it, then another page read "
                             "untimed, so that only the index tables' blocks are cached (a repeated page finds "
                             "there which granules of `spans` its traces are in)")
    parser.add_argument("--no-kept-rows", action="store_true",
                        help="keep no session rows: every page reads the spans, as before trajectory/session_rows.py")
    parser.add_argument("--scattered-ids", action="store_true",
                        help="session ids as random as UUIDs, not `s-` and the session's number (which sort nearly as "
                             "the sessions' times, so a page by time finds its kept rows in few granules)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep the loaded store here and, when it already holds the spans, time it without "
                             "loading again (10M spans take minutes to load)")
    args = parser.parse_args()
    loaded = serve_sessions(args.sessions, args.spans, load=args.load, block=args.block, data_dir=args.data_dir,
                            work_dir=args.work_dir, api_port=args.api_port, otlp_http_port=args.otlp_http_port,
                            scattered_ids=args.scattered_ids,
                            **({"session_rows_interval_seconds": 0.0} if args.no_kept_rows else {}))
    server = loaded.server
    api = f"http://127.0.0.1:{server.service.api_port}"
    print(f"evalkit session list bench: {args.sessions:,} sessions × {args.spans} spans = "
          f"{args.sessions * args.spans:,} spans, "
          f"{'reused' if loaded.reused else f'loaded ({args.load})'} in {loaded.seconds:.1f}s; "
          f"store {server.service.settings.store_url}")
    base = f"{api}/api/agents/bot@bench/sessions"
    deep = min(50 * 99, max(0, args.sessions - 50))
    one_id = session_id_of(max(1, args.sessions // 3), args.scattered_ids)
    # Read before each timed request with --fresh: sessions none of the timed pages shows.
    other_page = f"?limit=50&offset={min(50 * 199, max(0, args.sessions - 50))}"

    def cursor_to_page_100(sort: str) -> str:
        # The cursor page 99 gives (read once, by offset): page 100 as a user paging on reaches it.
        body = json.loads(get(base + f"?limit=50&sort={sort}&offset={max(0, deep - 50)}"))
        return f"?limit=50&sort={sort}&cursor={body['next_cursor']}"

    def cost_floor(rank: int) -> float:
        # The cost of the session ranked `rank` by cost: a floor keeping about `rank + 1` sessions, whatever
        # the store's size (a fixed dollar figure kept ~1% of 200,000 sessions and none of a thousand).
        body = json.loads(get(base + f"?limit=1&sort=cost&offset={rank}"))
        return float(body["sessions"][0]["cost_usd"])

    floor_1 = cost_floor(max(0, args.sessions // 100 - 1))
    # Below the cheapest session (pricing every session to find it: only when the scans are timed).
    floor_all = 0.0 if args.skip_scans else cost_floor(args.sessions - 1) * 0.99

    queries = {
        "first page, last seen": "?limit=50",
        "page 100 by offset, last seen": f"?limit=50&offset={deep}",
        "page 100 by cursor, last seen": cursor_to_page_100("last_seen"),
        "first page, first seen": "?limit=50&sort=first_seen",
        "page 100 by offset, first seen": f"?limit=50&sort=first_seen&offset={deep}",
        "page 100 by cursor, first seen": cursor_to_page_100("first_seen"),
        "first page, most spans (summary)": "?limit=50&sort=spans",
        "page 100, most spans (summary)": f"?limit=50&sort=spans&offset={deep}",
        "page 100 by cursor, most spans (summary)": cursor_to_page_100("spans"),
        "first page, errors only (summary)": "?limit=50&errors=true",
        "first page, errors, first seen (summary)": "?limit=50&errors=true&sort=first_seen",
        "first page, model filter (summary)": "?limit=50&model=gpt-4o-mini",
        "first page, by cost (bound first)": "?limit=50&sort=cost",
        "page 100, by cost (bound first)": f"?limit=50&sort=cost&offset={deep}",
        "page 100 by cursor, by cost": cursor_to_page_100("cost"),
        "first page, cost floor ~1% (bound first)": f"?limit=50&min_cost={floor_1!r}",
        "first page, cost floor ~all (scans, prices all)": f"?limit=50&min_cost={floor_all!r}",
        # One match for a whole id (the walk reads the agent's index to its end); "77" is in ~3% of the ids
        # s-1 .. s-N, ~6% of the scattered ones (the walk reads ~30 or ~15 pages' worth of the index).
        "search, one session of all": f"?limit=50&search={one_id}",
        "search, ids holding 77": "?limit=50&search=77",
    }
    for label, query in queries.items():
        if args.skip_scans and "(scans" in label:
            continue
        try:
            body = json.loads(get(base + query))
        except TimeoutError:
            print(f"{label:<44} timed out (the client waits 120 s)")
            continue
        assert len(body["sessions"]) > 0, body
        times, cpu = [], []
        for _ in range(args.repeat):
            if args.fresh:
                server.service.store.command("SYSTEM DROP QUERY CONDITION CACHE")
                server.service.store.command("SYSTEM DROP UNCOMPRESSED CACHE")
                get(base + other_page)
                server.service.store.command("SYSTEM DROP QUERY CONDITION CACHE")
            t0, c0 = time.perf_counter(), time.process_time()
            get(base + query)
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        print(f"{label:<44} p50 {statistics.median(times):8.1f} ms  max {max(times):8.1f} ms  "
              f"cpu p50 {statistics.median(cpu):8.1f} ms")
    loaded.stop()


if __name__ == "__main__":
    main()
