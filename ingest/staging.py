"""The ledger of staged span exports: which requests are acknowledged and not yet flattened.

Every span export is acknowledged once its request is a row of `span_staging` (a cheap
insert, ingest/tables.py) and flattened into `spans` behind, by ingest/flattener.py. Each
staged request gets a sequence number when its insert starts; inserts run concurrently and
may finish out of order, so the flattener only takes requests below every insert still
running (`durable_upto`), in order. A read that must see what was acknowledged before it
calls `caught_up` (the store's read barrier, evalkit/store.py).

Thread-safe: the writer updates it from the event loop, the flattener from its own thread,
and readers wait on it from any thread (the event loop's included: the flattener needs
nothing from the loop to make progress).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evalkit.ingest.encode import Part


@dataclass(frozen=True, order=True)
class Staged:
    """One staged request, as the flattener sizes batches by it."""

    seq: int
    rows: int = field(compare=False)
    size: int = field(compare=False)
    partitions: frozenset[int] = field(compare=False)


@dataclass
class _Range:
    first: int
    last: int
    done: bool = False


def _at(seq: int) -> Staged:
    return Staged(seq, 0, 0, frozenset())


class StagingLedger:
    def __init__(self, *, backlog_max_rows: int = 200_000) -> None:
        self.next_seq = 1
        # Past this many spans staged (or being staged) and not yet flattened, the writer holds
        # new batches back: acknowledgements then follow the flattener's pace instead of the
        # staging table (and a read's wait at the barrier) growing without bound.
        self.backlog_max_rows = backlog_max_rows
        self.backlog_rows = 0
        self.acked_upto = 0  # the highest sequence number of any acknowledged request
        self.flattened_upto = 0  # every staged request up to here is in spans (or kept aside)
        self._in_flight: dict[int, int] = {}  # first sequence number of an insert running -> rows
        self._landed: list[Staged] = []  # acknowledged, not yet flattened, by sequence number
        self._taken_upto = 0  # every request up to here is handed out to a flattening worker
        self._ranges: list[_Range] = []  # handed out to flattening workers, in order
        self._changed = threading.Condition()
        self.closing = False
        self.readers = 0  # reads waiting at the barrier now
        # Set while flattening fails for the store's sake: reads then wait at most about one retry
        # of it instead of each waiting out the barrier's whole bound.
        self.stalled = False

    def start_at(self, next_seq: int, flattened_upto: int, pending: Sequence[Staged]) -> None:
        """What a previous run left staged (start-up, before any insert)."""
        with self._changed:
            self.next_seq = max(self.next_seq, next_seq)
            self.flattened_upto = flattened_upto
            self._taken_upto = flattened_upto
            self.acked_upto = max([flattened_upto, *(s.seq for s in pending)])
            self._landed = sorted(pending)
            self.backlog_rows = sum(s.rows for s in pending)
            self._changed.notify_all()

    # -- the writer's side -------------------------------------------------------------
    def reserve(self, parts: Sequence[Part]) -> int:
        """Sequence numbers for one insert's requests (consecutive); returns the first."""
        rows = sum(part.rows for part in parts)
        with self._changed:
            first = self.next_seq
            self.next_seq += len(parts)
            self._in_flight[first] = rows
            self.backlog_rows += rows
        return first

    def landed(self, first: int, parts: Sequence[Part]) -> None:
        """The insert that reserved from `first` returned: its requests are acknowledged."""
        staged = [Staged(first + offset, part.rows, len(part.block), part.partitions)
                  for offset, part in enumerate(parts)]
        with self._changed:
            self._in_flight.pop(first)
            for entry in staged:
                bisect.insort(self._landed, entry)
            self.acked_upto = max(self.acked_upto, first + len(parts) - 1)
            self._changed.notify_all()

    def abandoned(self, first: int) -> None:
        """The insert that reserved from `first` failed: nothing of it is staged."""
        with self._changed:
            self.backlog_rows -= self._in_flight.pop(first)
            self._changed.notify_all()

    def has_room(self) -> bool:
        # One batch is always let through, so a backlog limit below a batch never blocks for good.
        return self.backlog_rows < self.backlog_max_rows or not (self._landed or self._in_flight)

    def wait_room(self, timeout: float) -> bool:
        """Block until the backlog has room (or closing), at most `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self.has_room() or self.closing, timeout)

    # -- the flattener's side ----------------------------------------------------------
    @property
    def durable_upto(self) -> int:
        """Every request up to here is either staged or will never be (its insert failed)."""
        return min(self._in_flight, default=self.next_seq) - 1

    def hand_out(self, choose: Callable[[list[Staged], int], tuple[list[Staged], int]], busy_min_rows: int = 0
                 ) -> tuple[list[Staged], int, int] | None:
        """Block until staged requests not yet handed out may be flattened; `choose(ready,
        durable_upto)` picks a batch (called under the ledger's lock: it must not block) and the
        sequence number its range ends at; while another range is in progress, only once
        `busy_min_rows` spans are ready (or a read waits, or closing). Returns (batch, range
        start, range end), the range registered as in progress; None once closing and nothing
        is left to hand out."""
        with self._changed:
            while True:
                upto = self.durable_upto
                start = bisect.bisect_right(self._landed, _at(self._taken_upto))
                ready = self._landed[start:bisect.bisect_right(self._landed, _at(upto))]
                busy = any(not r.done for r in self._ranges)
                if ready and busy and not (self.readers or self.closing) \
                        and sum(s.rows for s in ready) < busy_min_rows:
                    # Another batch is being flattened: let this one grow meanwhile (each batch
                    # has a fixed planning cost), unless a read waits for it.
                    self._changed.wait()
                    continue
                if ready:
                    batch, end = choose(ready, upto)
                    first = self._taken_upto + 1
                    self._taken_upto = end
                    self._ranges.append(_Range(first, end))
                    return batch, first, end
                if upto > self._taken_upto:
                    # Only numbers of failed inserts: nothing staged there, so done with at once.
                    self._ranges.append(_Range(self._taken_upto + 1, upto, done=True))
                    self._taken_upto = upto
                    self._advance()
                if self.closing and not self._in_flight and len(self._landed) == start:
                    return None
                self._changed.wait()

    def finish(self, first: int, rows: int) -> None:
        """The range handed out from `first` is flattened (or kept aside); `rows` spans left the
        backlog. The ledger advances over finished ranges in order only."""
        with self._changed:
            for entry in self._ranges:
                if entry.first == first:
                    entry.done = True
            self.backlog_rows -= rows
            self._advance()

    def _advance(self) -> None:
        advanced = False
        while self._ranges and self._ranges[0].done:
            self.flattened_upto = max(self.flattened_upto, self._ranges.pop(0).last)
            advanced = True
        if advanced:
            del self._landed[:bisect.bisect_right(self._landed, _at(self.flattened_upto))]
            self._changed.notify_all()

    @property
    def in_progress(self) -> bool:
        return bool(self._ranges)

    def wait_fuller(self, rows: int, timeout: float) -> None:
        """Block until `rows` spans are ready, a read waits at the barrier or closing, at most
        `timeout` seconds (the flattener's linger)."""
        def enough() -> bool:
            upto = self.durable_upto
            ready = self._landed[bisect.bisect_right(self._landed, _at(self._taken_upto)):
                                 bisect.bisect_right(self._landed, _at(upto))]
            return bool(self.readers or self.closing) or sum(s.rows for s in ready) >= rows

        with self._changed:
            self._changed.wait_for(enough, timeout)

    def close(self) -> None:
        """Shutting down: waits for room end; the flattener stops once nothing is staged."""
        with self._changed:
            self.closing = True
            self._changed.notify_all()

    def set_stalled(self, stalled: bool) -> None:
        with self._changed:
            self.stalled = stalled
            self._changed.notify_all()

    # -- readers -----------------------------------------------------------------------
    def caught_up(self, timeout: float) -> bool:
        """Wait until every request acknowledged before this call is flattened (at most `timeout`
        seconds); True when it is. Costs two integer reads when nothing is staged."""
        target = self.acked_upto
        if self.flattened_upto >= target:
            return True
        if self.stalled:
            # Flattening fails for the store's sake: wait no longer than one retry of it.
            timeout = min(timeout, 1.0)
        with self._changed:
            self.readers += 1
            self._changed.notify_all()  # a flattener lingering for a fuller batch goes now
            try:
                return self._changed.wait_for(lambda: self.flattened_upto >= target, timeout)
            finally:
                self.readers -= 1
