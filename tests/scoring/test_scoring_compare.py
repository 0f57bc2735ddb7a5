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
    cand, base = mcnemar_pair(0, 0, same=6)
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


def test_the_gate_fails_with_no_pairs_or_too_few_saying_why():
    # Two experiments over unrelated datasets: no case id in common.
    cand = experiment({f"a{i}": [True] for i in range(8)}, eid="cand")
    base = experiment({f"b{i}": [True] for i in range(8)}, eid="base")
    cand = ExperimentRecords(cand.runs, cand.evaluations, experiment_id="cand", dataset="faq@w", dataset_version="1")
    base = ExperimentRecords(base.runs, base.evaluations, experiment_id="base", dataset="math@w", dataset_version="1")
    c = compare(cand, base)
    result = gate(c, GateConfig())
    assert not result.passed
    assert result.reasons[0].startswith("exact: 0 paired case(s), at least 6 needed")
    assert any("different datasets" in w for w in c.warnings)
    assert any("nothing is compared" in w for w in c.warnings)
    # With no pair there is no difference to test: the verdict says so rather than "no significant difference".
    assert c.evaluator("exact").verdict == "not compared" and c.evaluator("exact").p_value is None
    assert "⚠ the experiments ran different datasets" in render_gate_markdown(result)
    # 5 pairs: no paired test can reach 0.05 (2/2^5 = 0.0625), so 5 is below the default minimum; 6 is not.
    cand5, base5 = mcnemar_pair(0, 0, same=5)
    assert [c.check for c in gate(compare(cand5, base5), GateConfig()).checks if not c.passed] == ["pairs"]
    assert gate(compare(cand5, base5), GateConfig(min_pairs=5)).passed
    cand6, base6 = mcnemar_pair(0, 0, same=6)
    assert gate(compare(cand6, base6), GateConfig()).passed


def test_a_new_dataset_version_is_warned_about():
    cand, base = mcnemar_pair(1, 2)
    cand = ExperimentRecords(cand.runs, cand.evaluations, dataset="faq@w", dataset_version="2")
    base = ExperimentRecords(base.runs, base.evaluations, dataset="faq@w", dataset_version="1")
    assert compare(cand, base).warnings[0].startswith("the experiments ran different versions of dataset faq@w")
    assert compare(cand, cand).warnings == []


def test_mcnemar_interval_and_verdict_agree():
    # b=0, c=5 of 8: exact p = 2/32 = 0.0625, not significant at 0.05, so the interval must hold 0, where the
    # bootstrap interval of the same deltas was [+25, +87.5] pp.
    cand, base = mcnemar_pair(0, 5, same=3)
    e = compare(cand, base).evaluator("exact")
    assert e.p_value == 0.0625 and e.verdict == "no significant difference"
    assert e.ci_low is not None and e.ci_high is not None and e.ci_low <= 0 <= e.ci_high
    # Hand-computed: Clopper-Pearson 95% of 5/5 is [0.025^(1/5), 1] = [0.478176, 1]; the difference is
    # 5/8 · (2π − 1) → [5/8 · (2·0.478176 − 1), 5/8] = [−0.027280, 0.625].
    assert (e.ci_low, e.ci_high) == (pytest.approx(-0.027280, abs=1e-5), pytest.approx(0.625))
    # b=0, c=6 of 8: p = 2/64, significant, and the interval excludes 0: 0.025^(1/6) = 0.540719.
    cand, base = mcnemar_pair(0, 6, same=2)
    e = compare(cand, base).evaluator("exact")
    assert e.p_value == 0.03125 and e.verdict == "better"
    assert e.ci_low == pytest.approx(6 / 8 * (2 * 0.025 ** (1 / 6) - 1), abs=1e-6) and e.ci_low > 0


@pytest.mark.parametrize("shift", [0.0, 0.05, 0.1, 0.15, 0.2, 0.3])
def test_bootstrap_interval_and_verdict_agree(shift: float):
    rng = random.Random(int(shift * 100))
    base = {f"c{i}": [rng.random() for _ in range(2)] for i in range(12)}
    cand = {c: [min(1.0, max(0.0, v + rng.gauss(shift, 0.3))) for v in vs] for c, vs in base.items()}
    for alpha in (0.05, 0.2):
        e = compare(experiment(cand, "j", "cand"), experiment(base, "j", "base"), alpha=alpha).evaluator("j")
        assert e.ci_low is not None and e.ci_high is not None and e.p_value is not None
        excludes_zero = e.ci_low > 0 or e.ci_high < 0
        assert excludes_zero == (e.verdict != "no significant difference") == (e.p_value < alpha)


def test_identical_deltas_under_two_evaluators_get_the_same_interval():
    rng = random.Random(4)
    base = {f"c{i}": [rng.random() for _ in range(2)] for i in range(15)}
    cand = {c: [v + rng.gauss(0.05, 0.1) for v in vs] for c, vs in base.items()}
    one = compare(experiment(cand, "j", "cand"), experiment(base, "j", "base")).evaluator("j")
    two = compare(experiment(cand, "k", "cand"), experiment(base, "k", "base")).evaluator("k")
    assert (one.ci_low, one.ci_high, one.p_value) == (two.ci_low, two.ci_high, two.p_value)


def test_comparing_an_experiment_with_itself_says_so_before_the_table():
    """Before: every case "same", no warning: a CI job given the candidate's own id as the baseline went green
    whatever the change did, without a word. The gate's report says so first."""
    outcomes: dict[str, list[bool | float | None]] = {f"c{i}": [i % 3 != 0] for i in range(8)}
    itself = experiment(outcomes, eid="5")
    c = compare(itself, experiment(outcomes, eid="5"))
    assert c.same_experiment
    assert c.warnings and c.warnings[0].startswith("the baseline is the candidate itself (experiment 5)"), c.warnings
    assert "⚠ the baseline is the candidate itself" in render_comparison_markdown(c)
    gated = gate(c, GateConfig())
    report = render_gate_markdown(gated)
    assert report.index("⚠ the baseline is the candidate itself") < report.index("| evaluator"), report
    # A gate against itself fails (it passed: in CI a misconfigured baseline that is always green), saying why.
    assert not gated.passed and gated.reasons[0].startswith("experiment 5 is gated against itself"), gated.reasons
    assert [c.check for c in gated.checks if not c.passed] == ["baseline"], gated.checks
    # Two experiments with the same outcomes are no such thing.
    other = compare(itself, experiment(outcomes, eid="6"))
    assert not other.same_experiment and not other.warnings
    assert "candidate itself" not in render_gate_markdown(gate(other, GateConfig()))
    assert gate(other, GateConfig(min_pairs=1)).passed
