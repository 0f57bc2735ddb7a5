"""Scorecards: per-evaluator scores with their uncertainty, and what the runs cost.

Inputs are runs and their evaluations; the output is a `Scorecard` (pydantic: it
is served as JSON) and its renderings as a terminal table and as Markdown.

Records are plain frozen dataclasses, not pydantic models: the store builds
hundreds of thousands of them per scorecard and they never cross HTTP.

The counting rules live in `evaluator_values`, once, so that a scorecard and a
comparison can never disagree about what a run is worth:

- `cancelled` runs are excluded from every score (the experiment was stopped;
  they say nothing about the agent) and counted in `Scorecard.cancelled_runs`.
- `failed` and `timeout` runs are never dropped. An evaluation of such a run is
  used when there is one; without one (or when the evaluator errored) the run
  counts as score 0 / not passed, and is counted in `imputed_failures`.
- A `completed` run without an evaluation is `unscored` and an evaluation that
  ended in an evaluator error is an `evaluator_error`: both are excluded from the
  score and counted, because the measurement, not the agent, failed. A scorecard
  with either is incomplete and says so in its notes.
"""

from __future__ import annotations

import functools
import io
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console, Group
from rich.table import Table

from . import stats

__all__ = [
    "RUN_STATUSES",
    "TRAJECTORY_STATUSES",
    "EvaluationRecord",
    "EvaluatorScorecard",
    "EvaluatorValues",
    "ExperimentRecords",
    "MetricSummary",
    "RunMetrics",
    "RunRecord",
    "RunStatus",
    "ScoreKind",
    "Scorecard",
    "TrajectoryStatus",
    "build_scorecard",
    "evaluator_values",
    "mean_scores",
    "render_markdown",
    "render_rich",
    "render_text",
    "summarize_metric",
]

RunStatus = Literal["completed", "failed", "cancelled", "timeout"]
TrajectoryStatus = Literal["valid", "partial", "invalid", "unavailable"]
ScoreKind = Literal["pass_fail", "score"]
RUN_STATUSES: tuple[RunStatus, ...] = ("completed", "failed", "cancelled", "timeout")
TRAJECTORY_STATUSES: tuple[TrajectoryStatus, ...] = ("valid", "partial", "invalid", "unavailable")


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """Metrics of one run. None means unknown; for cost it means unpriced (a model
    without a price), which is never the same as $0."""

    duration_seconds: float | None = None
    steps: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The final attempt of one (case, repetition) of an experiment."""

    run_id: str
    case_id: str
    repetition: int
    status: RunStatus
    trajectory_status: TrajectoryStatus | None = None
    metrics: RunMetrics = field(default_factory=RunMetrics)


@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One evaluator's latest verdict on one run.

    `error` set means the evaluator could not judge (endpoint down, unparseable
    verdict): score and passed are then ignored. `cost_usd` is the evaluator's own
    spend (an LLM judge); None = unpriced, 0.0 = free (code checks).
    """

    run_id: str
    evaluator: str
    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    error: str | None = None
    cost_usd: float | None = 0.0


STATUS_CODES: dict[str, int] = {"completed": 0, "failed": 1, "cancelled": 2, "timeout": 3}
_COMPLETED, _FAILED, _CANCELLED, _TIMEOUT = 0, 1, 2, 3
_STATUS_NAMES = list(STATUS_CODES)
_Derived = TypeVar("_Derived")
METRIC_NAMES = ("duration_seconds", "steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd")


@dataclass(frozen=True)
class EvaluatorColumns:
    """One evaluator's latest verdicts, one array entry per verdict on a final run. `run` indexes the runs of
    the `RecordColumns`; `passed` is 1, 0 or -1 (no verdict); NaN score = none, NaN cost = unpriced; the error
    and label texts are '' where `errored` / `has_label` say there is none."""

    run: np.ndarray
    score: np.ndarray
    passed: np.ndarray
    errored: np.ndarray
    error_text: list[str]
    label_text: list[str]
    has_label: np.ndarray
    cost: np.ndarray


@dataclass(frozen=True, eq=False)
class RecordColumns:
    """The final runs of an experiment and their latest evaluations as arrays, ordered by case then repetition:
    what scorecards and comparisons compute from, in numpy, without an object per run or per evaluation.

    `run_case` indexes `case_ids`; `status` holds STATUS_CODES; `metrics` are floats with NaN for unknown
    (for cost: unpriced)."""

    run_ids: list[str]
    case_ids: list[str]
    run_case: np.ndarray
    repetition: np.ndarray
    status: np.ndarray
    trajectory_status: list[str | None]
    metrics: dict[str, np.ndarray]
    evaluations: dict[str, EvaluatorColumns]

    @functools.cached_property
    def case_array(self) -> np.ndarray:
        """`case_ids` as a numpy string array (for pairing cases of two experiments)."""
        return np.array(self.case_ids, dtype=str)

    @staticmethod
    def case_index(case_per_run: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """(distinct case ids, the index of each run's case) for runs grouped by case."""
        if not case_per_run:
            return [], np.zeros(0, dtype=np.int64)
        cases = np.asarray(case_per_run, dtype=object)
        starts = np.flatnonzero(np.concatenate(([True], cases[1:] != cases[:-1])))
        run_case = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(cases))))
        return list(cases[starts]), run_case

    @classmethod
    def from_records(cls, by_case: Mapping[str, Sequence[RunRecord]], evaluations: Sequence[EvaluationRecord]
                     ) -> RecordColumns:
        runs = [run for case_runs in by_case.values() for run in case_runs]
        case_ids, run_case = cls.case_index([r.case_id for r in runs])
        position = {r.run_id: i for i, r in enumerate(runs)}
        metrics = {name: np.array([getattr(r.metrics, name) for r in runs], dtype=float) for name in METRIC_NAMES}
        # A later record for the same (run, evaluator) wins: re-scoring writes a new version, stores return
        # them oldest first.
        latest: dict[str, dict[int, EvaluationRecord]] = {}
        for ev in evaluations:
            latest.setdefault(ev.evaluator, {})
            at = position.get(ev.run_id)
            if at is not None:
                latest[ev.evaluator][at] = ev
        columns = {}
        for name, by_run in latest.items():
            evs = list(by_run.values())
            columns[name] = EvaluatorColumns(
                run=np.fromiter(by_run.keys(), dtype=np.int64, count=len(by_run)),
                score=np.array([ev.score for ev in evs], dtype=float),
                passed=np.array([-1 if ev.passed is None else int(ev.passed) for ev in evs], dtype=np.int8),
                errored=np.array([ev.error is not None for ev in evs], dtype=bool),
                error_text=[ev.error or "" for ev in evs], label_text=[ev.label or "" for ev in evs],
                has_label=np.array([ev.label is not None for ev in evs], dtype=bool),
                cost=np.array([ev.cost_usd for ev in evs], dtype=float))
        return cls([r.run_id for r in runs], case_ids, run_case, np.array([r.repetition for r in runs], dtype=np.int64),
                   np.array([STATUS_CODES[r.status] for r in runs], dtype=np.int8),
                   [r.trajectory_status for r in runs], metrics, columns)

    def runs(self) -> list[RunRecord]:
        """The runs as records (for pages that show them one by one)."""
        return [self.run_record(at) for at in range(len(self.run_ids))]

    def run_record(self, at: int) -> RunRecord:
        """The run at position `at` as a record: a page of 50 cases needs 250 of them, not 100,000."""
        m = [float(self.metrics[name][at]) for name in METRIC_NAMES]

        def known(v: float, integer: bool) -> Any:
            return None if math.isnan(v) else (int(v) if integer else v)

        return RunRecord(self.run_ids[at], self.case_ids[int(self.run_case[at])], int(self.repetition[at]),
                         _STATUS_NAMES[int(self.status[at])], self.trajectory_status[at],  # type: ignore[arg-type]
                         RunMetrics(known(m[0], False), known(m[1], True), known(m[2], True), known(m[3], True),
                                    known(m[4], True), known(m[5], False)))

    @functools.cached_property
    def _case_position(self) -> dict[str, int]:
        return {case: i for i, case in enumerate(self.case_ids)}

    @functools.cached_property
    def _case_starts(self) -> np.ndarray:
        # `run_case` never decreases: runs are grouped by case.
        return np.searchsorted(self.run_case, np.arange(len(self.case_ids) + 1))

    def runs_of(self, case_id: str) -> range:
        """The positions of one case's runs (empty for a case without one)."""
        i = self._case_position.get(case_id)
        if i is None:
            return range(0)
        return range(int(self._case_starts[i]), int(self._case_starts[i + 1]))

    def status_counts(self) -> dict[str, int]:
        counts = np.bincount(self.status.astype(np.int64), minlength=len(STATUS_CODES))
        return {name: int(counts[code]) for name, code in STATUS_CODES.items() if counts[code]}

    def not_cancelled(self, name: str) -> np.ndarray:
        """Metric `name` of the runs that were not cancelled (NaN where unknown)."""
        return self.metrics[name][self.status != _CANCELLED]  # type: ignore[no-any-return]

    @functools.cached_property
    def _verdict_index(self) -> dict[str, np.ndarray]:
        """evaluator → for each run position, the index of its verdict in that evaluator's columns, or -1."""
        index = {}
        for name, ev in self.evaluations.items():
            at = np.full(len(self.run_ids), -1, dtype=np.int64)
            at[ev.run] = np.arange(len(ev.run))
            index[name] = at
        return index

    def verdict(self, evaluator: str, at: int) -> EvaluationRecord | None:
        """The latest verdict of `evaluator` on the run at position `at`, if it has one."""
        index = self._verdict_index.get(evaluator)
        j = -1 if index is None else int(index[at])
        return None if j < 0 else self._verdict_record(evaluator, j)

    def _verdict_record(self, name: str, j: int) -> EvaluationRecord:
        ev = self.evaluations[name]
        score, passed, cost = float(ev.score[j]), int(ev.passed[j]), float(ev.cost[j])
        return EvaluationRecord(self.run_ids[int(ev.run[j])], name, None if math.isnan(score) else score,
                                None if passed < 0 else bool(passed), ev.label_text[j] if ev.has_label[j] else None,
                                None, ev.error_text[j] if ev.errored[j] else None, None if math.isnan(cost) else cost)

    def evaluation_records(self) -> list[EvaluationRecord]:
        return [self._verdict_record(name, j) for name, ev in self.evaluations.items() for j in range(len(ev.run))]


class ExperimentRecords:
    """Everything a scorecard is computed from: the final runs and their latest evaluations, given as records
    (`runs`, `evaluations`) or, from the store, as `columns`; each form is built from the other on demand.

    `evaluators`: the evaluators the experiment declared; default, every evaluator
    that appears in `evaluations`. Declaring them matters when every run of a case
    failed: with no evaluation at all the evaluator would otherwise never be seen.
    `case_evaluators`: which evaluators each case asked for; default, all of them
    apply to every case. A case missing from the mapping asks for none.
    `planned`: the runs the experiment planned, to say how many never ran.
    """

    def __init__(self, runs: Sequence[RunRecord] | None = None, evaluations: Sequence[EvaluationRecord] | None = None,
                 experiment_id: str | None = None, evaluators: Sequence[str] | None = None,
                 case_evaluators: Mapping[str, Collection[str]] | None = None, *, dataset: str | None = None,
                 dataset_version: str | None = None, planned: int | None = None,
                 columns: RecordColumns | None = None) -> None:
        if runs is None and columns is None:
            runs = ()
        self._runs = runs
        self._evaluations = evaluations if evaluations is not None or columns is not None else ()
        self._columns = columns
        self.experiment_id = experiment_id
        self.evaluators = evaluators
        self.case_evaluators = case_evaluators
        self.dataset = dataset
        self.dataset_version = dataset_version
        self.planned = planned
        self._values: dict[str, EvaluatorValues] = {}
        self._derived: dict[str, Any] = {}

    @functools.cached_property
    def runs(self) -> Sequence[RunRecord]:
        if self._runs is not None:
            return self._runs
        assert self._columns is not None
        return self._columns.runs()

    @functools.cached_property
    def evaluations(self) -> Sequence[EvaluationRecord]:
        if self._evaluations is not None:
            return self._evaluations
        assert self._columns is not None
        return self._columns.evaluation_records()

    @functools.cached_property
    def columns(self) -> RecordColumns:
        if self._columns is not None:
            return self._columns
        return RecordColumns.from_records(self.runs_by_case, self.evaluations)

    @functools.cached_property
    def evaluation_index(self) -> dict[str, dict[str, EvaluationRecord]]:
        """evaluator → run id → evaluation. A later record for the same pair wins
        (re-scoring writes a new version; stores return them oldest first)."""
        index: dict[str, dict[str, EvaluationRecord]] = {}
        for ev in self.evaluations:
            index.setdefault(ev.evaluator, {})[ev.run_id] = ev
        return index

    @functools.cached_property
    def evaluator_names(self) -> list[str]:
        seen = list(self.columns.evaluations) if self._columns is not None else list(self.evaluation_index)
        if self.evaluators is not None:
            names = list(dict.fromkeys(self.evaluators))
            names += [n for n in seen if n not in names]
            return names
        return seen

    @functools.cached_property
    def runs_by_case(self) -> dict[str, list[RunRecord]]:
        """case id → its runs ordered by repetition; rejects two runs for one slot."""
        by_case: dict[str, list[RunRecord]] = {}
        for run in self.runs:
            by_case.setdefault(run.case_id, []).append(run)
        for case, runs in by_case.items():
            if len(runs) > 1:
                runs.sort(key=lambda r: r.repetition)
                for a, b in itertools.pairwise(runs):
                    if a.repetition == b.repetition:
                        raise ValueError(
                            f"two runs for case {case!r} repetition {a.repetition} "
                            f"(run ids {a.run_id!r} and {b.run_id!r}); "
                            "pass only the final attempt of each run"
                        )
        return by_case

    @property
    def case_ids(self) -> list[str]:
        return self.columns.case_ids

    def applies(self, case_id: str, evaluator: str) -> bool:
        if self.case_evaluators is None:
            return True
        return evaluator in self.case_evaluators.get(case_id, ())

    @functools.cached_property
    def _applies_groups(self) -> tuple[list[tuple[str, ...]], np.ndarray]:
        """The distinct evaluator lists of the cases, and which one each case has: 100,000 cases usually
        share a handful, so a mask per evaluator is a look-up per distinct list, not per case."""
        assert self.case_evaluators is not None
        get = self.case_evaluators.get
        # map() keeps the per-case work in C, no Python frame per case.
        values = list(map(get, self.columns.case_ids, itertools.repeat(())))
        # Grouped by list object first, each distinct object made a tuple once: a stored experiment's cases
        # share their list objects (scoring/experiments.py keeps one per distinct list). Lists not shared
        # are grouped right too, by value, at about what grouping by value alone cost (100,000: 33 against 36-47 ms).
        ids = list(map(id, values))
        index: dict[tuple[str, ...], int] = {}
        code = {key: index.setdefault(tuple(value), len(index)) for key, value in zip(ids, values, strict=True)}
        return list(index), np.fromiter(map(code.__getitem__, ids), dtype=np.int64, count=len(ids))

    def applies_mask(self, evaluator: str) -> np.ndarray | None:
        """Per case of `columns`, whether `evaluator` applies to it; None: to every case."""
        if self.case_evaluators is None:
            return None
        groups, codes = self._applies_groups
        return np.array([evaluator in g for g in groups], dtype=bool)[codes] if groups else np.zeros(0, bool)

    def derived(self, key: str, compute: Callable[[], _Derived]) -> _Derived:
        """`compute()`, once per records object and `key` (the records never change; a page of a completed
        experiment, whose records the service caches, asks again on every view). Do not modify the result."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]  # type: ignore[no-any-return]

    def values(self, evaluator: str) -> EvaluatorValues:
        """`evaluator_values(self, evaluator)`, computed once per records object: the records are immutable, and
        a scorecard and a comparison (or several) of one experiment need the same values. Do not modify the
        result."""
        cached = self._values.get(evaluator)
        if cached is None:
            cached = self._values[evaluator] = evaluator_values(self, evaluator)
        return cached


@dataclass
class EvaluatorValues:
    """One evaluator's counted values summed by case: case `case_array[i]` has `counts[i]` counted runs whose
    values sum to `sums[i]` (cases without a counted run are left out). For pass/fail the values are 1.0 (passed)
    and 0.0. `low`/`high`: the smallest and largest counted value."""

    evaluator: str
    kind: ScoreKind
    case_array: np.ndarray
    sums: np.ndarray
    counts: np.ndarray
    imputed_failures: int = 0
    unscored: int = 0
    evaluator_errors: int = 0
    cost_usd: float = 0.0
    unpriced_evaluations: int = 0
    low: float | None = None
    high: float | None = None
    # The counted values run by run (grouped by case, in case order), for `cases`.
    run_values: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def case_ids(self) -> list[str]:
        return self.case_array.tolist()  # type: ignore[no-any-return]

    def case_means(self) -> np.ndarray:
        return self.sums / self.counts

    @functools.cached_property
    def cases(self) -> dict[str, list[float]]:
        """case id → its counted values in repetition order (for pages that show them)."""
        ends = np.cumsum(self.counts)
        return {case: chunk.tolist() for case, chunk in zip(self.case_ids, np.split(self.run_values, ends[:-1]),
                                                            strict=True)}


def evaluator_values(records: ExperimentRecords, evaluator: str) -> EvaluatorValues:
    """Apply the counting rules of this module to one evaluator, in numpy over the runs."""
    cols = records.columns
    n_runs = len(cols.run_case)
    counted_run = cols.status != _CANCELLED
    mask = records.applies_mask(evaluator)
    if mask is not None:
        counted_run &= mask[cols.run_case]
    has = np.zeros(n_runs, dtype=bool)
    score = np.full(n_runs, np.nan)
    passed = np.full(n_runs, -1, dtype=np.int8)
    errored = np.zeros(n_runs, dtype=bool)
    cost = np.full(n_runs, np.nan)
    ev = cols.evaluations.get(evaluator)
    if ev is not None and len(ev.run):
        has[ev.run] = True
        score[ev.run] = ev.score
        passed[ev.run] = ev.passed
        errored[ev.run] = ev.errored
        cost[ev.run] = ev.cost
    found = has & counted_run
    usable = found & ~errored
    # Pass/fail when every usable verdict says passed or not; otherwise the numeric score is the value and a
    # verdict without one is an evaluator error.
    pass_fail = not bool(np.any(usable & (passed < 0)))
    if pass_fail:
        value = (passed == 1).astype(float)
        valid = usable
    else:
        value = score
        valid = usable & ~np.isnan(score)
    failed = (cols.status == _FAILED) | (cols.status == _TIMEOUT)
    missing = counted_run & ~valid
    imputed = missing & failed
    counted = valid | imputed
    value = np.where(valid, value, 0.0)
    where = np.flatnonzero(counted)
    case_of = cols.run_case[where]
    kept = value[where]
    n_cases = len(cols.case_ids)
    sums = np.bincount(case_of, weights=kept, minlength=n_cases)
    counts = np.bincount(case_of, minlength=n_cases)
    present = np.flatnonzero(counts)
    priced = found & ~np.isnan(cost)
    return EvaluatorValues(
        evaluator=evaluator, kind="pass_fail" if pass_fail else "score",
        case_array=cols.case_array if len(present) == n_cases else cols.case_array[present], sums=sums[present],
        counts=counts[present],
        imputed_failures=int(imputed.sum()), unscored=int((missing & ~failed & ~has).sum()),
        evaluator_errors=int((missing & ~failed & has).sum()), cost_usd=math.fsum(cost[priced].tolist()),
        unpriced_evaluations=int((found & np.isnan(cost)).sum()),
        low=float(kept.min()) if len(kept) else None, high=float(kept.max()) if len(kept) else None,
        run_values=kept)


# --- the scorecard -----------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricSummary(_Model):
    """A run metric over the runs of an experiment.

    `total` is None whenever any run lacks the value: a cost total that silently
    skipped unpriced runs would read as a smaller bill. `known_total` is the sum
    over the runs that have it (a lower bound when `missing` > 0).
    `mean`, `p50` and `p90` are over the `n` runs that have the value, never with
    the others taken as 0: for cost, over the priced runs only (shown with their
    count when some are unpriced), and None (unknown) when none is priced.
    Percentiles are linear interpolation between closest ranks (numpy's default).
    """

    n: int = Field(description="runs with a value")
    missing: int = Field(description="runs without a value (for cost: unpriced)")
    total: float | None
    known_total: float
    mean: float | None = Field(description="over the n runs with a value (cost: the priced ones); None when n = 0")
    p50: float | None = Field(description="over the n runs with a value; None when n = 0")
    p90: float | None = Field(description="over the n runs with a value; None when n = 0")


class EvaluatorScorecard(_Model):
    evaluator: str
    kind: ScoreKind
    n: int = Field(description="runs counted, imputed failures included")
    cases: int
    repetitions: int = Field(description="most runs counted for one case")
    mean: float | None = Field(description="pass rate for pass/fail, mean score otherwise")
    passed: int | None = Field(description="runs passed (pass/fail only)")
    std_error: float | None = Field(description="cluster-robust (by case) standard error of the mean; with one "
                                    "case, the standard error of its runs")
    ci_low: float | None
    ci_high: float | None
    ci_method: Literal["wilson", "wilson-design-effect", "bootstrap-clustered", "none"] = Field(
        description="wilson: pass/fail, one run per case; wilson-design-effect: pass/fail with repetitions, or "
        "scores in [0, 1], Wilson on n / design effect; bootstrap-clustered: scores outside [0, 1]"
    )
    pass_at_k: dict[int, float] = Field(description="unbiased pass@k averaged over cases (pass/fail only)")
    pass_hat_k: dict[int, float] = Field(description="pass^k averaged over cases (pass/fail only)")
    imputed_failures: int = Field(
        description="failed/timed-out runs without a usable evaluation, counted as 0"
    )
    unscored: int = Field(description="completed runs with no evaluation yet (excluded)")
    evaluator_errors: int = Field(description="completed runs whose evaluation errored (excluded)")
    cost_usd: float | None = Field(
        description="the evaluator's own spend; None when any evaluation is unpriced"
    )
    unpriced_evaluations: int


class Scorecard(_Model):
    experiment_id: str | None
    planned_runs: int | None = Field(default=None, description="runs the experiment planned (cases × repetitions)")
    runs: int
    cases: int
    repetitions: int = Field(description="most runs of one case")
    status_counts: dict[str, int]
    trajectory_status_counts: dict[str, int]
    cancelled_runs: int = Field(description="excluded from every score")
    duration_seconds: MetricSummary
    steps: MetricSummary
    tool_calls: MetricSummary
    tokens: MetricSummary = Field(description="input + output tokens")
    input_tokens: MetricSummary
    output_tokens: MetricSummary
    cost_usd: MetricSummary
    evaluators: list[EvaluatorScorecard]
    confidence: float
    seed: int
    n_resamples: int
    notes: list[str]

    @property
    def complete(self) -> bool:
        """No run is waiting for a score and no evaluator failed to judge."""
        return all(e.unscored == 0 and e.evaluator_errors == 0 for e in self.evaluators)

    def evaluator(self, name: str) -> EvaluatorScorecard:
        for e in self.evaluators:
            if e.evaluator == name:
                return e
        known = ", ".join(e.evaluator for e in self.evaluators) or "none"
        raise KeyError(f"no evaluator {name!r} in this scorecard (evaluators: {known})")


def summarize_metric(values: Sequence[float | None]) -> MetricSummary:
    return summarize_array(np.array([np.nan if v is None else v for v in values], dtype=float))


def summarize_array(values: np.ndarray) -> MetricSummary:
    """`summarize_metric` of floats with NaN for unknown."""
    known = values[~np.isnan(values)]
    missing = len(values) - len(known)
    if not len(known):
        # No run at all spent nothing: the total over no runs is 0, as the experiment's header and list say it
        # (it read "$0" there and "unknown" here); with unpriced runs it is unknown. The mean of none is none.
        return MetricSummary(n=0, missing=missing, total=None if missing else 0.0, known_total=0.0, mean=None,
                             p50=None, p90=None)
    known_total = math.fsum(known.tolist())
    # Linear interpolation between closest ranks (type 7, numpy's default), as stats.percentile.
    p50, p90 = np.percentile(known, [50, 90])
    return MetricSummary(
        n=len(known),
        missing=missing,
        total=known_total if missing == 0 else None,
        known_total=known_total,
        mean=known_total / len(known),
        p50=float(p50),
        p90=float(p90),
    )


def run_metric_summaries(columns: RecordColumns) -> dict[str, MetricSummary]:
    """What the runs took, summed up one way wherever it is shown (the scorecard, the comparison page): over every
    final run, cancelled ones included (what a cancelled run spent was spent); tokens are input plus output, known
    where both are."""
    m = columns.metrics
    return {"duration_seconds": summarize_array(m["duration_seconds"]),
            "steps": summarize_array(m["steps"]),
            "tool_calls": summarize_array(m["tool_calls"]),
            "tokens": summarize_array(m["input_tokens"] + m["output_tokens"]),
            "input_tokens": summarize_array(m["input_tokens"]),
            "output_tokens": summarize_array(m["output_tokens"]),
            "cost_usd": summarize_array(m["cost_usd"])}


CiMethod = Literal["wilson", "wilson-design-effect", "bootstrap-clustered", "none"]


def _interval(values: EvaluatorValues, reps: int, *, confidence: float, seed: int, n_resamples: int
              ) -> tuple[stats.Interval, CiMethod]:
    """The mean's interval, by a method that never collapses to a point for finite n where the values are
    bounded: a clustered bootstrap gives [100%, 100%] when every run agrees, Wilson does not."""
    sums, counts = values.sums, values.counts
    if values.kind == "pass_fail" and reps == 1:
        return stats.wilson_interval(round(float(sums.sum())), values.n, confidence), "wilson"
    if values.kind == "pass_fail" or (values.low is not None and values.high is not None
                                      and 0.0 <= values.low and values.high <= 1.0):
        return stats.design_effect_wilson(sums, counts, confidence), "wilson-design-effect"
    # Unbounded scores: no binomial bound exists, so the clustered bootstrap (cases resampled whole). The
    # seed is the scorecard's, not derived from the evaluator's name: identical values under two evaluators
    # get the identical interval, and adding an evaluator changes no other one.
    if len(counts) == 1:
        # One case cannot be resampled (the interval was a point, whatever its runs said): its runs are the
        # sample, as the design effect of one case takes them for a pass rate.
        sums, counts = values.run_values, np.ones(len(values.run_values))
    boot = stats.bootstrap_clustered_mean_from_sums(sums, counts, seed=random.Random(seed), n_resamples=n_resamples,
                                                    confidence=confidence)
    return boot.interval, "bootstrap-clustered"


def _case_pairs(counts: np.ndarray, passes: np.ndarray) -> list[tuple[int, int, int]]:
    """The distinct (runs, passes) pairs of the cases, each with how many cases have it. Both are small
    integers (passes ≤ runs ≤ repetitions), so one pair is one bin: a bincount, not a sort of 100,000 pairs."""
    width = int(counts.max()) + 1
    tally = np.bincount(counts.astype(np.int64) * width + passes).tolist()
    return [(key // width, key % width, cases) for key, cases in enumerate(tally) if cases]


def _pass_k(pairs: list[tuple[int, int, int]], k: int, per_case: Callable[[int, int, int], float]) -> float:
    # Cases share few distinct (n, c) pairs: each is computed once, weighted by how many cases have it.
    return math.fsum(per_case(n, c, k) * m for n, c, m in pairs) / sum(m for _, _, m in pairs)


def _score_evaluator(
    values: EvaluatorValues, *, confidence: float, seed: int, n_resamples: int
) -> EvaluatorScorecard:
    n = values.n
    mean: float | None = None
    se: float | None = None
    interval: stats.Interval | None = None
    method: CiMethod = "none"
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    passed: int | None = None
    counts = values.counts
    reps = int(counts.max()) if len(counts) else 0
    if n:
        total = math.fsum(values.sums.tolist())
        mean = total / n
        # One case: its runs' spread (the clustered estimate needs two cases, and was 0 with one).
        se = (stats.standard_error(values.run_values.tolist()) if len(counts) == 1
              else stats.clustered_standard_error_from_sums(values.sums, counts))
        if values.kind == "pass_fail":
            passed = round(total)
            pairs = _case_pairs(counts, np.rint(values.sums).astype(np.int64))
            for k in range(1, int(counts.min()) + 1):
                pass_at[k] = _pass_k(pairs, k, stats.pass_at_k)
                pass_hat[k] = _pass_k(pairs, k, stats.pass_hat_k)
        interval, method = _interval(values, reps, confidence=confidence, seed=seed, n_resamples=n_resamples)
    return EvaluatorScorecard(
        evaluator=values.evaluator,
        kind=values.kind,
        n=n,
        cases=len(counts),
        repetitions=reps,
        mean=mean,
        passed=passed,
        std_error=se,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        ci_method=method,
        pass_at_k=pass_at,
        pass_hat_k=pass_hat,
        imputed_failures=values.imputed_failures,
        unscored=values.unscored,
        evaluator_errors=values.evaluator_errors,
        cost_usd=None if values.unpriced_evaluations else values.cost_usd,
        unpriced_evaluations=values.unpriced_evaluations,
    )


def _notes(
    runs: int, cancelled: int, evaluators: Sequence[EvaluatorScorecard], cost: MetricSummary,
    planned: int | None = None,
) -> list[str]:
    notes: list[str] = []
    if planned is not None and runs < planned:
        notes.append(
            f"incomplete: {planned - runs} of {planned} planned run(s) never ran; the scores cover the "
            f"{runs} that did."
        )
    if cancelled:
        notes.append(f"{cancelled} cancelled run(s) are excluded from every score.")
    for e in evaluators:
        if e.imputed_failures:
            notes.append(
                f"{e.evaluator}: {e.imputed_failures} failed or timed-out run(s) without an evaluation "
                "count as score 0 / not passed."
            )
        if e.unscored:
            notes.append(
                f"{e.evaluator}: {e.unscored} completed run(s) have no evaluation yet and are not counted; "
                "re-score the experiment to complete the scorecard."
            )
        if e.evaluator_errors:
            notes.append(
                f"{e.evaluator}: {e.evaluator_errors} evaluation(s) ended in an evaluator error and are not "
                "counted; see their explanations and re-score."
            )
        if e.unpriced_evaluations:
            notes.append(
                f"{e.evaluator}: {e.unpriced_evaluations} evaluation(s) unpriced; its cost is unknown."
            )
    if cost.missing:
        # Said beside the per-run figures too: a mean or p50 over 2 priced runs of 10 must not read as all 10's.
        spread = (f"its mean, p50 and p90 are over the {cost.n} priced run(s) only" if cost.n else
                  "its mean, p50 and p90 are unknown too (no run is priced)")
        notes.append(
            f"{cost.missing} run(s) are unpriced, so the total cost is unknown "
            f"(at least ${cost.known_total:.4f}) and {spread}; price their model with a rule in "
            "<data-dir>/prices.yaml (docs/trajectories.md, Prices) and restart `evalkit serve`: runs recorded from "
            "then on are priced."
        )
    return notes


def mean_scores(records: ExperimentRecords) -> dict[str, float | None]:
    """Mean (pass rate) per evaluator by the scorecard's counting rules, without its intervals."""
    out: dict[str, float | None] = {}
    for name in records.evaluator_names:
        values = records.values(name)
        out[name] = float(values.sums.sum()) / values.n if values.n else None
    return out


def build_scorecard(
    records: ExperimentRecords,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 2000,
) -> Scorecard:
    """Score an experiment. Deterministic for a given `seed`. Computed over the records' columns (numpy), with
    no object per run."""
    cols = records.columns
    codes = np.bincount(cols.status.astype(np.int64), minlength=len(STATUS_CODES))
    status_counts: dict[str, int] = {name: int(codes[code]) for name, code in STATUS_CODES.items()}
    trajectory_counts: dict[str, int] = {s: 0 for s in TRAJECTORY_STATUSES}
    for key, count in Counter(cols.trajectory_status).items():
        name = key or "unrecorded"
        trajectory_counts[name] = trajectory_counts.get(name, 0) + count
    metrics = run_metric_summaries(cols)
    cost = metrics["cost_usd"]
    scored = [
        _score_evaluator(
            records.values(name), confidence=confidence, seed=seed, n_resamples=n_resamples
        )
        for name in records.evaluator_names
    ]
    per_case = np.bincount(cols.run_case, minlength=len(cols.case_ids)) if len(cols.run_case) else np.zeros(0)
    runs = len(cols.run_ids)
    return Scorecard(
        experiment_id=records.experiment_id,
        planned_runs=records.planned,
        runs=runs,
        cases=len(cols.case_ids),
        repetitions=int(per_case.max()) if len(per_case) else 0,
        status_counts=status_counts,
        trajectory_status_counts=trajectory_counts,
        cancelled_runs=status_counts["cancelled"],
        duration_seconds=metrics["duration_seconds"],
        steps=metrics["steps"],
        tool_calls=metrics["tool_calls"],
        tokens=metrics["tokens"],
        input_tokens=metrics["input_tokens"],
        output_tokens=metrics["output_tokens"],
        cost_usd=cost,
        evaluators=scored,
        confidence=confidence,
        seed=seed,
        n_resamples=n_resamples,
        notes=_notes(runs, status_counts["cancelled"], scored, cost, records.planned),
    )


# --- rendering ---------------------------------------------------------------------------


def format_value(kind: ScoreKind, value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.1f}%" if kind == "pass_fail" else f"{value:.3f}"


def _ci(e: EvaluatorScorecard) -> str:
    if e.ci_low is None or e.ci_high is None:
        return "–"
    return f"[{format_value(e.kind, e.ci_low)}, {format_value(e.kind, e.ci_high)}]"


def _ks(values: dict[int, float]) -> str:
    if len(values) < 2:
        return "–"
    return " ".join(f"{k}:{v * 100:.0f}%" for k, v in sorted(values.items()))


def _money(m: MetricSummary) -> str:
    if m.n == 0:
        return "unknown" if m.missing else "$0.0000"  # no run spent nothing
    if m.total is None:
        return f"unknown (≥ ${m.known_total:.4f}, {m.missing} unpriced)"
    return f"${m.total:.4f}"


def _evaluator_money(sc: Scorecard) -> str:
    """What the evaluators (an LLM judge) spent, beside what the runs spent: judge spend is part of the bill."""
    unpriced = sum(e.unpriced_evaluations for e in sc.evaluators)
    known = math.fsum(e.cost_usd or 0.0 for e in sc.evaluators)
    parts = [f"{e.evaluator} ${e.cost_usd:.4f}" for e in sc.evaluators if e.cost_usd]
    detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
    if unpriced:
        return f"unknown (≥ ${known:.4f}, {unpriced} unpriced)"
    return f"${known:.4f}{detail}"


def _num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def _metric_rows(sc: Scorecard) -> list[tuple[str, str, str, str]]:
    def row(name: str, m: MetricSummary, digits: int, total: str | None = None) -> tuple[str, str, str, str]:
        if total is None:
            total = (
                _num(m.total, digits)
                if m.total is not None
                else ("–" if m.n == 0 else f"≥ {_num(m.known_total, digits)} ({m.missing} missing)")
            )
        return (name, total, _num(m.p50, digits), _num(m.p90, digits))

    def cost_row() -> tuple[str, str, str, str]:
        m = sc.cost_usd
        if not m.missing:
            return row("cost (USD)", m, 4, _money(m))
        # Over the priced runs only, saying how many: taken alone, "0.0000" read as what a run costs when most runs
        # were unpriced and the priced few cost nothing (a run that failed before its first model call).
        if m.n == 0:
            return ("cost (USD)", _money(m), "unknown", "unknown")
        of = f" ({m.n} of {m.n + m.missing} priced)"
        return ("cost (USD)", _money(m), _num(m.p50, 4) + of, _num(m.p90, 4) + of)

    spent = any(e.cost_usd or e.unpriced_evaluations for e in sc.evaluators)
    return [
        cost_row(),
        *([("evaluator cost (USD)", _evaluator_money(sc), "–", "–")] if spent else []),
        row("tokens", sc.tokens, 0),
        row("duration (s)", sc.duration_seconds, 1),
        row("steps", sc.steps, 0),
        row("tool calls", sc.tool_calls, 0),
    ]


def _status_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def _evaluator_row(e: EvaluatorScorecard) -> list[str]:
    flags = []
    if e.imputed_failures:
        flags.append(f"{e.imputed_failures} failed→0")
    if e.unscored:
        flags.append(f"{e.unscored} unscored")
    if e.evaluator_errors:
        flags.append(f"{e.evaluator_errors} errors")
    return [
        e.evaluator,
        "pass rate" if e.kind == "pass_fail" else "mean",
        str(e.n),
        format_value(e.kind, e.mean),
        _ci(e),
        _METHOD_LABELS[e.ci_method],
        format_value(e.kind, e.std_error),
        _ks(e.pass_at_k),
        _ks(e.pass_hat_k),
        ", ".join(flags),
    ]


_EVALUATOR_HEADERS = ["evaluator", "measure", "n", "value", "CI", "CI method", "± SE", "pass@k", "pass^k",
                      "notes"]
# Short enough for the table's column; `ci_method` in the JSON has the full names.
_METHOD_LABELS = {"wilson": "Wilson", "wilson-design-effect": "Wilson-deff", "bootstrap-clustered": "bootstrap",
                  "none": "–"}
_METHODS_TEXT = ("Wilson: one pass/fail run per case; Wilson-deff: Wilson on n / design effect (clustered by case), "
                 "for repetitions and scores in [0, 1]; bootstrap: cases resampled whole")


def render_rich(sc: Scorecard) -> Group:
    """The scorecard as rich renderables, for a live console."""
    title = f"Scorecard {sc.experiment_id}" if sc.experiment_id else "Scorecard"
    of = f" of {sc.planned_runs} planned" if sc.planned_runs is not None and sc.planned_runs != sc.runs else ""
    scores = Table(title=f"{title} — {sc.runs} runs{of}, {sc.cases} cases × ≤{sc.repetitions}")
    for h in _EVALUATOR_HEADERS:
        scores.add_column(h, justify="right" if h in {"n", "value", "± SE"} else "left")
    for e in sc.evaluators:
        scores.add_row(*_evaluator_row(e))
    metrics = Table(title="Runs")
    for h in ("metric", "total", "p50", "p90"):
        metrics.add_column(h, justify="left" if h == "metric" else "right")
    for r in _metric_rows(sc):
        metrics.add_row(*r)
    lines = [
        f"run status: {_status_line(sc.status_counts)}",
        f"trajectories: {_status_line(sc.trajectory_status_counts)}",
        f"intervals: {sc.confidence:.0%}, method in the table ({_METHODS_TEXT}; bootstrap: "
        f"{sc.n_resamples} resamples, seed {sc.seed})",
        *sc.notes,
    ]
    return Group(scores, metrics, *lines)


def render_text(sc: Scorecard, *, width: int = 120) -> str:
    """The terminal table as plain text (no colour codes), e.g. for logs."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(render_rich(sc))
    return buf.getvalue()


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def render_markdown(sc: Scorecard) -> str:
    title = f"## Scorecard {sc.experiment_id}" if sc.experiment_id else "## Scorecard"
    parts = [
        title,
        "",
        f"{sc.runs} runs over {sc.cases} cases (up to {sc.repetitions} repetitions). "
        f"Run status: {_status_line(sc.status_counts)}. "
        f"Trajectories: {_status_line(sc.trajectory_status_counts)}.",
        "",
        markdown_table(_EVALUATOR_HEADERS, [_evaluator_row(e) for e in sc.evaluators]),
        "",
        markdown_table(["metric", "total", "p50", "p90"], _metric_rows(sc)),
        "",
        f"Intervals are {sc.confidence:.0%}, method in the table ({_METHODS_TEXT}; bootstrap: "
        f"{sc.n_resamples} resamples, seed {sc.seed}).",
    ]
    if sc.notes:
        parts += ["", *(f"- {n}" for n in sc.notes)]
    return "\n".join(parts) + "\n"
