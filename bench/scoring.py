"""Scorecard and comparison time for synthetic experiments, in memory.

    /work/venv/bin/python bench/scoring.py [--runs 1000 100000] [--repetitions 5]

Each experiment has runs = cases × repetitions, three evaluators (a pass/fail
check, a scored judge, a trajectory check), 5% failed and 1% timed-out runs,
1% unpriced runs. Record building is timed apart: the store does it, not the
scorecard. Times are wall-clock seconds, best of --repeat.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from evalkit.scoring.compare import GateConfig, compare, gate
from evalkit.scoring.scorecard import (
    EvaluationRecord,
    ExperimentRecords,
    RunMetrics,
    RunRecord,
    build_scorecard,
)


def synthetic(runs: int, repetitions: int, shift: float, seed: int, eid: str) -> ExperimentRecords:
    rng = random.Random(seed)
    cases = runs // repetitions
    run_records: list[RunRecord] = []
    evals: list[EvaluationRecord] = []
    for c in range(cases):
        difficulty = rng.random()
        for r in range(repetitions):
            rid = f"{eid}:{c}:{r}"
            roll = rng.random()
            status = "failed" if roll < 0.05 else "timeout" if roll < 0.06 else "completed"
            run_records.append(
                RunRecord(
                    rid,
                    f"case-{c}",
                    r,
                    status,  # type: ignore[arg-type]
                    "valid" if status == "completed" else "partial",
                    RunMetrics(
                        duration_seconds=rng.uniform(1, 60),
                        steps=rng.randint(1, 30),
                        tool_calls=rng.randint(0, 20),
                        input_tokens=rng.randint(500, 50_000),
                        output_tokens=rng.randint(50, 5_000),
                        cost_usd=None if rng.random() < 0.01 else rng.uniform(0.001, 0.5),
                    ),
                )
            )
            if status != "completed":
                continue
            p = min(1.0, max(0.0, 1 - difficulty + shift))
            evals.append(EvaluationRecord(rid, "exact", passed=rng.random() < p, score=None))
            evals.append(
                EvaluationRecord(rid, "judge", score=min(1.0, max(0.0, rng.gauss(p, 0.2))), cost_usd=0.002)
            )
            evals.append(EvaluationRecord(rid, "no_errors", passed=rng.random() < 0.9))
    return ExperimentRecords(run_records, evals, experiment_id=eid)


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def fresh(r: ExperimentRecords) -> ExperimentRecords:
    # A new object each time: the run and evaluation indexes are cached per object.
    return ExperimentRecords(r.runs, r.evaluations, experiment_id=r.experiment_id)


def measure(runs: int, reps: int, resamples: int, repeat: int) -> None:
    t0 = time.perf_counter()
    cand = synthetic(runs, reps, 0.03, 1, "cand")
    base = synthetic(runs, reps, 0.0, 2, "base")
    build = (time.perf_counter() - t0) / 2
    t_sc, _ = best_of(repeat, lambda: build_scorecard(fresh(cand), n_resamples=resamples))
    t_cmp, result = best_of(
        repeat,
        lambda: gate(
            compare(fresh(cand), fresh(base), n_resamples=resamples),
            GateConfig(min_score=0.5, max_regressions=runs),
        ),
    )
    verdicts = ", ".join(f"{e.evaluator}={e.verdict}" for e in result.comparison.evaluators)
    cases = runs // reps
    print(f"{runs:>8} {reps:>4} {cases:>7} {build:>13.3f}s {t_sc:>9.3f}s {t_cmp:>12.3f}s  {verdicts}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"bootstrap resamples: {args.resamples}; best of {args.repeat}; 3 evaluators per run")
    print(
        f"{'runs':>8} {'reps':>4} {'cases':>7} {'build records':>14} {'scorecard':>10} {'compare+gate':>13}"
    )
    for runs in args.runs:
        for reps in args.repetitions:
            measure(runs, reps, args.resamples, args.repeat)


if __name__ == "__main__":
    main()
