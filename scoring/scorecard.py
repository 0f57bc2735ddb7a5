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
import operator
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

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


@dataclass(frozen=True)
class ExperimentRecords:
    """Everything a scorecard is computed from.

    `evaluators`: the evaluators the experiment declared; default, every evaluator
    that appears in `evaluations`. Declaring them matters when every run of a case
    failed: with no evaluation at all the evaluator would otherwise never be seen.
    `case_evaluators`: which evaluators each case asked for; default, all of them
    apply to every case. A case missing from the mapping asks for none.
    """

    runs: Sequence[RunRecord]
    evaluations: Sequence[EvaluationRecord] = ()
    experiment_id: str | None = None
    evaluators: Sequence[str] | None = None
    case_evaluators: Mapping[str, Collection[str]] | None = None
    dataset: str | None = None
    dataset_version: str | None = None
    planned: int | None = None

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
        if self.evaluators is not None:
            names = list(dict.fromkeys(self.evaluators))
            names += [n for n in self.evaluation_index if n not in names]
            return names
        return list(self.evaluation_index)

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

    def applies(self, case_id: str, evaluator: str) -> bool:
        if self.case_evaluators is None:
            return True
        return evaluator in self.case_evaluators.get(case_id, ())

    @functools.cached_property
    def _values(self) -> dict[str, EvaluatorValues]:
        return {}

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
    """One evaluator's counted values, grouped by case (repetitions in order).
    For pass/fail the values are 1.0 (passed) and 0.0."""

    evaluator: str
    kind: ScoreKind
    cases: dict[str, list[float]]
    imputed_failures: int = 0
    unscored: int = 0
    evaluator_errors: int = 0
    cost_usd: list[float] = field(default_factory=list)
    unpriced_evaluations: int = 0

    @property
    def n(self) -> int:
        return sum(len(v) for v in self.cases.values())


def evaluator_values(records: ExperimentRecords, evaluator: str) -> EvaluatorValues:
    """Apply the counting rules of this module to one evaluator."""
    by_run = records.evaluation_index.get(evaluator, {})
    applies = records.case_evaluators
    # `records.applies` inlined: it is asked once per case and evaluator, 100,000s of times.
    runs = [
        run
        for case, case_runs in records.runs_by_case.items()
        if applies is None or evaluator in applies.get(case, ())
        for run in case_runs
        if run.status != "cancelled"
    ]
    get = by_run.get
    found = [get(run.run_id) for run in runs]
    # Pass/fail when every usable verdict says passed or not; otherwise the numeric
    # score is the value and a verdict without one is an evaluator error.
    pass_fail = all(ev.passed is not None for ev in found if ev is not None and ev.error is None)
    out = EvaluatorValues(evaluator=evaluator, kind="pass_fail" if pass_fail else "score", cases={})
    cases = out.cases
    # Counters and bound methods in locals: this loop runs once per run and evaluator (300,000 times for a
    # 100,000-run experiment with three evaluators) and attribute look-ups were most of its time.
    unpriced = imputed = unscored = errors = 0
    add_cost = out.cost_usd.append
    group_of = cases.get
    for run, ev in zip(runs, found, strict=True):
        value: float | None = None
        if ev is not None:
            cost = ev.cost_usd
            if cost is None:
                unpriced += 1
            else:
                add_cost(cost)
            if ev.error is None:
                if pass_fail:
                    value = 1.0 if ev.passed else 0.0
                elif ev.score is not None:
                    value = float(ev.score)
        if value is None:
            status = run.status
            if status == "failed" or status == "timeout":
                value = 0.0
                imputed += 1
            elif ev is None:
                unscored += 1
                continue
            else:
                errors += 1
                continue
        group = group_of(run.case_id)
        if group is None:
            cases[run.case_id] = [value]
        else:
            group.append(value)
    out.unpriced_evaluations, out.imputed_failures, out.unscored, out.evaluator_errors = (
        unpriced, imputed, unscored, errors)
    return out


# --- the scorecard -----------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricSummary(_Model):
    """A run metric over the runs of an experiment.

    `total` is None whenever any run lacks the value: a cost total that silently
    skipped unpriced runs would read as a smaller bill. `known_total` is the sum
    over the runs that have it (a lower bound when `missing` > 0).
    Percentiles are linear interpolation between closest ranks (numpy's default).
    """

    n: int = Field(description="runs with a value")
    missing: int = Field(description="runs without a value (for cost: unpriced)")
    total: float | None
    known_total: float
    mean: float | None
    p50: float | None
    p90: float | None


class EvaluatorScorecard(_Model):
    evaluator: str
    kind: ScoreKind
    n: int = Field(description="runs counted, imputed failures included")
    cases: int
    repetitions: int = Field(description="most runs counted for one case")
    mean: float | None = Field(description="pass rate for pass/fail, mean score otherwise")
    passed: int | None = Field(description="runs passed (pass/fail only)")
    std_error: float | None = Field(description="cluster-robust (by case) standard error of the mean")
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
    known = sorted([v for v in values if v is not None])
    missing = len(values) - len(known)
    known_total = math.fsum(known)
    if not known:
        return MetricSummary(n=0, missing=missing, total=None, known_total=0.0, mean=None, p50=None, p90=None)
    return MetricSummary(
        n=len(known),
        missing=missing,
        total=known_total if missing == 0 else None,
        known_total=known_total,
        mean=known_total / len(known),
        p50=stats.percentile(known, 50, presorted=True),
        p90=stats.percentile(known, 90, presorted=True),
    )


CiMethod = Literal["wilson", "wilson-design-effect", "bootstrap-clustered", "none"]


def _interval(
    values: EvaluatorValues, groups: list[list[float]], sums: list[float], sizes: list[int], reps: int, *,
    confidence: float, seed: int, n_resamples: int,
) -> tuple[stats.Interval, CiMethod]:
    """The mean's interval, by a method that never collapses to a point for finite n where the values are
    bounded: a clustered bootstrap gives [100%, 100%] when every run agrees, Wilson does not."""
    if values.kind == "pass_fail" and reps == 1:
        return stats.wilson_interval(round(math.fsum(sums)), values.n, confidence), "wilson"
    if values.kind == "pass_fail" or all(0.0 <= v <= 1.0 for g in groups for v in g):
        return stats.design_effect_wilson(sums, sizes, confidence), "wilson-design-effect"
    # Unbounded scores: no binomial bound exists, so the clustered bootstrap (cases resampled whole). The
    # seed is the scorecard's, not derived from the evaluator's name: identical values under two evaluators
    # get the identical interval, and adding an evaluator changes no other one.
    boot = stats.bootstrap_clustered_mean(groups, seed=random.Random(seed), n_resamples=n_resamples,
                                          confidence=confidence)
    return boot.interval, "bootstrap-clustered"


def _score_evaluator(
    values: EvaluatorValues, *, confidence: float, seed: int, n_resamples: int
) -> EvaluatorScorecard:
    groups = list(values.cases.values())
    n = values.n
    mean: float | None = None
    se: float | None = None
    interval: stats.Interval | None = None
    method: CiMethod = "none"
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    passed: int | None = None
    reps = max(map(len, groups), default=0)
    if n:
        # map() over 100,000 cases: the per-case work is one C call, without a Python frame per case.
        sums = list(map(math.fsum, groups))
        sizes = list(map(len, groups))
        total = math.fsum(sums)
        mean = total / n
        se = stats.clustered_standard_error_from_sums(sums, sizes)
        if values.kind == "pass_fail":
            passed = round(total)
            counts = list(zip(sizes, map(round, sums), strict=True))
            for k in range(1, min(sizes) + 1):
                pass_at[k] = stats.mean_pass_at_k(counts, k)
                pass_hat[k] = stats.mean_pass_hat_k(counts, k)
        interval, method = _interval(values, groups, sums, sizes, reps, confidence=confidence, seed=seed,
                                     n_resamples=n_resamples)
    return EvaluatorScorecard(
        evaluator=values.evaluator,
        kind=values.kind,
        n=n,
        cases=len(groups),
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
        cost_usd=None if values.unpriced_evaluations else math.fsum(values.cost_usd),
        unpriced_evaluations=values.unpriced_evaluations,
    )


def _notes(
    runs: Sequence[RunRecord], evaluators: Sequence[EvaluatorScorecard], cost: MetricSummary,
    planned: int | None = None,
) -> list[str]:
    notes: list[str] = []
    if planned is not None and len(runs) < planned:
        notes.append(
            f"incomplete: {planned - len(runs)} of {planned} planned run(s) never ran; the scores cover the "
            f"{len(runs)} that did."
        )
    cancelled = sum(1 for r in runs if r.status == "cancelled")
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
        notes.append(
            f"{cost.missing} run(s) are unpriced, so the total cost is unknown "
            f"(at least ${cost.known_total:.4f}); add the model to the price table."
        )
    return notes


def build_scorecard(
    records: ExperimentRecords,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 2000,
) -> Scorecard:
    """Score an experiment. Deterministic for a given `seed`."""
    runs = list(records.runs)
    by_case = records.runs_by_case
    status_counts: dict[str, int] = {s: 0 for s in RUN_STATUSES}
    trajectory_counts: dict[str, int] = {s: 0 for s in TRAJECTORY_STATUSES}
    for run in runs:
        status_counts[run.status] = status_counts.get(run.status, 0) + 1
        key = run.trajectory_status or "unrecorded"
        trajectory_counts[key] = trajectory_counts.get(key, 0) + 1

    metrics = [r.metrics for r in runs]

    def metric(name: str) -> MetricSummary:
        # attrgetter runs in C: seven metrics over 100,000 runs without a lambda call each.
        return summarize_metric(list(map(operator.attrgetter(name), metrics)))

    tokens = [None if m.input_tokens is None or m.output_tokens is None else m.input_tokens + m.output_tokens
              for m in metrics]
    cost = metric("cost_usd")
    scored = [
        _score_evaluator(
            records.values(name), confidence=confidence, seed=seed, n_resamples=n_resamples
        )
        for name in records.evaluator_names
    ]
    return Scorecard(
        experiment_id=records.experiment_id,
        planned_runs=records.planned,
        runs=len(runs),
        cases=len(by_case),
        repetitions=max((len(v) for v in by_case.values()), default=0),
        status_counts=status_counts,
        trajectory_status_counts=trajectory_counts,
        cancelled_runs=status_counts["cancelled"],
        duration_seconds=metric("duration_seconds"),
        steps=metric("steps"),
        tool_calls=metric("tool_calls"),
        tokens=summarize_metric(tokens),
        input_tokens=metric("input_tokens"),
        output_tokens=metric("output_tokens"),
        cost_usd=cost,
        evaluators=scored,
        confidence=confidence,
        seed=seed,
        n_resamples=n_resamples,
        notes=_notes(runs, scored, cost, records.planned),
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
        return "unknown" if m.missing else "–"
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

    spent = any(e.cost_usd or e.unpriced_evaluations for e in sc.evaluators)
    return [
        row("cost (USD)", sc.cost_usd, 4, _money(sc.cost_usd)),
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
        e.ci_method,
        format_value(e.kind, e.std_error),
        _ks(e.pass_at_k),
        _ks(e.pass_hat_k),
        ", ".join(flags),
    ]


_EVALUATOR_HEADERS = ["evaluator", "measure", "n", "value", "CI", "CI method", "± SE", "pass@k", "pass^k",
                      "notes"]
_METHODS_TEXT = ("wilson: one pass/fail run per case; wilson-design-effect: Wilson on n / design effect, for "
                 "repetitions and scores in [0, 1]; bootstrap-clustered: cases resampled whole")


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
