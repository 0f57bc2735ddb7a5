"""The flattener: staged span exports become rows of `spans`, in large batches, behind the
acknowledgement.

An export is acknowledged once its request is a row of `span_staging` (ingest/writer.py).
Worker threads (two: one flattening insert keeps about one core busy) take the staged
requests in sequence order, as many as fit a batch (by spans, bytes and days), and each
runs `INSERT INTO spans SELECT <ingest/flatten.py> FROM span_staging WHERE seq BETWEEN
first AND last` on a store connection of its own: the flattening SELECT is planned once
per batch instead of once per acknowledged insert, which was most of an insert's cost.
Before each batch every range in progress is recorded in `span_flatten_state`; each
insert carries a token made of its range, so after a crash each recorded range is
flattened again exactly as it was and ClickHouse drops what had landed. The ledger
(ingest/staging.py) counts a range flattened only once every range before it is. Staging
partitions are dropped once every request in them is flattened.

A batch the engine refuses for its content is split in halves and each flattened apart,
down to single requests; a request refused alone is moved to `span_staging_refused`
(counted on /metrics) and the rest goes on. A batch refused for want of memory is split in
halves the same way (a single request is retried). When the store itself fails, the batch is
retried after a pause and health says so.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from evalkit.ingest.encode import MAX_PARTITIONS_PER_INSERT
from evalkit.ingest.flatten import SPAN_COLUMNS, span_rows
from evalkit.ingest.span_checks import DAY_NS
from evalkit.ingest.staging import Staged, StagingLedger
from evalkit.ingest.tables import STAGING_PARTITION_REQUESTS
from evalkit.store import Store, StoreError, StoreUnavailable, is_data_error, is_memory_error

log = logging.getLogger("evalkit.ingest.flattener")


def flatten_token(first: int, last: int) -> str:
    """The deduplication token of flattening the staged range [first, last] (the same whenever
    that range is flattened again)."""
    return f"evalkit-flatten-{first}-{last}"


class Flattener:
    def __init__(
        self,
        store: Store,
        ledger: StagingLedger,
        *,
        max_rows: int = 50_000,
        max_bytes: int = 48 * 1024 * 1024,
        max_partitions: int = MAX_PARTITIONS_PER_INSERT,
        retry_delay: float = 0.5,
        linger: float = 0.0,
        workers: int = 1,
        on_batch: Callable[[int, float], None] | None = None,
        on_refused: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        partition_requests: int = STAGING_PARTITION_REQUESTS,
    ) -> None:
        self.store = store
        self.ledger = ledger
        self.max_rows = max_rows
        # The engine holds several times a batch's bytes while it flattens (docs/performance.md).
        self.max_bytes = max_bytes
        self.max_partitions = max_partitions
        self.retry_delay = retry_delay
        # How long to wait for a fuller batch when one is not full, unless a read waits for it.
        self.linger = linger
        self._on_batch = on_batch
        self._on_refused = on_refused
        self._clock = clock
        self._partition_requests = partition_requests
        self._statement = span_rows()
        self.threads = max(1, os.cpu_count() or 1)
        # The ranges a previous run may not have finished: flattened again first, each as it was.
        self._redo: list[tuple[int, int]] = []
        # Batches flattened at once, each on a store connection of its own: one flattening insert
        # runs on about one core.
        self.workers = max(1, workers)
        self._in_progress: dict[tuple[int, int], int] = {}  # token range -> where its range ends
        # When each running insert into spans began (wall clock), for `inserting_since`.
        self._inserting: dict[int, float] = {}
        self._record_lock = threading.Lock()
        self._drop_lock = threading.Lock()
        self._dropped_below = 0  # staging partitions below this index are gone
        self._failing: tuple[float, str] | None = None
        self._closing = False
        self._pause = threading.Event()  # the pause between retries, ended by close()
        self._threads: list[threading.Thread] = []
        self.refused_requests = 0

    # -- start-up ------------------------------------------------------------------------
    def recover(self) -> int:
        """Read what a previous run left staged into the ledger (before the writer starts);
        returns how many requests wait to be flattened. Blocking: run it in a thread."""
        with self.store.unfenced():
            return self._recover()

    def _recover(self) -> int:
        db = self.store.database
        state = self.store.query(f"SELECT ranges FROM {db}.span_flatten_state FINAL WHERE slot = 0")
        recorded = sorted((int(a), int(b)) for a, b in state[0][0]) if state else []
        handed_out = max((last for _, last in recorded), default=0)
        lowest = min((first for first, _ in recorded), default=0)
        rows = self.store.query(
            f"SELECT seq, request_bytes, length(starts), "
            f"arrayDistinct(arrayMap(t -> intDiv(t, {DAY_NS}), starts)) FROM ("
            f"SELECT seq, request_bytes, arrayFlatten(resource_spans.scope_spans.spans.start_time_unix_nano) AS starts "
            f"FROM {db}.span_staging WHERE seq >= {lowest}) ORDER BY seq")
        staged = [Staged(int(seq), int(count), int(size), frozenset(int(d) for d in days))
                  for seq, size, count, days in rows]

        def recorded_in(seq: int) -> bool:
            return any(first <= seq <= last for first, last in recorded)

        # Up to `handed_out`, only the recorded ranges may be unfinished: each is flattened again,
        # exactly as it was (its token drops what had landed); past it nothing was handed out.
        pending = [s for s in staged if s.seq > handed_out or recorded_in(s.seq)]
        self._redo = [(first, last) for first, last in recorded
                      if any(first <= s.seq <= last for s in pending)]
        lowest_seq, highest = self.store.query(f"SELECT min(seq), max(seq) FROM {db}.span_staging")[0]
        lowest_seq, highest = int(lowest_seq or 0), int(highest or 0)
        flattened_upto = self._redo[0][0] - 1 if self._redo else handed_out
        self.ledger.start_at(max(highest, handed_out) + 1, flattened_upto, pending)
        self._dropped_below = (lowest_seq if highest else flattened_upto + 1) // self._partition_requests
        return len(pending)

    def start(self) -> None:
        if not self._threads:
            self._threads = [threading.Thread(target=self._run, name=f"evalkit-flattener-{i}", daemon=True)
                             for i in range(self.workers)]
            for thread in self._threads:
                thread.start()

    async def close(self, timeout: float = 60.0) -> None:
        """Flatten everything staged (the writer is closed first), then stop. Past `timeout`
        what is left stays staged and is flattened at the next start."""
        self._closing = True
        self._pause.set()
        self.ledger.close()
        threads, self._threads = self._threads, []
        deadline = time.monotonic() + timeout
        for thread in threads:
            await asyncio.to_thread(thread.join, max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads) or self.ledger.in_progress:
            log.warning("stopping with %d staged spans not flattened yet; they are flattened at the next start",
                        self.ledger.backlog_rows)
        elif threads:
            # The writer closed and everything is flattened: no request can land in the partition
            # being filled any more, so it goes too.
            await asyncio.to_thread(self._drop_flattened, self.ledger.flattened_upto + self._partition_requests)

    def problem(self, within: float = 60.0) -> str | None:
        """Why staged spans are not reaching `spans`, if the latest try failed within `within` s."""
        if self._failing is None:
            return None
        when, reason = self._failing
        if self._clock() - when > within:
            return None
        return f"flattening staged spans into spans is failing: {reason}"

    # -- the loop (worker threads: blocking calls, and no need of the event loop to progress) --
    def _run(self) -> None:
        while True:
            if self.linger > 0 and not self._closing:
                self.ledger.wait_fuller(self.max_rows, self.linger)
            tokens: dict[str, tuple[int, int]] = {}
            got = self.ledger.hand_out(functools.partial(self._choose, tokens=tokens),
                                       busy_min_rows=self.max_rows // 2)
            if got is None:
                return
            batch, first, _ = got
            token_range = tokens["range"]
            while True:
                try:
                    done = self._flatten(batch, token_range, record=tokens.get("redo") is None)
                except Exception as exc:  # a fault of ours: logged, retried, never the thread's end
                    log.exception("flattening staged spans failed unexpectedly")
                    done = self._failed(sum(s.rows for s in batch), exc)
                if done:
                    break
                if self._closing:
                    return  # the store is failing: what is left stays staged for the next start
                self._pause.wait(self.retry_delay)
            with self._record_lock:
                self._in_progress.pop(token_range, None)
            self.ledger.finish(first, sum(s.rows for s in batch))
            self._drop_flattened(self.ledger.flattened_upto)

    def _choose(self, ready: Sequence[Staged], durable_upto: int, tokens: dict[str, tuple[int, int]]
                ) -> tuple[list[Staged], int]:
        """The next batch (called under the ledger's lock) and where its range ends; its token range
        goes into `tokens` (and the range into the ranges in progress, recorded before its insert)."""
        with self._record_lock:
            if self._redo:
                first, last = self._redo.pop(0)
                tokens["range"] = tokens["redo"] = (first, last)
                self._in_progress[(first, last)] = last
                return [s for s in ready if first <= s.seq <= last], last
            batch, end = self._plan(ready, durable_upto)
            tokens["range"] = (batch[0].seq, batch[-1].seq)
            self._in_progress[tokens["range"]] = end
            return batch, end

    def _plan(self, ready: Sequence[Staged], durable_upto: int) -> tuple[list[Staged], int]:
        """The next batch by spans, bytes and days, and where its range ends."""
        taken: list[Staged] = []
        rows = size = 0
        days: set[int] = set()
        for staged in ready:
            if taken and (rows + staged.rows > self.max_rows or size + staged.size > self.max_bytes
                          or len(days | staged.partitions) > self.max_partitions):
                return taken, taken[-1].seq
            taken.append(staged)
            rows += staged.rows
            size += staged.size
            days |= staged.partitions
        return taken, durable_upto

    def _flatten(self, batch: list[Staged], token_range: tuple[int, int], *, record: bool = True) -> bool:
        """Flatten one batch (splitting it when the engine refuses it); False when the store
        failed and the batch should be tried again later."""
        first, last = token_range
        rows = sum(s.rows for s in batch)
        started = time.monotonic()
        try:
            self._insert(first, last, record)
        except StoreError as exc:
            if not is_data_error(str(exc)):
                return self._failed(rows, exc)
            if len(batch) > 1:
                log.warning("flattening %d staged spans was refused (%s); flattening its %d requests apart",
                            rows, _first_line(exc), len(batch))
                middle = len(batch) // 2
                halves = (batch[:middle], batch[middle:])
                return all(self._flatten(half, (half[0].seq, half[-1].seq), record=False) for half in halves)
            try:
                self._set_aside(batch[0].seq, _first_line(exc))
            except Exception as aside:
                return self._failed(rows, aside)
            log.warning("a staged request of %d spans (sequence %d) cannot be flattened and was moved to "
                        "span_staging_refused: %s", rows, batch[0].seq, _first_line(exc))
            self.refused_requests += 1
            if self._on_refused is not None:
                self._on_refused(rows)
        except StoreUnavailable as exc:
            if len(batch) > 1 and is_memory_error(str(exc)):
                # A batch too large for the engine's memory cap: halves need less at once, and a
                # single request that still does not fit waits (health says why) like any outage.
                log.warning("flattening %d staged spans ran out of memory (%s); flattening its %d requests "
                            "in halves", rows, _first_line(exc), len(batch))
                middle = len(batch) // 2
                halves = (batch[:middle], batch[middle:])
                return all(self._flatten(half, (half[0].seq, half[-1].seq), record=False) for half in halves)
            return self._failed(rows, exc)
        except Exception as exc:  # the store's availability
            return self._failed(rows, exc)
        else:
            if self._on_batch is not None:
                self._on_batch(rows, time.monotonic() - started)
        if self._failing is not None:
            self._failing = None
            self.ledger.set_stalled(False)
        return True

    def _failed(self, rows: int, exc: Exception) -> bool:
        log.warning("flattening %d staged spans failed (retried): %s", rows, exc)
        self._failing = (self._clock(), _first_line(exc))
        self.ledger.set_stalled(True)
        return False

    # -- statements (on the flattener's thread) ------------------------------------------
    def _insert(self, first: int, last: int, record: bool) -> None:
        db = self.store.database
        if record:
            with self._record_lock:
                # Every range in progress (this one included), versioned by the highest sequence
                # number handed out: the latest row always lists whatever may be unfinished.
                ranges = ", ".join(f"({a}, {b})" for a, b in sorted(self._in_progress))
                version = max(self._in_progress.values())
                self.store.execute(f"INSERT INTO {db}.span_flatten_state (slot, version, ranges, at) "
                                   f"VALUES (0, {version}, [{ranges}], now64(3))",
                                   settings={"insert_deduplicate": 0})
        source = f"(SELECT * FROM {db}.span_staging WHERE seq BETWEEN {first} AND {last})"
        settings: dict[str, Any] = {
            "insert_deduplicate": 1, "insert_deduplication_token": flatten_token(first, last),
            # The token reaches the session index (and any view over spans) too.
            "deduplicate_blocks_in_dependent_materialized_views": 1,
            "max_partitions_per_insert_block": self.max_partitions,
            # Compiling the view's expressions to machine code costs more than it saves per batch.
            "compile_expressions": 0,
            # A batch is a few dozen staged rows (granules of 4, ingest/tables.py): read and
            # flattened by as many streams as there are cores, written by as many sinks, instead of
            # ClickHouse's one stream for a read this small (which left a core idle).
            "merge_tree_min_rows_for_concurrent_read": 1,
            "merge_tree_min_bytes_for_concurrent_read": 1,
            "max_insert_threads": self.threads,
            # Planning the flattening SELECT (and the views over spans) is most of a batch's fixed
            # cost; the plan's optimisations save nothing on it (one read by key, no sort, no
            # aggregation) and cost ~65 ms of CPU a batch (docs/performance.md, session 9).
            "query_plan_enable_optimizations": 0,
            # `spans` is a ReplacingMergeTree: by default each batch is sorted and replaced within
            # itself before it is written (so are the index tables fed from it), which reads never
            # rely on: spans are read with FINAL, the index tables aggregated, and the list's walk
            # over session_order takes a repeated row as it takes one from two batches. ~4 µs a span.
            "optimize_on_insert": 0,
        }
        began = time.time()
        self._inserting[threading.get_ident()] = began
        try:
            self.store.execute(f"INSERT INTO {db}.spans ({', '.join(SPAN_COLUMNS)}) "
                               f"{self._statement.format(source=source)}", settings=settings)
        finally:
            del self._inserting[threading.get_ident()]

    def inserting_since(self) -> float | None:
        """When the oldest insert into spans still running began (unix seconds), or None. Rows an insert's views
        stamp with the engine's clock (`trace_activity`) become visible only when it ends: a reader going
        forwards by those stamps stops before this (trajectory/session_rows.py)."""
        return min(list(self._inserting.values()), default=None)

    def _set_aside(self, seq: int, reason: str) -> None:
        db = self.store.database
        quoted = "'" + reason.replace("\\", "\\\\").replace("'", "\\'") + "'"
        self.store.execute(f"INSERT INTO {db}.span_staging_refused SELECT *, now64(3), {quoted} "
                           f"FROM {db}.span_staging WHERE seq = {seq}",
                           settings={"insert_deduplicate": 1, "insert_deduplication_token": f"evalkit-refused-{seq}"})

    def _drop_flattened(self, upto: int) -> None:
        """Drop the staging partitions whose every request is flattened (cheap: whole parts go)."""
        done = (upto + 1) // self._partition_requests
        db = self.store.database
        with self._drop_lock:
            self._drop_below(done, db)

    def _drop_below(self, done: int, db: str) -> None:
        while self._dropped_below < done:
            try:
                self.store.execute(f"ALTER TABLE {db}.span_staging DROP PARTITION ID '{self._dropped_below}'")
            except Exception as exc:  # tried again after the next batch; the rows are flattened already
                log.warning("could not drop staging partition %d: %s", self._dropped_below, exc)
                return
            self._dropped_below += 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).split(". In scope")[0].strip()
    return (text.splitlines() or [type(exc).__name__])[0][:500]
