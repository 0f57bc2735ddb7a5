"""Group commit: concurrent export requests share one insert, and each is acknowledged
only after that insert succeeded.

Requests queue their encoded rows (Native blocks, or framed protobuf exports that
ClickHouse flattens itself); an insert takes everything queued (up to `max_rows`)
once `max_rows` are waiting or the oldest has waited `max_delay`. Up to
`concurrency` inserts run at once; while they run the next batch gathers, so
batches grow with load. A bounded queue turns overload into a retryable answer
instead of memory growth.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evalkit.ingest.encode import Encoded
from evalkit.store import Store

log = logging.getLogger("evalkit.ingest.writer")


class Overloaded(Exception):
    """The queue is full; the client should retry after a pause."""


class WriteFailed(Exception):
    """The insert holding these rows failed; nothing of them is acknowledged."""


def batch_token(table: str, digests: Sequence[str]) -> str:
    """Deterministic per batch content, so a re-sent insert of the same rows is dropped by ClickHouse."""
    digest = hashlib.blake2b(table.encode(), digest_size=16)
    for item in sorted(digests):
        digest.update(item.encode())
    return digest.hexdigest()


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
        max_delay: float = 0.05,
        queue_max_rows: int = 400_000,
        concurrency: int = 1,
        on_batch: Callable[[int, float], None] | None = None,
    ) -> None:
        self.store = store
        self.table = table
        self.columns = tuple(columns)
        self.fmt = fmt
        self.format_settings = dict(format_settings or {})
        self.max_rows = max_rows
        self.max_delay = max_delay
        self.queue_max_rows = queue_max_rows
        self._on_batch = on_batch
        self._pending: list[tuple[Encoded, asyncio.Future[None]]] = []
        self._pending_rows = 0
        self._oldest = 0.0
        self._last_commit_end = 0.0
        self._last_batch_requests = 0
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        # An insert runs on one core; `concurrency` of them in flight (each on its own store
        # connection, see Store.insert_raw) use more.
        self.concurrency = max(1, concurrency)
        self._executor = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"evalkit-{table}-writer")

    @property
    def queued_rows(self) -> int:
        return self._pending_rows

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"writer:{self.table}")

    async def write(self, item: Encoded) -> None:
        """Returns once the rows are durable; raises Overloaded or WriteFailed otherwise."""
        if not item.rows:
            return
        if self._closing:
            raise WriteFailed("evalkit is shutting down; retry against a running server")
        if self._pending_rows and self._pending_rows + item.rows > self.queue_max_rows:
            raise Overloaded(f"{self._pending_rows} rows are waiting to be written")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append((item, future))
        self._pending_rows += item.rows
        self._wake.set()
        await future

    async def close(self) -> None:
        """Write everything queued, then stop."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None
        self._executor.shutdown(wait=True)

    async def _run(self) -> None:
        in_flight: set[asyncio.Task[None]] = set()
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
            now = time.monotonic()
            deadline = self._oldest + self.max_delay
            if len(self._pending) < self._last_batch_requests:
                # The clients the last insert acknowledged come back within milliseconds: give them
                # a moment, as one insert for all of them costs less than two (each insert has a
                # fixed planning cost of about 0.1 s).
                deadline = max(deadline, self._last_commit_end + self.max_delay)
            wait = deadline - now
            if self._pending_rows < self.max_rows and wait > 0 and not self._closing:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                except TimeoutError:
                    pass
                continue
            task = asyncio.get_running_loop().create_task(self._commit(self._take()))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)

    async def _commit(self, batch: list[tuple[Encoded, asyncio.Future[None]]]) -> None:
        """Insert one batch, then answer each of its requests."""
        items = [item for item, _ in batch]
        started = time.monotonic()
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._insert, items)
        except Exception as exc:  # every failure means: not acknowledged
            log.warning("insert of %d rows into %s failed: %s", sum(i.rows for i in items), self.table, exc)
            for _, future in batch:
                if not future.done():
                    future.set_exception(WriteFailed(str(exc)))
        else:
            for _, future in batch:
                if not future.done():
                    future.set_result(None)
            self._last_commit_end = time.monotonic()
            self._last_batch_requests = len(batch)
            if self._on_batch is not None:
                self._on_batch(sum(i.rows for i in items), time.monotonic() - started)

    def _take(self) -> list[tuple[Encoded, asyncio.Future[None]]]:
        taken: list[tuple[Encoded, asyncio.Future[None]]] = []
        count = 0
        while self._pending and (not taken or count + self._pending[0][0].rows <= self.max_rows):
            item = self._pending.pop(0)
            taken.append(item)
            count += item[0].rows
        self._pending_rows -= count
        if self._pending:
            self._oldest = time.monotonic()
        return taken

    def _insert(self, items: list[Encoded]) -> None:
        token = batch_token(self.table, [item.digest for item in items])
        # The token reaches the tables written by materialized views too (spans behind span_exports).
        settings = {**self.format_settings, "insert_deduplicate": 1, "insert_deduplication_token": token,
                    "deduplicate_blocks_in_dependent_materialized_views": 1}
        self.store.insert_raw(self.table, self.columns, b"".join(item.block for item in items), self.fmt, settings)
