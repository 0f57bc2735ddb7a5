"""The service's Prometheus metrics, one registry per running service (no globals)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest

_BATCH_BUCKETS = (1, 10, 100, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000)
_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.received = Counter("evalkit_ingest_received", "Spans and log records received", ["signal"], registry=r)
        self.accepted = Counter("evalkit_ingest_accepted", "Spans and log records made durable", ["signal"],
                                registry=r)
        self.rejected = Counter("evalkit_ingest_rejected", "Spans and log records rejected as invalid",
                                ["signal"], registry=r)
        self.refused = Counter("evalkit_ingest_refused_requests",
                               "Export requests answered with an error, by reason", ["reason"], registry=r)
        self.batch_rows = Histogram("evalkit_ingest_batch_rows", "Rows per insert", ["table"],
                                    buckets=_BATCH_BUCKETS, registry=r)
        self.insert_seconds = Histogram("evalkit_ingest_insert_seconds", "Insert latency", ["table"],
                                        buckets=_LATENCY_BUCKETS, registry=r)
        self.queue_rows = Gauge("evalkit_ingest_queue_rows", "Rows waiting to be written", ["table"], registry=r)
        self.memory_bytes = Gauge("evalkit_ingest_memory_bytes",
                                  "Bytes of export requests in flight (read, decoding, queued or being inserted)",
                                  registry=r)
        self.memory_limit = Gauge("evalkit_ingest_memory_limit_bytes",
                                  "Past this many bytes in flight, exports get 429 / RESOURCE_EXHAUSTED",
                                  registry=r)
        # process_resident_memory_bytes, process_cpu_seconds_total, ...: with the embedded engine the
        # process is the whole service, ClickHouse included.
        ProcessCollector(registry=r)
        self.engine_memory = Gauge("evalkit_engine_memory_tracked_bytes",
                                   "Memory the embedded ClickHouse engine accounts for (MemoryTracking: queries, "
                                   "inserts, merges, caches), part of process_resident_memory_bytes; NaN with a "
                                   "ClickHouse server",
                                   registry=r)
        self.staged_rows = Gauge("evalkit_ingest_staged_rows",
                                 "Spans acknowledged (staged) and not yet flattened into spans", registry=r)
        self.flatten_refused = Counter(
            "evalkit_ingest_flatten_refused_requests",
            "Staged export requests the store refused to flatten, alone; kept in span_staging_refused",
            registry=r)
        self.connections_lent = Gauge("evalkit_store_connections_lent",
                                      "Store connections running a statement now, per pool (read: "
                                      "EVALKIT_READ_CONNECTIONS; insert: the span writer's, logs', the flattener's)",
                                      ["pool"], registry=r)
        self.connection_waits = Gauge("evalkit_store_connection_waits",
                                      "Statements that found every connection of their pool lent and waited for one "
                                      "(since start; rising for reads: raise EVALKIT_READ_CONNECTIONS)",
                                      ["pool"], registry=r)
        self.http_requests = Counter("evalkit_api_requests", "API requests by route and status",
                                     ["route", "status"], registry=r)

    def batch_observer(self, table: str) -> Callable[[int, float], None]:
        def observe(rows: int, seconds: float) -> None:
            self.batch_rows.labels(table).observe(rows)
            self.insert_seconds.labels(table).observe(seconds)

        return observe

    def watch_queue(self, table: str, depth: Callable[[], int]) -> None:
        self.queue_rows.labels(table).set_function(lambda: float(depth()))

    def watch_staged(self, staged: Callable[[], int]) -> None:
        self.staged_rows.set_function(lambda: float(staged()))

    def watch_memory(self, in_flight: Callable[[], int], limit: int) -> None:
        self.memory_bytes.set_function(lambda: float(in_flight()))
        self.memory_limit.set(limit)

    def watch_engine_memory(self, tracked: Callable[[], float]) -> None:
        self.engine_memory.set_function(tracked)

    def watch_connections(self, use: Callable[[], dict[str, tuple[int, int]]]) -> None:
        def figure(pool: str, which: int) -> Callable[[], float]:
            return lambda: float(use()[pool][which])

        for pool in ("read", "insert"):
            self.connections_lent.labels(pool).set_function(figure(pool, 0))
            self.connection_waits.labels(pool).set_function(figure(pool, 1))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
