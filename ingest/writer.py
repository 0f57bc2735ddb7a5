"""Group commit: concurrent export requests share one insert, and each is acknowledged
only after that insert succeeded.

Requests queue their encoded rows (Native blocks, or framed protobuf exports that
ClickHouse flattens itself); an insert takes everything queued (up to `max_rows`)
once `max_rows` are waiting or the oldest has waited `max_delay`. Up to
`concurrency` inserts run at once; while they run the next batch gathers, so
batches grow with load. A bounded queue turns overload into a retryable answer
instead of memory growth.

Span exports go to `span_staging` with a ledger (ingest/staging.py): each request gets a
sequence number as its insert starts, and the flattener (ingest/flattener.py) turns what
is staged into spans behind; past the ledger's backlog limit no new batch starts.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evalkit.ingest.encode import MAX_PARTITIONS_PER_INSERT, Encoded, Part
from evalkit.ingest.staging import StagingLedger
from evalkit.store import Store, StoreError, is_data_error

log = logging.getLogger("evalkit.ingest.writer")


class Overloaded(Exception):
    """The queue is full; the client should retry after a pause."""


class WriteFailed(Exception):
    """The store could not take these rows now (unreachable, out of disk or memory); nothing of
    them is acknowledged and the client should retry."""


class WriteRefused(Exception):
    """The store refuses these rows, alone: sending them again would fail the same way."""


def batch_token(table: str, digests: Sequence[str]) -> str:
    """Deterministic per batch content, so a re-sent insert of the same rows is dropped by ClickHouse."""
    digest = hashlib.blake2b(table.encode(), digest_size=16)
    for item in sorted(digests):
        digest.update(item.encode())
    return digest.hexdigest()


Entry = tuple[Part, "asyncio.Future[None]"]


class BatchWriter:
    def __init__(
        self,
        store: Store,
        table: str,
        columns: Sequence[str],
        *,
        fmt: str = "Native",
        format_settings: dict[str, Any] | None = None,
        max_rows: int = 20_000,
        max_bytes: int = 16 * 1024 * 1024,
        max_delay: float = 0.05,
        queue_max_rows: int = 400_000,
        concurrency: int = 1,
        max_partitions: int = MAX_PARTITIONS_PER_INSERT,
        on_batch: Callable[[int, float], None] | None = None,
        on_refused: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        staging: StagingLedger | None = None,
        sequence: Callable[[bytes, int], Iterable[bytes]] | None = None,
    ) -> None:
        self.store = store
        self.table = table
        self.columns = tuple(columns)
        self.fmt = fmt
        self.format_settings = dict(format_settings or {})
        self.max_rows = max_rows
        # The engine's memory for an insert is a multiple (~25x for span exports) of its bytes.
        self.max_bytes = max_bytes
        self.max_delay = max_delay
        self.queue_max_rows = queue_max_rows
        # One insert block may touch this many partitions of the table (ClickHouse refuses more).
        self.max_partitions = max_partitions
        self._on_batch = on_batch
        self._on_refused = on_refused
        # Staged span exports: each request of an insert gets a sequence number from the ledger,
        # written into its row by `sequence(block, seq)`, the row's pieces (ingest/export_schema.py); None for logs.
        self.staging = staging
        self._sequence = sequence
        self._clock = clock
        self._pending: list[Entry] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._oldest = 0.0
        self._last_commit_end = 0.0
        self._last_batch_requests = 0
        # The last insert that failed for the store's sake, while no insert has succeeded since.
        self._failing: tuple[float, str] | None = None
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        # An insert runs on one core; `concurrency` of them in flight (each on its own store
        # connection, see Store.insert_raw) use more.
        self.concurrency = max(1, concurrency)
        self._executor = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"evalkit-{table}-writer")

    @property
    def queued_rows(self) -> int:
        return self._pending_rows

    def problem(self, within: float = 60.0) -> str | None:
        """Why the store is not taking rows, if the latest insert failed for that reason within
        `within` seconds; None when inserts succeed (or none was tried lately)."""
        if self._failing is None:
            return None
        when, reason = self._failing
        if self._clock() - when > within:
            return None
        return f"inserts into {self.table} are failing: {reason}"

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"writer:{self.table}")

    async def write(self, item: Encoded) -> None:
        """Returns once the rows are durable; raises Overloaded, WriteFailed or WriteRefused otherwise."""
        if not item.parts:
            return
        if self._closing:
            raise WriteFailed("evalkit is shutting down; retry against a running server")
        if self._pending_rows and self._pending_rows + item.rows > self.queue_max_rows:
            raise Overloaded(f"{self._pending_rows} rows are waiting to be written")
        loop = asyncio.get_running_loop()
        if not self._pending:
            self._oldest = time.monotonic()
        futures: list[asyncio.Future[None]] = []
        for part in item.parts:
            future: asyncio.Future[None] = loop.create_future()
            self._pending.append((part, future))
            self._pending_rows += part.rows
            self._pending_bytes += len(part.block)
            futures.append(future)
        self._wake.set()
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def close(self) -> None:
        """Write everything queued, then stop."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None
        self._executor.shutdown(wait=True)

    @property
    def in_flight(self) -> int:
        """Inserts running now."""
        return len(self._in_flight)

    async def _run(self) -> None:
        in_flight = self._in_flight
        while True:
            if not self._pending:
                if self._closing:
                    if in_flight:
                        await asyncio.wait(in_flight)
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            if len(in_flight) >= self.concurrency:
                # Every connection is busy: requests keep gathering into the next batch.
                await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                continue
            if self.staging is not None and not self.staging.has_room() and not self.staging.closing:
                # The flattener is behind: acknowledge at its pace (requests keep gathering). The
                # ledger is waited on from a thread: the flattener signals it from its own.
                await asyncio.to_thread(self.staging.wait_room, 1.0)
                continue
            now = time.monotonic()
            deadline = self._oldest + self.max_delay
            if len(self._pending) < self._last_batch_requests:
                # The clients the last insert acknowledged come back within milliseconds: give them
                # a moment, as one insert for all of them costs less than two (each insert has a
                # fixed planning cost of about 0.1 s).
                deadline = max(deadline, self._last_commit_end + self.max_delay)
            elif not in_flight:
                # No insert running and at least as many requests waiting as the last insert
                # answered (a lone exporter, whose batch processor sends one request at a time, or
                # every client of the last batch back): waiting would gather nobody else.
                deadline = now
            wait = deadline - now
            if self._pending_rows < self.max_rows and self._pending_bytes < self.max_bytes and wait > 0 \
                    and not self._closing:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                except TimeoutError:
                    pass
                continue
            task = asyncio.get_running_loop().create_task(self._commit(self._take()))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)

    async def _commit(self, batch: list[Entry]) -> None:
        """Insert one batch, then answer each of its requests.

        When the store refuses the batch for another reason than its availability, the batch is
        split in halves and each retried on its own, down to single requests: a request sharing
        a batch with rows that cannot be stored is not failed by them. A request refused alone
        for its content gets a permanent error; for anything else a retryable one."""
        parts = [part for part, _ in batch]
        rows = sum(part.rows for part in parts)
        started = time.monotonic()
        first = self.staging.reserve(parts) if self.staging is not None else 0
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._insert, parts, first)
        except StoreError as exc:
            self._abandon(first)
            await self._refused(batch, rows, exc)
        except Exception as exc:  # the store's availability: not acknowledged, worth retrying
            self._abandon(first)
            log.warning("insert of %d rows into %s failed: %s", rows, self.table, exc)
            self._failing = (self._clock(), _first_line(exc))
            self._answer(batch, WriteFailed(_first_line(exc)))
        except BaseException:
            self._abandon(first)
            raise
        else:
            if self.staging is not None:
                self.staging.landed(first, parts)
            self._failing = None
            self._answer(batch, None)
            self._last_commit_end = time.monotonic()
            self._last_batch_requests = len(batch)
            if self._on_batch is not None:
                self._on_batch(rows, time.monotonic() - started)

    def _abandon(self, first: int) -> None:
        if self.staging is not None:
            self.staging.abandoned(first)

    async def _refused(self, batch: list[Entry], rows: int, exc: StoreError) -> None:
        """The store refused a batch: split it (isolation), or answer its one request."""
        if len(batch) > 1:
            log.warning("insert of %d rows into %s refused (%s); retrying its %d requests apart",
                        rows, self.table, _first_line(exc), len(batch))
            middle = len(batch) // 2
            await self._commit(batch[:middle])
            await self._commit(batch[middle:])
            return
        if not is_data_error(str(exc)):
            # Refused alone, but not for its content (a table missing, the engine broken): the
            # store's fault, so retryable, and health says so.
            log.warning("insert of %d rows into %s failed: %s", rows, self.table, exc)
            self._failing = (self._clock(), _first_line(exc))
            self._answer(batch, WriteFailed(_first_line(exc)))
            return
        log.warning("insert of %d rows into %s refused: %s", rows, self.table, _first_line(exc))
        if self._on_refused is not None:
            self._on_refused(rows)
        self._answer(batch, WriteRefused(_first_line(exc)))

    @staticmethod
    def _answer(batch: list[Entry], error: Exception | None) -> None:
        for _, future in batch:
            if future.done():
                continue
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)

    def _take(self) -> list[Entry]:
        """The next batch: queued parts in arrival order, up to `max_rows` rows, `max_bytes` bytes
        and `max_partitions` partitions; a part that would pass one waits for the next batch (a
        batch always takes at least one part)."""
        taken: list[Entry] = []
        left: list[Entry] = []
        count = 0
        size = 0
        partitions: set[int] = set()
        for entry in self._pending:
            part = entry[0]
            if taken and (count + part.rows > self.max_rows or size + len(part.block) > self.max_bytes):
                left.append(entry)
                continue
            if taken and len(partitions | part.partitions) > self.max_partitions:
                left.append(entry)
                continue
            taken.append(entry)
            count += part.rows
            size += len(part.block)
            partitions |= part.partitions
        self._pending = left
        self._pending_rows -= count
        self._pending_bytes -= size
        if self._pending:
            self._oldest = time.monotonic()
        return taken

    def _insert(self, parts: list[Part], first: int) -> None:
        if self._sequence is not None:
            # A staged request is a row of its own, numbered; nothing to deduplicate at this step
            # (a re-sent export is a new row, and its spans replace their copies in spans).
            settings: dict[str, Any] = {**self.format_settings, "insert_deduplicate": 0}
            sequence = self._sequence
            data = [piece for offset, part in enumerate(parts) for piece in sequence(part.block, first + offset)]
            self.store.insert_raw(self.table, self.columns, data, self.fmt, settings)
            return
        digests = [part.digest for part in parts]
        if None in digests:
            raise ValueError(f"parts for {self.table} carry no digest for the deduplication token; "
                             "a writer of parts without one must stage them (pass sequence=)")
        token = batch_token(self.table, [d for d in digests if d is not None])
        # The token reaches the tables written by materialized views too (spans behind span_exports).
        settings = {**self.format_settings, "insert_deduplicate": 1, "insert_deduplication_token": token,
                    "deduplicate_blocks_in_dependent_materialized_views": 1,
                    "max_partitions_per_insert_block": self.max_partitions}
        self.store.insert_raw(self.table, self.columns, b"".join(part.block for part in parts), self.fmt, settings)


def _first_line(exc: BaseException) -> str:
    """What went wrong, without the statement ClickHouse quotes after it."""
    text = str(exc).split(". In scope")[0].strip()
    return (text.splitlines() or [type(exc).__name__])[0][:500]
