"""Comparisons and the CI gate on hand-built experiments."""

from __future__ import annotations

import random

import pytest

from evalkit.scoring.compare import (
    Comparison,
    GateConfig,
    compare,
    gate,
    render_comparison_markdown,
    render_gate_markdown,
)
from evalkit.scoring.scorecard import EvaluationRecord, ExperimentRecords, RunRecord


def experiment(outcomes: dict[str, list[bool | float | None]], evaluator: str = "exact", eid: str = "x"):
    """None in the outcomes = a failed run without an evaluation."""
    runs, evals = [], []
    for case, reps in outcomes.items():
        for rep, value in enumerate(reps):
            rid = f"{eid}:{case}#{rep}"
            runs.append(RunRecord(rid, case, rep, "failed" if value is None else "completed"))
            if isinstance(value, bool):
                evals.append(EvaluationRecord(rid, evaluator, passed=value, score=float(value)))
            elif value is not None:
                evals.append(EvaluationRecord(rid, evaluator, score=value))
    return ExperimentRecords(runs, evals, experiment_id=eid)


def mcnemar_pair(b: int, c: int, same: int = 5):
    """b cases regress (pass → fail), c improve, `same` pass on both."""
    base: dict[str, list[bool | float | None]] = {}
    cand: dict[str, list[bool | float | None]] = {}
    for i in range(b):
        base[f"r{i}"], cand[f"r{i}"] = [True], [False]
    for i in range(c):
        base[f"i{i}"], cand[f"i{i}"] = [False], [True]
    for i in range(same):
        base[f"s{i}"], cand[f"s{i}"] = [True], [True]
    return experiment(cand, eid="cand"), experiment(base, eid="base")


def test_mcnemar_b1_c8_is_better_at_5_percent():
    cand, base = mcnemar_pair(1, 8)
    e = compare(cand, base, alpha=0.05).evaluator("exact")
    assert e.test == "mcnemar-exact"
    assert e.p_value == 0.0390625
    assert e.verdict == "better"
    assert [d.case_id for d in e.regressed] == ["r0"]
    assert sorted(d.case_id for d in e.improved) == [f"i{i}" for i in range(8)]
    # 14 paired cases, mean delta (8 - 1)/14 = 0.5
    assert e.paired_cases == 14
    assert e.delta == pytest.approx(0.5)
    assert e.ci_low is not None and e.ci_low > 0


def test_mcnemar_not_significant_at_1_percent_or_with_few_discordant():
    cand, base = mcnemar_pair(1, 8)
    assert compare(cand, base, alpha=0.01).evaluator("exact").verdict == "no significant difference"
    cand, base = mcnemar_pair(1, 2)
    assert compare(cand, base).evaluator("exact").verdict == "no significant difference"


def test_mcnemar_worse_when_reversed():
    cand, base = mcnemar_pair(8, 1)
    e = compare(cand, base).evaluator("exact")
    assert e.verdict == "worse"
    assert len(e.regressed) == 8


def test_scores_with_repetitions_use_the_paired_bootstrap():
    rng = random.Random(11)
    base = {f"c{i}": [rng.uniform(0.3, 0.6) for _ in range(3)] for i in range(30)}
    better = {c: [v + 0.2 for v in vs] for c, vs in base.items()}
    noisy = {c: [v + rng.gauss(0, 0.02) for v in vs] for c, vs in base.items()}
    e = compare(experiment(better, "judge", "cand"), experiment(base, "judge", "base"), seed=3).evaluator(
        "judge"
    )
    assert e.test == "paired-bootstrap"
    assert e.kind == "score"
    assert e.delta == pytest.approx(0.2)
    assert e.verdict == "better"
    assert len(e.improved) == 30 and not e.regressed
    n = compare(experiment(noisy, "judge", "cand"), experiment(base, "judge", "base"), seed=3).evaluator(
        "judge"
    )
    assert n.verdict == "no significant difference"
    assert n.ci_low < 0 < n.ci_high  # type: ignore[operator]


def test_pass_rates_over_repetitions_use_the_bootstrap_not_mcnemar():
    base = {f"c{i}": [True, False, True] for i in range(10)}
    cand = {f"c{i}": [True, True, True] for i in range(10)}
    e = compare(experiment(cand, eid="cand"), experiment(base, eid="base")).evaluator("exact")
    assert e.kind == "pass_fail"
    assert e.test == "paired-bootstrap"
    assert e.delta == pytest.approx(1 / 3)
    assert e.verdict == "better"


def test_failed_runs_count_in_comparisons():
    base = {f"c{i}": [True] for i in range(10)}
    cand = {f"c{i}": [None] if i < 9 else [True] for i in range(10)}
    e = compare(experiment(cand, eid="cand"), experiment(base, eid="base")).evaluator("exact")
    assert e.candidate_mean == pytest.approx(0.1)
    assert len(e.regressed) == 9
    assert e.verdict == "worse"


def test_unpaired_cases_and_evaluators_are_reported():
    cand = experiment({"a": [True], "b": [True], "new": [True]}, eid="cand")
    base = experiment({"a": [True], "b": [False], "gone": [True]}, eid="base")
    base = ExperimentRecords(
        base.runs,
        [*base.evaluations, EvaluationRecord("base:a#0", "old_judge", score=0.5)],
        experiment_id="base",
    )
    c = compare(cand, base)
    assert c.cases_only_in_candidate == ["new"]
    assert c.cases_only_in_baseline == ["gone"]
    assert c.evaluators_only_in_baseline == ["old_judge"]
    assert c.evaluator("exact").paired_cases == 2
    md = render_comparison_markdown(c)
    assert "Cases only in the candidate (1, not compared): `new`" in md
    assert Comparison.model_validate_json(c.model_dump_json()) == c


def test_gate_passes_a_good_candidate():
    cand, base = mcnemar_pair(0, 3, same=10)
    result = gate(compare(cand, base), GateConfig(min_score=0.8, max_regressions=0))
    assert result.passed, result.reasons
    assert result.reasons == []
    assert render_gate_markdown(result).startswith("✅ **Gate passed**")


def test_gate_fails_with_reasons():
    cand, base = mcnemar_pair(8, 1)
    result = gate(compare(cand, base), GateConfig(min_score={"exact": 0.9, "judge": 0.5}, max_regressions=2))
    assert not result.passed
    failed = {(c.evaluator, c.check) for c in result.checks if not c.passed}
    assert failed == {
        ("exact", "min_score"),
        ("exact", "max_regressions"),
        ("exact", "significant_regression"),
        ("judge", "present"),
    }
    text = render_gate_markdown(result)
    assert text.startswith("❌ **Gate failed**")
    assert "8 regressed case(s), at most 2 allowed" in text
    assert "judge: cannot gate" in text


def test_gate_refuses_incomplete_candidates_unless_allowed():
    cand, base = mcnemar_pair(0, 0, same=5)
    cand = ExperimentRecords(
        [*cand.runs, RunRecord("cand:extra#0", "extra", 0, "completed")],
        cand.evaluations,
        experiment_id="cand",
    )
    # the extra completed run has no evaluation: unscored
    strict = gate(compare(cand, base), GateConfig())
    assert not strict.passed
    assert "re-score the candidate" in strict.reasons[0]
    assert gate(compare(cand, base), GateConfig(allow_incomplete=True)).passed


def test_comparison_is_deterministic():
    rng = random.Random(2)
    base = {f"c{i}": [rng.random() for _ in range(2)] for i in range(20)}
    cand = {c: [v + rng.gauss(0.05, 0.1) for v in vs] for c, vs in base.items()}
    a = compare(experiment(cand, "j", "cand"), experiment(base, "j", "base"), seed=9)
    b = compare(experiment(cand, "j", "cand"), experiment(base, "j", "base"), seed=9)
    assert a == b


def test_case_lists_are_capped_but_counts_are_complete():
    cand, base = mcnemar_pair(8, 1)
    e = compare(cand, base, case_limit=3).evaluator("exact")
    assert e.regressed_count == 8 and len(e.regressed) == 3
    assert e.improved_count == 1 and len(e.improved) == 1
    result = gate(compare(cand, base, case_limit=3), GateConfig(max_regressions=5))
    assert "8 regressed case(s), at most 5 allowed" in result.reasons[0]
    md = render_comparison_markdown(compare(cand, base, case_limit=3), case_limit=2)
    assert "and 6 more" in md
