"""Scorecard and comparison time for synthetic experiments, in memory.

    .venv/bin/python bench/scoring.py [--runs 1000 100000] [--repetitions 5] [--store] [--work-dir DIR]

With --store the experiments are written in bulk to ClickHouse (chDB, in
--work-dir, default a temporary directory; it runs no server, so it takes no
ports) and every scorecard and comparison reads its records back through
the scoring service's queries (final attempts, latest evaluation versions):
"cold" with the service's records cache emptied before each repetition, "warm"
for the service's cached scorecard and comparison of completed experiments.
Wall and CPU time are both shown (the CPU time of the best run), since the
machine is shared.

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


def best_of(repeat: int, fn: Callable[[], Any], before: Callable[[], Any] | None = None) -> tuple[float, Any]:
    best, _, result = best_of_cpu(repeat, fn, before)
    return best, result


def best_of_cpu(repeat: int, fn: Callable[[], Any], before: Callable[[], Any] | None = None
                ) -> tuple[float, float, Any]:
    """Best wall time, the CPU time of that same run (this process, every thread), and the last result.
    `before` runs untimed before each repetition (e.g. to empty a cache)."""
    best, cpu, result = float("inf"), 0.0, None
    for _ in range(repeat):
        if before is not None:
            before()
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        wall, used = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, used
    return best, cpu, result


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


def _store_experiment(store: Any, service: Any, eid: int, records: ExperimentRecords, reps: int) -> Any:
    """Write a synthetic experiment straight into the tables, in bulk (no HTTP, no per-run inserts)."""
    from evalkit.scoring.experiments import Experiment
    from evalkit.scoring.runs import run_id_of

    cases = sorted({r.case_id for r in records.runs})
    evaluators = sorted({e.evaluator for e in records.evaluations})
    config = {"repetitions": reps, "service_evaluators": {n: {"type": "exact"} for n in evaluators},
              "case_evaluators": {c: evaluators for c in cases}, "agent_kind": "code"}
    e = Experiment(eid, "bench", "bot@bench", "d@bench", "v", "bench", time.time(), config, cases,
                   status="completed")
    service.experiments.save(e)
    ids = {r.run_id: run_id_of(eid, r.case_id, r.repetition, 1) for r in records.runs}
    runs = records.runs
    n = len(runs)
    store.insert("runs", [
        [eid] * n, [r.case_id for r in runs], [r.repetition for r in runs], [1] * n, [ids[r.run_id] for r in runs],
        [ids[r.run_id] for r in runs], [r.status for r in runs], [r.trajectory_status or "" for r in runs],
        [r.metrics.duration_seconds for r in runs], [r.metrics.steps for r in runs],
        [r.metrics.tool_calls for r in runs], [r.metrics.input_tokens for r in runs],
        [r.metrics.output_tokens for r in runs], [r.metrics.cost_usd for r in runs], [1] * n,
    ], ["experiment_id", "case_id", "repetition", "attempt", "run_id", "session_id", "status", "trajectory_status",
        "duration_seconds", "steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd", "version"])
    evs = records.evaluations
    m = len(evs)
    store.insert("evaluations", [
        [eid] * m, [ids[e.run_id] for e in evs], [e.evaluator for e in evs], [1] * m, [e.score for e in evs],
        [e.passed for e in evs], [e.label for e in evs], [e.error for e in evs], [e.cost_usd for e in evs],
    ], ["experiment_id", "run_id", "evaluator", "version", "score", "passed", "label", "error", "cost_usd"])
    return e


def measure_store(runs: int, reps: int, resamples: int, repeat: int, work_dir: str | None = None) -> None:
    """The same, read from ClickHouse (chDB) through the scoring service's own queries."""
    import tempfile
    from pathlib import Path

    from evalkit.access import Access
    from evalkit.migrations import migrate
    from evalkit.scoring.service import ScoringService
    from evalkit.store import Store

    if work_dir:
        Path(work_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        store = Store(f"chdb://{tmp}/ch?database=bench")
        store.connect()
        migrate(store)
        service = ScoringService(store, Access(store), data_dir=Path(tmp))
        t0 = time.perf_counter()
        cand = _store_experiment(store, service, 1, synthetic(runs, reps, 0.03, 1, "cand"), reps)
        base = _store_experiment(store, service, 2, synthetic(runs, reps, 0.0, 2, "base"), reps)
        insert = (time.perf_counter() - t0) / 2
        cold = service.records_cache.clear
        t_read, c_read, _ = best_of_cpu(repeat, lambda: service.records(cand), cold)
        t_sc, c_sc, _ = best_of_cpu(
            repeat, lambda: build_scorecard(service.records(cand), n_resamples=resamples), cold)
        t_cmp, c_cmp, result = best_of_cpu(repeat, lambda: gate(
            compare(service.records(cand), service.records(base), n_resamples=resamples),
            GateConfig(min_score=0.5, max_regressions=runs)), cold)
        # Warm: the service's own scorecard and comparison of completed experiments, already computed once.
        service.scorecard(cand)
        service.comparison(cand, base, alpha=0.05, allow_incomplete=True)
        t_wsc, c_wsc, _ = best_of_cpu(repeat, lambda: service.scorecard(cand))
        t_wcmp, c_wcmp, _ = best_of_cpu(repeat, lambda: gate(
            service.comparison(cand, base, alpha=0.05, allow_incomplete=True),
            GateConfig(min_score=0.5, max_regressions=runs)))
        store.close()
    verdicts = ", ".join(f"{e.evaluator}={e.verdict}" for e in result.comparison.evaluators)
    GOALS.append(f"cold {runs:,}-run scorecard ({reps} rep.): {t_sc:.2f} s wall / {c_sc:.2f} s CPU; comparison "
                 f"and gate: {t_cmp:.2f} s / {c_cmp:.2f} s (goal: < 1 s each)")
    print(f"{runs:>8} {reps:>4} {runs // reps:>7} {insert:>8.2f}s {t_read:>6.2f}s/{c_read:<5.2f} "
          f"{t_sc:>6.2f}s/{c_sc:<5.2f} {t_cmp:>6.2f}s/{c_cmp:<5.2f} {t_wsc:>6.3f}s/{c_wsc:<5.3f} "
          f"{t_wcmp:>6.3f}s/{c_wcmp:<5.3f}  {verdicts}")


GOALS: list[str] = []


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store", action="store_true", help="read the experiments from ClickHouse (chDB)")
    parser.add_argument("--work-dir", help="where --store puts its chDB data (default: a temporary directory)")
    args = parser.parse_args()
    if args.store:
        print(f"from the store (chDB): bootstrap resamples {args.resamples}; best of {args.repeat}; "
              "3 evaluators per run; wall s / CPU s.\n"
              "cold: the records cache emptied first; scorecard and compare+gate include reading the records.\n"
              "warm: the service's scorecard and comparison of the completed experiments, asked again "
              "(2000 resamples, whatever --resamples says)")
        print(f"{'runs':>8} {'reps':>4} {'cases':>7} {'insert':>9} {'read':>13} {'scorecard':>13} "
              f"{'compare+gate':>13} {'warm sc':>13} {'warm cmp+gate':>13}")
        for runs in args.runs:
            for reps in args.repetitions:
                measure_store(runs, reps, args.resamples, args.repeat, args.work_dir)
        print("\n".join(GOALS))
        return
    print(f"bootstrap resamples: {args.resamples}; best of {args.repeat}; 3 evaluators per run")
    print(
        f"{'runs':>8} {'reps':>4} {'cases':>7} {'build records':>14} {'scorecard':>10} {'compare+gate':>13}"
    )
    for runs in args.runs:
        for reps in args.repetitions:
            measure(runs, reps, args.resamples, args.repeat)


if __name__ == "__main__":
    main()
