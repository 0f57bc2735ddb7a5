"""`evalkit serve`: the composition root that starts every part in one process.

With the embedded engine (chDB) one process owns the data directory, so ingest,
queries and scoring run together here. When the store is unreachable the
receivers still start and answer "retry later" until it comes back.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import grpc
from aiohttp import web

from evalkit.access import Access
from evalkit.api import MAX_URL_BYTES, Context, RouteModule, api_app
from evalkit.engine_memory import EngineMemory, machine_memory_bytes, write_config_file
from evalkit.ingest import export_schema
from evalkit.ingest.decode import LOG_COLUMNS, Limits
from evalkit.ingest.flattener import Flattener
from evalkit.ingest.native import NativeEncoder
from evalkit.ingest.otlp_grpc import start_grpc_server
from evalkit.ingest.otlp_http import otlp_http_app
from evalkit.ingest.pipeline import Ingest
from evalkit.ingest.staging import StagingLedger
from evalkit.ingest.workers import EncodePool
from evalkit.ingest.writer import BatchWriter
from evalkit.metrics import Metrics
from evalkit.migrations import migrate, set_fsync
from evalkit.process_memory import bound_malloc, release_code_pages
from evalkit.settings import Settings
from evalkit.store import Store, StoreLocked, StoreUnavailable

log = logging.getLogger("evalkit.serve")

def default_route_modules() -> list[RouteModule]:
    """The HTTP routes of trajectory and scoring, when those parts are installed."""
    modules: list[RouteModule] = []
    try:
        from evalkit.trajectory.routes import add_routes as trajectory_routes
    except ImportError:
        pass
    else:
        modules.append(trajectory_routes)
    try:
        from evalkit.scoring.routes import add_routes as scoring_routes
    except ImportError:
        pass
    else:
        modules.append(scoring_routes)
    return modules


def engine_memory(settings: Settings) -> EngineMemory:
    return EngineMemory.for_machine(machine_memory_bytes(), insert_concurrency=settings.insert_concurrency,
                                    engine_bytes=settings.engine_memory_bytes,
                                    insert_bytes=settings.insert_memory_bytes,
                                    cache_bytes=settings.engine_cache_bytes)


def _driver_without_pandas() -> None:
    """The store hands clickhouse-connect lists and bytes, never DataFrames; left alone, the driver
    imports pandas at the first insert only to check for one (~50 MB resident, 31 MB of it
    anonymous, in a process that never uses it). Told pandas is absent, it skips the check. Not
    done where pandas is already loaded (a process that uses it)."""
    from clickhouse_connect.driver import options

    if "pandas" not in sys.modules and "pd" not in vars(options):
        options.pd = None
        options.pd_time_test = None


def make_store(settings: Settings) -> Store:
    """The service's store. The embedded engine gets its memory budget and MergeTree defaults;
    a ClickHouse server's memory is its administrator's, so only a per-insert cap that was set
    explicitly reaches it."""
    _driver_without_pandas()
    url = settings.store_url
    memory = engine_memory(settings)
    # Insert connections: the span writer's concurrent inserts, one for logs, one per flattener worker.
    connections = settings.insert_concurrency + 1 + settings.flatten_workers
    if not url.startswith("chdb:"):
        explicit = {"max_memory_usage": settings.insert_memory_bytes} if settings.insert_memory_bytes else None
        return Store(url, cluster=settings.clickhouse_cluster, insert_connections=connections,
                     read_connections=settings.read_connections, insert_settings=explicit)
    config = write_config_file(settings.data_dir / "engine-config.xml")
    return Store(url, cluster=settings.clickhouse_cluster, insert_connections=connections,
                 read_connections=settings.read_connections,
                 engine_options={**memory.server_options(), "config-file": str(config.resolve())},
                 insert_settings=memory.insert_settings())


def keep_private(data_dir: Path) -> None:
    """The data directory holds every prompt and answer agents sent: only its owner may read it.

    New files get no group or other permissions (umask), and what an older evalkit left
    readable is closed at start."""
    os.umask(0o077)
    data_dir.mkdir(parents=True, exist_ok=True)
    for root, directories, files in os.walk(data_dir):
        for name in (*directories, *files):
            path = os.path.join(root, name)
            try:
                mode = os.lstat(path).st_mode
                if mode & 0o077 and not stat.S_ISLNK(mode):
                    os.chmod(path, stat.S_IMODE(mode) & 0o700)
            except OSError:  # a file the engine removed meanwhile
                continue
    os.chmod(data_dir, 0o700)


class Service:
    def __init__(self, settings: Settings, *, store: Store | None = None, clock: Callable[[], float] = time.time,
                 route_modules: Iterable[RouteModule] | None = None,
                 say: Callable[[str], None] = print) -> None:
        self.settings = settings
        bound_malloc()  # before the service's threads make arenas of their own
        self.store = store or make_store(settings)
        self.clock = clock
        self.say = say
        self.metrics = Metrics()
        self.metrics.watch_engine_memory(self.store.memory_tracked)
        self.metrics.watch_connections(self.store.connection_use)
        self.access = Access(self.store, clock)
        self.route_modules = list(default_route_modules() if route_modules is None else route_modules)
        self._ready = False
        self._ready_event: asyncio.Event | None = None
        # Set when the store cannot be prepared for a reason that waiting will not fix (a failed migration).
        self.fatal = asyncio.Event()
        self.fatal_error: Exception | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._runners: list[web.AppRunner] = []
        self._grpc: grpc.aio.Server | None = None
        self.grpc_port = settings.grpc_port
        self.otlp_http_port = settings.otlp_http_port
        self.api_port = settings.api_port
        self.context = Context(settings, self.store, self.access, self.metrics,
                               {"ready": lambda: self._ready, "problem": self.problem})
        delay = settings.batch_max_delay_ms / 1000
        # Span exports are acknowledged once staged (ClickHouse reads each request's protobuf into a
        # row of span_staging) and flattened into spans behind (ingest/tables.py, ingest/flattener.py).
        self.staging = StagingLedger(backlog_max_rows=settings.staged_max_rows)
        self.span_writer = BatchWriter(
            self.store, "span_staging", export_schema.STAGING_COLUMN_NAMES, fmt="Protobuf",
            format_settings=export_schema.insert_settings(), concurrency=settings.insert_concurrency,
            max_rows=settings.batch_max_rows, max_bytes=settings.batch_max_bytes, max_delay=delay,
            queue_max_rows=settings.queue_max_rows, on_batch=self.metrics.batch_observer("spans"),
            staging=self.staging, sequence=export_schema.sequenced_pieces)
        self.flattener = Flattener(
            self.store, self.staging, max_rows=settings.flatten_max_rows, max_bytes=settings.flatten_max_bytes,
            linger=settings.flatten_delay_ms / 1000, workers=settings.flatten_workers,
            on_batch=self.metrics.batch_observer("flattened"),
            on_refused=lambda rows: self.metrics.flatten_refused.inc())
        self.metrics.watch_staged(lambda: self.staging.backlog_rows)
        # Readers going forwards by the stamps inserts into spans leave (trajectory/session_rows.py).
        self.context.extras["inserting_since"] = self.flattener.inserting_since
        # Reads see every export acknowledged before them (evalkit/store.py), waiting at most 5 s.
        self.store.read_barrier = lambda: self.staging.caught_up(5.0)
        self.log_writer = BatchWriter(
            self.store, "logs", LOG_COLUMNS, max_rows=settings.batch_max_rows, max_bytes=settings.batch_max_bytes,
            max_delay=delay,
            queue_max_rows=settings.queue_max_rows, on_batch=self.metrics.batch_observer("logs"))
        self.writers = (self.span_writer, self.log_writer)
        workers = settings.ingest_workers if settings.ingest_workers >= 0 else (os.cpu_count() or 1)
        self.pool = EncodePool(workers)
        self.metrics.watch_queue("spans", lambda: self.span_writer.queued_rows)
        self.metrics.watch_queue("logs", lambda: self.log_writer.queued_rows)
        self.ingest = Ingest(
            self.access, self.span_writer, self.log_writer,
            Limits(settings.max_attribute_bytes, settings.payload_threshold_bytes), self.metrics, self.pool,
            retry_after=settings.retry_after_seconds, memory_limit_bytes=settings.memory_limit_bytes, clock=clock)

    @property
    def ready(self) -> bool:
        return self._ready

    def problem(self) -> str | None:
        """Why the service cannot keep what it is sent right now (health answers 503 with it)."""
        for writer in self.writers:
            reason = writer.problem()
            if reason is not None:
                return f"{reason}; exports get 503 and are retried by their senders until it clears"
        reason = self.flattener.problem()
        if reason is not None:
            return (f"{reason}; acknowledged spans stay staged (nothing is lost) and become readable once "
                    "it clears")
        return None

    async def wait_ready(self, timeout: float) -> None:
        assert self._ready_event is not None
        await asyncio.wait_for(self._ready_event.wait(), timeout)

    def _prepare_store(self) -> str | None:
        self.store.connect()
        migrate(self.store)
        set_fsync(self.store, self.settings.fsync)
        # What a previous run acknowledged and did not flatten is flattened first (before any export
        # of this run is taken: the log encoder below is what makes ingest ready).
        staged = self.flattener.recover()
        if staged:
            log.warning("flattening %d export requests a previous run acknowledged and left staged", staged)
        token = self.access.ensure_admin_token(self.settings.data_dir, self.settings.bootstrap_token)
        # The log encoder serialises for the columns as the store has them.
        self.ingest.log_encoder = NativeEncoder("logs", LOG_COLUMNS, self.store.column_types("logs", LOG_COLUMNS))
        return token

    async def _become_ready(self) -> None:
        try:
            await self._prepare()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to whoever runs the service (`evalkit serve` stops with it)
            self.fatal_error = exc
            self.fatal.set()

    async def _prepare(self) -> None:
        assert self._ready_event is not None
        attempt = 0
        while True:
            try:
                token = await asyncio.to_thread(self._prepare_store)
                self.flattener.start()
            except StoreLocked:
                raise
            except StoreUnavailable as exc:
                if attempt == 0:
                    self.say(f"evalkit: store not reachable yet ({exc}); receivers answer 'retry later' "
                             "until it is")
                attempt += 1
                await asyncio.sleep(min(2.0, 0.2 * attempt))
                continue
            break
        await self.pool.warm_up()
        if token:
            self.say(f"evalkit: admin token (shown once, also in {self.settings.data_dir / 'admin-token'}): {token}")
        for ready_hook in self.context.extras.get("on_ready", []):
            await ready_hook()
        # Everything loaded so far lives as long as the service: keep the collector from walking it
        # on every full collection (those were a third of a large trajectory request).
        gc.freeze()
        if self.settings.release_code_pages and self.store.kind == "chdb":
            released = await asyncio.to_thread(release_code_pages)
            log.info("paged out %d MB of library code touched at start", released >> 20)
        self._ready = True
        self._ready_event.set()

    async def start(self) -> None:
        self._ready_event = asyncio.Event()
        if self.store.kind == "chdb" or self.settings.data_dir.exists():
            keep_private(self.settings.data_dir)
        if self.store.kind == "chdb":
            schema = export_schema.write_schema_file(self.settings.data_dir / "format_schemas")
            self.span_writer.format_settings = export_schema.insert_settings(schema)
            # A locked data directory is a mistake to report now, not something to wait out.
            await asyncio.to_thread(self.store.connect)
            if self.settings.release_code_pages:
                # Opening the engine touched most of its code (its registrations); paging that out
                # before the migrations keeps the start's peak lower too. Again once ready.
                await asyncio.to_thread(release_code_pages)
        self.span_writer.start()
        self.log_writer.start()
        s = self.settings
        self._grpc, self.grpc_port = await start_grpc_server(self.ingest, s.host, s.grpc_port, s.max_request_bytes)
        self.otlp_http_port = await self._serve_http(otlp_http_app(self.ingest, s.max_request_bytes),
                                                     s.otlp_http_port, "--otlp-http-port")
        self.context.extras["ports"] = {"grpc": self.grpc_port, "otlp_http": self.otlp_http_port}
        self.api_port = await self._serve_http(api_app(self.context, self.route_modules), s.api_port,
                                               "--api-port", max_line_size=MAX_URL_BYTES)
        self._tasks.append(asyncio.get_running_loop().create_task(self._become_ready(), name="store-ready"))
        self.say(f"evalkit: OTLP/gRPC on {s.host}:{self.grpc_port}, OTLP/HTTP on http://{s.host}:"
                 f"{self.otlp_http_port}/v1/traces, API on http://{s.host}:{self.api_port} "
                 f"(store {self.store.redacted_url})")

    async def _serve_http(self, app: web.Application, port: int, flag: str, max_line_size: int = 8190) -> int:
        runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=5.0,
                               max_line_size=max_line_size)
        await runner.setup()
        site = web.TCPSite(runner, self.settings.host, port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise OSError(f"cannot listen on {self.settings.host}:{port} ({exc.strerror}); pass another {flag}"
                          ) from exc
        self._runners.append(runner)
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        """Stop taking requests, write everything queued, close the store."""
        for task in self._tasks:
            task.cancel()
        if self._grpc is not None:
            await self._grpc.stop(grace=5.0)
        for runner in reversed(self._runners):
            await runner.cleanup()
        for hook in self.context.extras.get("on_stop", []):
            await hook()
        await self.span_writer.close()
        await self.flattener.close()
        await self.log_writer.close()
        await asyncio.to_thread(self.pool.close)
        self.ingest.close()
        await asyncio.to_thread(self.store.close)
        self.say("evalkit: stopped; every acknowledged span is stored")
