"""Comparing a candidate experiment with a baseline, and the CI gate on top.

Pairing is per case: each side's value for a case is the mean over its counted
repetitions (the counting rules of `scorecard.evaluator_values`), and the delta
of a case is candidate − baseline. Cases are the unit, so a case with five
repetitions weighs the same as one with one. Higher scores are better.

The test per evaluator:
- pass/fail with one run per case on both sides: the exact McNemar test on the
  discordant cases (passed → failed, failed → passed);
- anything else (scores, or pass rates over repetitions, which are no longer one
  binary outcome per case): a paired bootstrap of the per-case deltas.
The delta's interval comes from the same method as the verdict, at confidence
1 − alpha, so the two always agree (the interval excludes 0 exactly when the
verdict is "better" or "worse"): for McNemar, the exact conditional interval
(Clopper-Pearson on the discordant pairs); for the bootstrap, its percentile
interval, whose p-value is counted on the same resamples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from . import stats
from .scorecard import (
    EvaluatorValues,
    ExperimentRecords,
    ScoreKind,
    format_value,
    markdown_table,
)

__all__ = [
    "CaseDelta",
    "Comparison",
    "EvaluatorComparison",
    "GateCheck",
    "GateConfig",
    "GateResult",
    "Verdict",
    "compare",
    "gate",
    "render_comparison_markdown",
    "render_gate_markdown",
]

# "not compared": no case is scored in both experiments, so there is no difference to test (saying "no
# significant difference" there reads as evidence that the two are alike).
Verdict = Literal["better", "worse", "no significant difference", "not compared"]
# Per-case deltas are means of a few floats; differences below this are rounding.
_EPS = 1e-12


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CaseDelta(_Model):
    case_id: str
    baseline: float
    candidate: float
    delta: float


class EvaluatorComparison(_Model):
    evaluator: str
    kind: ScoreKind
    paired_cases: int
    baseline_mean: float | None = Field(description="over all counted baseline runs, as in its scorecard")
    candidate_mean: float | None = Field(description="over all counted candidate runs, as in its scorecard")
    delta: float | None = Field(description="mean over paired cases of candidate − baseline case means")
    ci_low: float | None
    ci_high: float | None
    test: Literal["mcnemar-exact", "paired-bootstrap", "none"]
    p_value: float | None
    verdict: Verdict
    regressed_count: int = Field(description="paired cases that got worse")
    improved_count: int = Field(description="paired cases that got better")
    regressed: list[CaseDelta] = Field(description="the regressed cases, worst first, up to case_limit")
    improved: list[CaseDelta] = Field(description="the improved cases, best first, up to case_limit")
    candidate_incomplete: int = Field(description="candidate runs unscored or with an evaluator error")
    baseline_incomplete: int


class Comparison(_Model):
    candidate_id: str | None
    baseline_id: str | None
    alpha: float
    seed: int
    n_resamples: int
    case_tolerance: float
    case_limit: int | None
    evaluators: list[EvaluatorComparison]
    cases_only_in_candidate: list[str]
    cases_only_in_baseline: list[str]
    evaluators_only_in_candidate: list[str]
    evaluators_only_in_baseline: list[str]
    warnings: list[str] = Field(default_factory=list,
                                description="why the two may not be comparable (the same experiment, another "
                                            "dataset or version)")
    same_experiment: bool = Field(default=False, description="the baseline is the candidate itself: every case is "
                                                             "the same by construction, nothing is compared")

    def evaluator(self, name: str) -> EvaluatorComparison:
        for e in self.evaluators:
            if e.evaluator == name:
                return e
        known = ", ".join(e.evaluator for e in self.evaluators) or "none"
        raise KeyError(f"evaluator {name!r} was not compared (compared: {known})")


def _overall_mean(values: EvaluatorValues) -> float | None:
    n = values.n
    return math.fsum(values.sums.tolist()) / n if n else None


def _pair(cand: EvaluatorValues, base: EvaluatorValues) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shared case ids in order, their index in cand, in base)."""
    if not len(cand.case_array) or not len(base.case_array):
        empty = np.zeros(0, dtype=np.int64)
        return np.array([], dtype=str), empty, empty
    shared, in_cand, in_base = np.intersect1d(cand.case_array, base.case_array, assume_unique=True,
                                              return_indices=True)
    return shared, in_cand, in_base


def _compare_evaluator(
    name: str,
    cand: EvaluatorValues,
    base: EvaluatorValues,
    *,
    alpha: float,
    seed: int,
    n_resamples: int,
    case_tolerance: float,
    case_limit: int | None,
) -> EvaluatorComparison:
    shared_ids, in_cand, in_base = _pair(cand, base)
    cand_means = cand.case_means()[in_cand]
    base_means = base.case_means()[in_base]
    deltas = cand_means - base_means
    # Mixed kinds (an evaluator changed from pass/fail to scores) compare as scores.
    kind: ScoreKind = "pass_fail" if cand.kind == base.kind == "pass_fail" else "score"

    def listed(indices: np.ndarray) -> list[CaseDelta]:
        # Built without validation: the values are floats we just computed, and an
        # experiment of 100,000 cases would otherwise spend seconds here.
        return [
            CaseDelta.model_construct(
                case_id=str(shared_ids[i]),
                baseline=float(base_means[i]),
                candidate=float(cand_means[i]),
                delta=float(deltas[i]),
            )
            for i in indices.tolist()
        ]

    down = np.flatnonzero(deltas < -case_tolerance - _EPS)
    down = down[np.argsort(deltas[down], kind="stable")]
    up = np.flatnonzero(deltas > case_tolerance + _EPS)
    up = up[np.argsort(-deltas[up], kind="stable")]
    regressed = listed(down[:case_limit])
    improved = listed(up[:case_limit])
    common = {
        "evaluator": name,
        "kind": kind,
        "paired_cases": len(shared_ids),
        "baseline_mean": _overall_mean(base),
        "candidate_mean": _overall_mean(cand),
        "regressed": regressed,
        "improved": improved,
        "regressed_count": len(down),
        "improved_count": len(up),
        "candidate_incomplete": cand.unscored + cand.evaluator_errors,
        "baseline_incomplete": base.unscored + base.evaluator_errors,
    }
    shared = len(shared_ids)
    if not shared:
        return EvaluatorComparison(
            **common,  # type: ignore[arg-type]
            delta=None,
            ci_low=None,
            ci_high=None,
            test="none",
            p_value=None,
            verdict="not compared",
        )
    single_runs = bool(np.all(cand.counts[in_cand] == 1) and np.all(base.counts[in_base] == 1))
    test: Literal["mcnemar-exact", "paired-bootstrap"]
    if kind == "pass_fail" and single_runs:
        # Discordant pairs: b passed only in the baseline, c only in the candidate.
        b = int(np.count_nonzero(deltas < 0))
        c = int(np.count_nonzero(deltas > 0))
        p = stats.mcnemar_exact(b, c)
        interval = stats.mcnemar_interval(b, c, shared, 1.0 - alpha)
        estimate = (c - b) / shared
        test = "mcnemar-exact"
    else:
        boot = stats.paired_bootstrap(
            deltas,
            seed=stats_seed(seed),
            n_resamples=n_resamples,
            confidence=1.0 - alpha,
        )
        p, interval, estimate = boot.p_value, boot.interval, boot.estimate
        test = "paired-bootstrap"
    verdict: Verdict = "no significant difference"
    if p < alpha and (interval.low > 0 or interval.high < 0):
        verdict = "better" if interval.low > 0 else "worse"
    return EvaluatorComparison(
        **common,  # type: ignore[arg-type]
        delta=estimate,
        ci_low=interval.low,
        ci_high=interval.high,
        test=test,
        p_value=p,
        verdict=verdict,
    )


def stats_seed(seed: int) -> random.Random:
    # A fresh generator from the comparison's seed for every evaluator, never derived from its name: identical
    # deltas under two evaluators get the identical interval, and adding an evaluator changes no other one.
    return random.Random(f"compare:{seed}")


def compare(
    candidate: ExperimentRecords,
    baseline: ExperimentRecords,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 2000,
    case_tolerance: float = 0.0,
    case_limit: int | None = 1000,
) -> Comparison:
    """Compare `candidate` with `baseline`, evaluator by evaluator, paired by case.

    `alpha`: significance level of the verdicts (intervals are at 1 − alpha).
    `case_tolerance`: a case counts as regressed/improved only when its mean moved
    by more than this (0 = any change).
    `case_limit`: how many regressed and improved cases each evaluator lists (the
    worst and best first; the counts are always complete); None lists all.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if case_tolerance < 0:
        raise ValueError(f"case_tolerance must be >= 0, got {case_tolerance!r}")
    cand_names = candidate.evaluator_names
    base_names = set(baseline.evaluator_names)
    results = []
    for name in cand_names:
        if name not in base_names:
            continue
        cand_values = candidate.values(name)
        base_values = baseline.values(name)
        results.append(
            _compare_evaluator(
                name,
                cand_values,
                base_values,
                alpha=alpha,
                seed=seed,
                n_resamples=n_resamples,
                case_tolerance=case_tolerance,
                case_limit=case_limit,
            )
        )
    cand_cases = set(candidate.case_ids)
    base_cases = set(baseline.case_ids)
    warnings = _warnings(candidate, baseline, results)
    return Comparison(
        candidate_id=candidate.experiment_id,
        baseline_id=baseline.experiment_id,
        alpha=alpha,
        seed=seed,
        n_resamples=n_resamples,
        case_tolerance=case_tolerance,
        case_limit=case_limit,
        evaluators=results,
        cases_only_in_candidate=sorted(cand_cases - base_cases),
        cases_only_in_baseline=sorted(base_cases - cand_cases),
        evaluators_only_in_candidate=[n for n in cand_names if n not in base_names],
        evaluators_only_in_baseline=[n for n in baseline.evaluator_names if n not in set(cand_names)],
        warnings=warnings,
        same_experiment=_same_experiment(candidate, baseline),
    )


def _same_experiment(candidate: ExperimentRecords, baseline: ExperimentRecords) -> bool:
    return candidate.experiment_id is not None and candidate.experiment_id == baseline.experiment_id


def _warnings(candidate: ExperimentRecords, baseline: ExperimentRecords,
              results: Sequence[EvaluatorComparison]) -> list[str]:
    out: list[str] = []
    if _same_experiment(candidate, baseline):
        # Every case "same", no regression, a gate passed: what comparing with itself shows, as if it were news.
        out.append(f"the baseline is the candidate itself (experiment {candidate.experiment_id}): every case is the "
                   "same by construction and nothing is compared; pick another experiment as the baseline (list "
                   "them with `evalkit experiments list`)")
        return out
    if candidate.dataset and baseline.dataset and candidate.dataset != baseline.dataset:
        out.append(f"the experiments ran different datasets (candidate {candidate.dataset}, baseline "
                   f"{baseline.dataset}); only cases with the same id are paired, and they may not be the same task")
    elif candidate.dataset_version and baseline.dataset_version \
            and candidate.dataset_version != baseline.dataset_version:
        out.append(f"the experiments ran different versions of dataset {candidate.dataset or ''} (candidate "
                   f"{candidate.dataset_version}, baseline {baseline.dataset_version}); a case with the same id may "
                   "have changed")
    if results and all(e.paired_cases == 0 for e in results):
        out.append("no case is scored in both experiments: nothing is compared")
    return out


# --- the gate ---------------------------------------------------------------------------


class GateConfig(_Model):
    """Thresholds a candidate must meet. Every threshold left None is not checked.

    `min_score`: one floor for every gated evaluator, or a floor per evaluator name
    (pass rate for pass/fail, mean score otherwise), applied to the candidate's mean.
    `max_regressions`: the most regressed cases any one evaluator may show.
    `fail_on_significant_regression`: fail when a verdict is "worse".
    `allow_incomplete`: pass even when candidate runs are unscored or their
    evaluator errored; off by default, since a gate on missing data proves nothing.
    `evaluators`: the evaluators to gate; default, all compared ones.
    `min_pairs`: the fewest paired cases a gated evaluator needs; default, the fewest with which any
    paired test can reach the comparison's alpha (6 at 0.05: 2/2^5 > 0.05). Fewer is a failure: a gate
    that cannot see a regression proves nothing.
    """

    min_score: float | dict[str, float] | None = None
    max_regressions: int | None = Field(default=None, ge=0)
    fail_on_significant_regression: bool = True
    allow_incomplete: bool = False
    evaluators: list[str] | None = None
    min_pairs: int | None = Field(default=None, ge=1)


class GateCheck(_Model):
    evaluator: str
    check: Literal["min_score", "max_regressions", "significant_regression", "complete", "present", "pairs",
                   "baseline"]
    passed: bool
    detail: str


class GateResult(_Model):
    passed: bool
    reasons: list[str] = Field(description="what failed, one line each; empty when the gate passed")
    checks: list[GateCheck]
    comparison: Comparison


def _gate_one(e: EvaluatorComparison, config: GateConfig, min_pairs: int) -> list[GateCheck]:
    checks: list[GateCheck] = []
    name = e.evaluator
    enough = e.paired_cases >= min_pairs
    checks.append(
        GateCheck(
            evaluator=name,
            check="pairs",
            passed=enough,
            detail=(
                f"{name}: {e.paired_cases} paired case(s), at least {min_pairs} needed"
                + ("" if enough else "; with fewer, no regression can be significant: add cases to the "
                   "dataset, compare experiments over the same case ids, or lower min_pairs to gate on fewer")
            ),
        )
    )
    floor = config.min_score.get(name) if isinstance(config.min_score, dict) else config.min_score
    if floor is not None:
        value = e.candidate_mean
        ok = value is not None and value >= floor
        shown = format_value(e.kind, value)
        checks.append(
            GateCheck(
                evaluator=name,
                check="min_score",
                passed=ok,
                detail=f"{name}: score {shown} {'≥' if ok else '<'} minimum {format_value(e.kind, floor)}",
            )
        )
    if config.max_regressions is not None:
        count = e.regressed_count
        ok = count <= config.max_regressions
        listed = ", ".join(d.case_id for d in e.regressed[:10]) + (" …" if count > 10 else "")
        detail = f"{name}: {count} regressed case(s), at most {config.max_regressions} allowed"
        checks.append(
            GateCheck(
                evaluator=name,
                check="max_regressions",
                passed=ok,
                detail=detail + (f" ({listed})" if count else ""),
            )
        )
    if config.fail_on_significant_regression:
        ok = e.verdict != "worse"
        p = "–" if e.p_value is None else f"{e.p_value:.4g}"
        checks.append(
            GateCheck(
                evaluator=name,
                check="significant_regression",
                passed=ok,
                detail=f"{name}: {e.verdict} ({e.test}, p={p}, alpha from the comparison)",
            )
        )
    if not config.allow_incomplete:
        ok = e.candidate_incomplete == 0
        checks.append(
            GateCheck(
                evaluator=name,
                check="complete",
                passed=ok,
                detail=(
                    f"{name}: {e.candidate_incomplete} candidate run(s) unscored or with an evaluator error"
                    + ("" if ok else "; re-score the candidate, or set allow_incomplete")
                ),
            )
        )
    return checks


def gated_against_itself(experiment_id: str | int | None) -> str:
    """Why a gate whose baseline is its candidate is refused, and what to pass instead."""
    return (f"experiment {experiment_id} is gated against itself, which passes whatever changed (nothing can regress "
            f"against itself); pass the baseline's id, the experiment before the change: `evalkit experiments gate "
            f"{experiment_id} --baseline N` (baseline_id in the API; list them with `evalkit experiments list`)")


def gate(comparison: Comparison, config: GateConfig) -> GateResult:
    """Judge a comparison against the thresholds of `config`."""
    compared = {e.evaluator: e for e in comparison.evaluators}
    wanted = list(config.evaluators) if config.evaluators is not None else list(compared)
    if isinstance(config.min_score, dict):
        wanted += [n for n in config.min_score if n not in wanted]
    checks: list[GateCheck] = []
    min_pairs = config.min_pairs if config.min_pairs is not None else stats.min_pairs_for(comparison.alpha)
    if comparison.same_experiment:
        # Nothing regresses against itself: in CI such a gate is a misconfigured baseline that passes whatever
        # changed. (The API and the CLI refuse it before comparing; the compare page's gate says it here.)
        checks.append(GateCheck(evaluator="", check="baseline", passed=False,
                                detail=gated_against_itself(comparison.candidate_id)))
    if not wanted:
        checks.append(GateCheck(evaluator="", check="present", passed=False,
                                detail="no evaluator scores both experiments: there is nothing to gate on"))
    for name in wanted:
        e = compared.get(name)
        if e is None:
            where = (
                "only in the candidate"
                if name in comparison.evaluators_only_in_candidate
                else "only in the baseline"
                if name in comparison.evaluators_only_in_baseline
                else "in neither experiment"
            )
            checks.append(
                GateCheck(
                    evaluator=name,
                    check="present",
                    passed=False,
                    detail=f"{name}: cannot gate, the evaluator is {where}; score both experiments with it",
                )
            )
            continue
        checks.extend(_gate_one(e, config, min_pairs))
    reasons = [c.detail for c in checks if not c.passed]
    return GateResult(passed=not reasons, reasons=reasons, checks=checks, comparison=comparison)


# --- reports ----------------------------------------------------------------------------


def _signed(kind: ScoreKind, v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v * 100:+.1f} pp" if kind == "pass_fail" else f"{v:+.3f}"


def _case_list(deltas: Sequence[CaseDelta], total: int, kind: ScoreKind, limit: int) -> str:
    shown = [
        f"`{d.case_id}` ({format_value(kind, d.baseline)} → {format_value(kind, d.candidate)})"
        for d in deltas[:limit]
    ]
    more = total - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def render_comparison_markdown(comparison: Comparison, *, case_limit: int = 20) -> str:
    c = comparison
    head = f"## {c.candidate_id or 'candidate'} vs baseline {c.baseline_id or 'baseline'}"
    rows = [
        [
            e.evaluator,
            format_value(e.kind, e.baseline_mean),
            format_value(e.kind, e.candidate_mean),
            _signed(e.kind, e.delta),
            f"[{_signed(e.kind, e.ci_low)}, {_signed(e.kind, e.ci_high)}]" if e.ci_low is not None else "–",
            e.test,
            "–" if e.p_value is None else f"{e.p_value:.4g}",
            e.verdict,
            str(e.paired_cases),
            f"{e.regressed_count} / {e.improved_count}",
        ]
        for e in c.evaluators
    ]
    parts = [
        head,
        "",
        # Comparing an experiment with itself is a mistake to see before the table of "same" verdicts, not after.
        *([f"⚠ {c.warnings[0]}", ""] if c.same_experiment and c.warnings else []),
        markdown_table(
            [
                "evaluator",
                "baseline",
                "candidate",
                "Δ",
                f"{1 - c.alpha:.0%} CI",
                "test",
                "p",
                "verdict",
                "paired cases",
                "regressed / improved",
            ],
            rows,
        ),
        "",
        f"Paired per case (mean over repetitions); significance at alpha = {c.alpha}; "
        f"bootstrap {c.n_resamples} resamples, seed {c.seed}.",
    ]
    if c.warnings and not c.same_experiment:
        parts += ["", *(f"⚠ {w}" for w in c.warnings)]
    for e in c.evaluators:
        if e.regressed:
            shown = _case_list(e.regressed, e.regressed_count, e.kind, case_limit)
            parts += ["", f"**{e.evaluator} — regressed:** {shown}"]
        if e.improved:
            shown = _case_list(e.improved, e.improved_count, e.kind, case_limit)
            parts += ["", f"**{e.evaluator} — improved:** {shown}"]
    for label, items in (
        ("Cases only in the candidate", c.cases_only_in_candidate),
        ("Cases only in the baseline", c.cases_only_in_baseline),
        ("Evaluators only in the candidate", c.evaluators_only_in_candidate),
        ("Evaluators only in the baseline", c.evaluators_only_in_baseline),
    ):
        if items:
            shown = ", ".join(f"`{i}`" for i in items[:case_limit])
            more = len(items) - case_limit
            parts += [
                "",
                f"{label} ({len(items)}, not compared): {shown}" + (f" and {more} more" if more > 0 else ""),
            ]
    return "\n".join(parts) + "\n"


def render_gate_markdown(result: GateResult) -> str:
    status = "✅ **Gate passed**" if result.passed else "❌ **Gate failed**"
    parts = [status, ""]
    if result.reasons:
        parts += [*(f"- {r}" for r in result.reasons), ""]
    parts.append(render_comparison_markdown(result.comparison))
    return "\n".join(parts)
