"""Reading an experiment's scorecard records from the store as columns.

One query for the final runs and one for the latest evaluations (on another
connection, meanwhile), each aggregated by ClickHouse into one row of arrays
(`groupArray`) and read as Arrow (`Store.query_arrow`): each array arrives as one
buffer that numpy takes as it is, where the driver's own format decoded it value
by value (a 100,000-run experiment's records: 291 ms that way, 179 ms as Arrow,
~130 ms with the two reads overlapped; docs/performance.md, session 24). A
100,000-run experiment with three evaluators is 100,000 runs and 300,000
verdicts; as objects they cost more than every statistic computed from them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from evalkit.store import Store

from .scorecard import METRIC_NAMES, STATUS_CODES, EvaluatorColumns, RecordColumns

_FINAL_RUNS = (
    # LIMIT 1 BY keeps the whole row of the highest attempt of each slot; the stored run_id is run_id_of(...).
    "SELECT run_id, case_id, repetition, status, trajectory_status, "
    f"{', '.join(METRIC_NAMES)} FROM runs FINAL WHERE experiment_id = {{i:UInt64}} "
    "ORDER BY case_id, repetition, attempt DESC LIMIT 1 BY case_id, repetition"
)


# The evaluations are read on another connection while this thread reads and converts the runs: the engine
# works on one while Python converts the other.
_BESIDE = ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalkit-records")


def read_columns(store: Store, experiment_id: int) -> RecordColumns:
    evaluations = _BESIDE.submit(_evaluations, store, experiment_id)
    codes = list(STATUS_CODES)
    metrics = ", ".join(f"groupArray(ifNull(toFloat64({m}), nan))" for m in METRIC_NAMES)
    table = store.query_arrow(
        "SELECT groupArray(run_id), groupArray(case_id), groupArray(repetition), "
        f"groupArray(toInt8(indexOf({codes!r}, status) - 1)), groupArray(trajectory_status), {metrics} "
        f"FROM ({_FINAL_RUNS})", {"i": experiment_id})
    run_ids, case_per_run, trajectory = (_texts(table, 0, k) for k in (0, 1, 4))
    metric_columns = {name: _numbers(table, 0, 5 + k, float) for k, name in enumerate(METRIC_NAMES)}
    case_ids, run_case = RecordColumns.case_index(case_per_run)
    return RecordColumns(run_ids, case_ids, run_case, _numbers(table, 0, 2, np.int64), _numbers(table, 0, 3, np.int8),
                         [t or None for t in trajectory], metric_columns, evaluations.result())


def _cell(table: Any, row: int, column: int) -> Any:
    """The array in one cell of an Arrow table of arrays (a slice of the column's buffer, not a copy)."""
    return table.column(column)[row].values


def _strings(array: Any) -> list[str]:
    """An Arrow array (or column) of strings as Python strings, whether it came as strings or as binary (a
    server whose `output_format_arrow_string_as_string` is read-only sends binary)."""
    if pa.types.is_binary(array.type):
        array = array.cast(pa.string())
    return array.to_pylist()  # type: ignore[no-any-return]


def _texts(table: Any, row: int, column: int) -> list[str]:
    return _strings(_cell(table, row, column))


def _numbers(table: Any, row: int, column: int, dtype: type) -> np.ndarray:
    return np.asarray(_cell(table, row, column).to_numpy(zero_copy_only=False), dtype=dtype)


def _evaluations(store: Store, experiment_id: int) -> dict[str, EvaluatorColumns]:
    """evaluator → its latest verdict on each final run, the run given by its position among the final runs
    (the join is ClickHouse's, not a dictionary of run ids here)."""
    table = store.query_arrow(
        "SELECT evaluator, groupArray(pos), groupArray(ifNull(score, nan)), "
        # groupArray skips NULLs: nullable strings come as '' beside a flag saying which were NULL.
        "groupArray(toInt8(multiIf(passed IS NULL, -1, passed, 1, 0))), groupArray(ifNull(error, '')), "
        "groupArray(error IS NOT NULL), groupArray(ifNull(label, '')), groupArray(label IS NOT NULL), "
        "groupArray(ifNull(cost_usd, nan)) FROM ("
        # LIMIT 1 BY keeps the whole latest row: an error (NULL score) replaces an older score.
        " SELECT run_id, evaluator, score, passed, label, error, cost_usd FROM evaluations "
        " WHERE experiment_id = {i:UInt64} ORDER BY evaluator, run_id, version DESC LIMIT 1 BY evaluator, run_id"
        ") AS e INNER JOIN ("
        f" SELECT run_id, toInt64(row_number() OVER (ORDER BY case_id, repetition) - 1) AS pos FROM ({_FINAL_RUNS})"
        ") AS r ON e.run_id = r.run_id GROUP BY evaluator ORDER BY evaluator",
        {"i": experiment_id})
    names = _strings(table.column(0))
    return {name: EvaluatorColumns(
        _numbers(table, r, 1, np.int64), _numbers(table, r, 2, float), _numbers(table, r, 3, np.int8),
        _numbers(table, r, 5, bool), _texts(table, r, 4), _texts(table, r, 6),
        _numbers(table, r, 7, bool), _numbers(table, r, 8, float)) for r, name in enumerate(names)}
