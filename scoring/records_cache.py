"""The scorecard records of completed experiments, kept in memory while their rows are unchanged.

Reading and indexing the records of a 100,000-run experiment takes seconds, and a
completed experiment is read again and again (its scorecard page, every comparison
against it as a baseline) while its rows stay as they are. An entry is used only
while the experiment's row token is unchanged: the highest row version and the row
count of its runs and of its evaluations. Every write adds a row with a new, higher
version (a re-score appends an evaluation version, a re-fetched trajectory a run
version), so a write by this or any other process is a miss; a background merge
that collapses duplicate rows lowers a count, which costs one needless re-read.

What is computed from an entry's records (its scorecard, comparisons) is kept on
the entry, so it goes when the records go.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from evalkit.store import Store

from .scorecard import ExperimentRecords

T = TypeVar("T")
Token = tuple[int, int, int, int]

# A 100,000-run experiment with three evaluators holds ~100 MB of records; a comparison needs two.
MAX_ENTRIES = 4
# Comparisons against different baselines or alphas kept per entry.
MAX_DERIVED = 16


@dataclass
class Entry:
    token: Token
    evaluators: list[str]
    case_evaluators: dict[str, list[str]]
    records: ExperimentRecords
    # Unique per entry, never reused: what another entry derives from this one (a comparison against it as the
    # baseline) is keyed by it, without holding this entry's records alive.
    serial: int = 0
    derived: dict[tuple[Any, ...], Any] = field(default_factory=dict)


def row_token(store: Store, experiment_id: int) -> Token:
    """What changes whenever a run or an evaluation of the experiment is written (see the module doc)."""
    rows = store.query(
        "SELECT (SELECT tuple(max(version), count()) FROM runs WHERE experiment_id = {i:UInt64}), "
        "(SELECT tuple(max(version), count()) FROM evaluations WHERE experiment_id = {i:UInt64})",
        {"i": experiment_id})
    (runs_version, runs_count), (evals_version, evals_count) = rows[0]
    return int(runs_version), int(runs_count), int(evals_version), int(evals_count)


class RecordsCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[int, Entry] = OrderedDict()
        self._lock = threading.Lock()  # the service reads the store from worker threads
        self._serial = 0

    def get(self, experiment_id: int, token: Token, evaluators: Sequence[str],
            case_evaluators: Mapping[str, Collection[str]]) -> Entry | None:
        with self._lock:
            entry = self._entries.get(experiment_id)
            # The declared evaluators are part of the records; a config change must not serve old ones.
            if entry is None or entry.token != token or entry.evaluators != list(evaluators) \
                    or entry.case_evaluators != case_evaluators:
                return None
            self._entries.move_to_end(experiment_id)
            return entry

    def put(self, experiment_id: int, token: Token, evaluators: list[str], case_evaluators: dict[str, list[str]],
            records: ExperimentRecords) -> Entry:
        """Keep `records`; the caller hands over `evaluators` and `case_evaluators` and must not change them."""
        with self._lock:
            self._serial += 1
            entry = Entry(token, evaluators, case_evaluators, records, self._serial)
            self._entries[experiment_id] = entry
            self._entries.move_to_end(experiment_id)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return entry

    def derived(self, entry: Entry, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """`compute()` once per entry and key (two threads may both compute it; either result is the same)."""
        with self._lock:
            if key in entry.derived:
                return entry.derived[key]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            if len(entry.derived) >= MAX_DERIVED:
                entry.derived.clear()
            entry.derived[key] = value
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
