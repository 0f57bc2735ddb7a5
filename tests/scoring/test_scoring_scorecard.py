"""Scorecards from hand-built experiments; expected values computed in the comments."""

from __future__ import annotations

import pytest

from evalkit.scoring.scorecard import (
    EvaluationRecord,
    ExperimentRecords,
    RunMetrics,
    RunRecord,
    Scorecard,
    build_scorecard,
    render_markdown,
    render_text,
)


def run(
    case: str, rep: int = 0, status: str = "completed", traj: str | None = "valid", **metrics: float
) -> RunRecord:
    return RunRecord(
        run_id=f"{case}#{rep}",
        case_id=case,
        repetition=rep,
        status=status,  # type: ignore[arg-type]
        trajectory_status=traj,  # type: ignore[arg-type]
        metrics=RunMetrics(**metrics),  # type: ignore[arg-type]
    )


def passed(case: str, rep: int, ok: bool, evaluator: str = "exact") -> EvaluationRecord:
    return EvaluationRecord(run_id=f"{case}#{rep}", evaluator=evaluator, passed=ok, score=1.0 if ok else 0.0)


def test_single_runs_use_wilson_and_count_failed_runs_as_failures():
    runs = [run(f"c{i}") for i in range(9)] + [run("c9", status="failed")]
    evals = [passed(f"c{i}", 0, i < 7) for i in range(9)]  # 7 passed, 2 not, c9 failed without evaluation
    sc = build_scorecard(ExperimentRecords(runs, evals))
    e = sc.evaluator("exact")
    assert (e.kind, e.n, e.passed, e.imputed_failures) == ("pass_fail", 10, 7, 1)
    assert e.mean == pytest.approx(0.7)
    # Wilson 7/10 (see test_scoring_stats)
    assert e.ci_method == "wilson"
    assert (e.ci_low, e.ci_high) == (pytest.approx(0.3968, abs=1e-4), pytest.approx(0.8922, abs=1e-4))
    # SE = stdev(seven 1s, three 0s)/sqrt(10) = sqrt(0.7·0.3·10/9)/sqrt(10) = 0.152753
    assert e.std_error == pytest.approx(0.152753, abs=1e-6)
    assert e.pass_at_k == {1: pytest.approx(0.7)}
    assert any("count as score 0 / not passed" in n for n in sc.notes)


def test_a_failed_run_with_an_evaluation_keeps_it_and_timeouts_count():
    runs = [run("a", status="failed"), run("b", status="timeout"), run("c")]
    evals = [passed("a", 0, True), passed("c", 0, True)]
    e = build_scorecard(ExperimentRecords(runs, evals)).evaluator("exact")
    assert (e.n, e.passed, e.imputed_failures) == (3, 2, 1)


def test_cancelled_unscored_and_evaluator_errors_are_excluded_and_counted():
    runs = [run("a"), run("b"), run("c"), run("d", status="cancelled")]
    evals = [
        passed("a", 0, True),
        EvaluationRecord(run_id="b#0", evaluator="exact", error="judge endpoint down"),
        passed("d", 0, False),
    ]
    sc = build_scorecard(ExperimentRecords(runs, evals))
    e = sc.evaluator("exact")
    assert (e.n, e.passed, e.unscored, e.evaluator_errors) == (1, 1, 1, 1)
    assert sc.cancelled_runs == 1
    assert sc.status_counts == {"completed": 3, "failed": 0, "cancelled": 1, "timeout": 0}
    assert not sc.complete
    assert any("no evaluation yet" in n for n in sc.notes)
    assert any("evaluator error" in n for n in sc.notes)


def test_pass_at_k_and_pass_hat_k_over_repetitions():
    # case A 3/3, B 1/3, C 0/3
    outcomes = {"A": [True, True, True], "B": [True, False, False], "C": [False, False, False]}
    runs = [run(c, r) for c, reps in outcomes.items() for r in range(3)]
    evals = [passed(c, r, ok) for c, reps in outcomes.items() for r, ok in enumerate(reps)]
    e = build_scorecard(ExperimentRecords(runs, evals), seed=1).evaluator("exact")
    assert e.repetitions == 3 and e.cases == 3 and e.n == 9
    assert e.mean == pytest.approx(4 / 9)
    # pass@2: A 1, B 1 - C(2,2)/C(3,2) = 2/3, C 0 → 5/9; pass@3: A 1, B 1, C 0 → 2/3
    assert e.pass_at_k[2] == pytest.approx(5 / 9)
    assert e.pass_at_k[3] == pytest.approx(2 / 3)
    # pass^2: A 1, B 0, C 0 → 1/3
    assert e.pass_hat_k[2] == pytest.approx(1 / 3)
    # Wilson on the effective sample size: SE² = 7/81 (below), p(1-p)/n = (4/9)(5/9)/9 = 20/729, so the
    # design effect is (7/81)/(20/729) = 3.15, n_eff = 9/3.15 = 20/7, successes 4/9 · 20/7 = 80/63;
    # Wilson(80/63, 20/7): centre 0.476302, half 0.377643 → [0.098663, 0.853945]
    assert e.ci_method == "wilson-design-effect"
    assert (e.ci_low, e.ci_high) == (pytest.approx(0.098663, abs=1e-5), pytest.approx(0.853945, abs=1e-5))
    # clustered SE: sums 3, 1, 0 vs 3·4/9 = 4/3 each → residuals 5/3, -1/3, -4/3;
    # ss = (25 + 1 + 16)/9 = 42/9; sqrt(3/2 · 42/9)/9 = sqrt(7)/9 = 0.293972
    assert e.std_error == pytest.approx(0.293972, abs=1e-6)


def test_pass_at_k_with_cases_of_unequal_repetitions():
    # A 2/3, B 1/2, C 0/2: pass@k is averaged over cases, each with its own n; k goes up to the smallest n.
    outcomes = {"A": [True, True, False], "B": [True, False], "C": [False, False]}
    runs = [run(c, r) for c, reps in outcomes.items() for r in range(len(reps))]
    evals = [passed(c, r, ok) for c, reps in outcomes.items() for r, ok in enumerate(reps)]
    e = build_scorecard(ExperimentRecords(runs, evals), seed=1).evaluator("exact")
    # pass@1: (2/3 + 1/2 + 0)/3 = 7/18; pass@2: A 1 - C(1,2)/C(3,2) = 1, B 1 - C(1,2)/C(2,2) = 1, C 0 → 2/3
    assert e.pass_at_k == {1: pytest.approx(7 / 18), 2: pytest.approx(2 / 3)}
    # pass^2: A C(2,2)/C(3,2) = 1/3, B 0, C 0 → 1/9
    assert e.pass_hat_k[2] == pytest.approx(1 / 9)


def test_scores_in_the_unit_interval_get_a_wilson_interval_never_narrower_than_bernoulli():
    runs = [run(c) for c in "abcd"]
    evals = [
        EvaluationRecord(run_id=f"{c}#0", evaluator="judge", score=s, cost_usd=0.01)
        for c, s in zip("abcd", [0.2, 0.4, 0.6, 1.0], strict=True)
    ]
    e = build_scorecard(ExperimentRecords(runs, evals)).evaluator("judge")
    assert e.kind == "score"
    assert e.mean == pytest.approx(0.55)
    assert e.passed is None and e.pass_at_k == {}
    # SE² = 4/3 · 0.35/16 = 0.029167 < p(1-p)/n = 0.061875: the design effect is floored at 1 (a score in
    # [0, 1] varies at most like a Bernoulli trial), so the interval is Wilson(2.2 of 4): denominator
    # 1 + z²/4 = 1.960365, centre (0.55 + z²/8)/1.960365 = 0.525505, half 0.349067 → [0.176438, 0.874572].
    assert e.ci_method == "wilson-design-effect"
    assert (e.ci_low, e.ci_high) == (pytest.approx(0.176438, abs=1e-5), pytest.approx(0.874572, abs=1e-5))
    assert e.cost_usd == pytest.approx(0.04)
    # The judge's spend is in the terminal table, not only in the JSON.
    text = render_text(build_scorecard(ExperimentRecords(runs, evals)))
    assert "evaluator cost (USD)" in text and "$0.0400" in text


def test_unbounded_scores_get_the_clustered_bootstrap():
    runs = [run(c) for c in "abcd"]
    evals = [EvaluationRecord(run_id=f"{c}#0", evaluator="latency", score=s)
             for c, s in zip("abcd", [2.0, 4.0, 6.0, 10.0], strict=True)]
    e = build_scorecard(ExperimentRecords(runs, evals)).evaluator("latency")
    assert e.ci_method == "bootstrap-clustered"
    assert 2.0 <= e.ci_low <= 5.5 <= e.ci_high <= 10.0  # type: ignore[operator]


@pytest.mark.parametrize(("cases", "reps", "ok", "low", "high"), [
    # Hand-computed Wilson bounds (z = 1.959964): every run agreeing leaves the design effect at 1.
    (1, 2, True, 0.342380, 1.0),   # 2/2
    (2, 3, True, 0.609666, 1.0),   # 6/6
    (3, 3, True, 0.700855, 1.0),   # 9/9
    (2, 3, False, 0.0, 0.390334),  # 0/6
])
def test_intervals_at_the_boundaries_never_collapse(cases: int, reps: int, ok: bool, low: float, high: float):
    runs = [run(f"c{i}", r) for i in range(cases) for r in range(reps)]
    evals = [passed(f"c{i}", r, ok) for i in range(cases) for r in range(reps)]
    e = build_scorecard(ExperimentRecords(runs, evals)).evaluator("exact")
    assert e.ci_method == ("wilson" if reps == 1 else "wilson-design-effect")
    assert (e.ci_low, e.ci_high) == (pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6))
    assert e.ci_high - e.ci_low > 0.25  # type: ignore[operator]


def test_identical_data_under_two_evaluators_gets_the_same_interval():
    outcomes = {"a": [True, True], "b": [True, False], "c": [True, True], "d": [False, True]}
    runs = [run(c, r) for c, reps in outcomes.items() for r in range(2)]
    evals = [passed(c, r, ok, evaluator=name) for name in ("exact", "judge")
             for c, reps in outcomes.items() for r, ok in enumerate(reps)]
    sc = build_scorecard(ExperimentRecords(runs, evals))
    one, two = sc.evaluator("exact"), sc.evaluator("judge")
    assert (one.ci_low, one.ci_high, one.ci_method) == (two.ci_low, two.ci_high, two.ci_method)
    text = render_text(sc)
    assert "│ Wilson-deff │" in text and "Wilson-deff: Wilson on n / design effect" in text


def test_cost_is_unknown_when_any_run_is_unpriced():
    runs = [
        run("a", cost_usd=0.10, input_tokens=100, output_tokens=10, duration_seconds=1.0),
        run("b", cost_usd=0.30, input_tokens=200, output_tokens=20, duration_seconds=3.0),
        run("c", cost_usd=None, input_tokens=300, output_tokens=30, duration_seconds=2.0),
    ]
    sc = build_scorecard(ExperimentRecords(runs))
    assert sc.cost_usd.total is None
    assert sc.cost_usd.missing == 1
    assert sc.cost_usd.known_total == pytest.approx(0.40)
    # p50 of (0.1, 0.3) = 0.2; p90 = 0.1 + 0.9·0.2 = 0.28
    assert sc.cost_usd.p50 == pytest.approx(0.2)
    assert sc.cost_usd.p90 == pytest.approx(0.28)
    assert sc.tokens.total == 660
    # durations 1, 2, 3: p90 at position 1.8 → 2.8
    assert sc.duration_seconds.total == pytest.approx(6.0)
    assert sc.duration_seconds.p90 == pytest.approx(2.8)
    text = render_text(sc)
    assert "unknown" in text and "1 unpriced" in text
    # The note says how to price the model, not only that a "price table" should have it.
    assert any("prices.yaml" in n and "evalkit serve" in n for n in sc.notes), sc.notes
    assert "$0.0000" not in text


def test_per_run_cost_is_over_the_priced_runs_and_says_how_many_or_unknown():
    """Before: with 8 runs unpriced and 2 priced at $0 (they failed before any model call), the table's p50 and p90
    read 0.0000 (the UI's mean $0 too), as if a run cost nothing; they are over the 2 priced runs and now say so."""
    runs = [run(f"u{i}", cost_usd=None, input_tokens=1000, output_tokens=100) for i in range(8)]
    runs += [run("f0", status="failed", cost_usd=0.0, input_tokens=0, output_tokens=0),
             run("f1", status="failed", cost_usd=0.0, input_tokens=0, output_tokens=0)]
    sc = build_scorecard(ExperimentRecords(runs))
    assert (sc.cost_usd.n, sc.cost_usd.missing, sc.cost_usd.mean, sc.cost_usd.p50) == (2, 8, 0.0, 0.0)
    text = render_text(sc, width=200)
    cost_line = next(line for line in text.splitlines() if "cost (USD)" in line)
    assert cost_line.count("0.0000 (2 of 10 priced)") == 2, cost_line
    assert any("mean, p50 and p90 are over the 2 priced run(s) only" in n for n in sc.notes), sc.notes
    markdown = render_markdown(sc)
    assert "| unknown (≥ $0.0000, 8 unpriced) | 0.0000 (2 of 10 priced) | 0.0000 (2 of 10 priced) |" in markdown

    # None priced: every cost figure is unknown, never "–" (nothing to show) or $0.
    none = build_scorecard(ExperimentRecords([run(f"u{i}", cost_usd=None, input_tokens=10) for i in range(3)]))
    assert none.cost_usd.mean is None and none.cost_usd.p50 is None
    assert "| cost (USD) | unknown | unknown | unknown |" in render_markdown(none)
    assert any("mean, p50 and p90 are unknown too" in n for n in none.notes), none.notes

    # All priced: the figures alone, as before.
    priced = build_scorecard(ExperimentRecords([run("a", cost_usd=0.1), run("b", cost_usd=0.3)]))
    assert "| cost (USD) | $0.4000 | 0.2000 | 0.2800 |" in render_markdown(priced)


def test_trajectory_status_counts():
    runs = [
        run("a", traj="valid"),
        run("b", traj="partial"),
        run("c", traj="unavailable"),
        run("d", traj=None),
    ]
    counts = build_scorecard(ExperimentRecords(runs)).trajectory_status_counts
    assert counts == {"valid": 1, "partial": 1, "invalid": 0, "unavailable": 1, "unrecorded": 1}


def test_declared_evaluator_sees_cases_where_every_run_failed():
    runs = [run("a", status="failed"), run("b", status="failed")]
    e = build_scorecard(ExperimentRecords(runs, [], evaluators=["exact"])).evaluator("exact")
    assert (e.n, e.passed, e.imputed_failures, e.mean) == (2, 0, 2, 0.0)


@pytest.mark.parametrize("shared", [True, False])
def test_which_evaluators_apply_is_the_same_whether_cases_share_their_lists(shared: bool):
    # 3,000 cases: as stored experiments give them (a handful of list objects shared) and each its own list.
    kinds = [["exact"], ["judge"], ["exact", "judge"], []]
    one = {tuple(k): k for k in kinds}
    cases = {f"c{i:04d}": (one[tuple(kinds[i % 4])] if shared else list(kinds[i % 4])) for i in range(3000)}
    records = ExperimentRecords([run(c) for c in cases], [], evaluators=["exact", "judge"], case_evaluators=cases)
    for name in ("exact", "judge", "absent"):
        mask = records.applies_mask(name)
        assert mask is not None
        assert mask.tolist() == [name in cases[c] for c in records.case_ids]


def test_evaluators_apply_only_to_the_cases_that_ask_for_them():
    runs = [run("a"), run("b", status="failed")]
    evals = [passed("a", 0, True)]
    records = ExperimentRecords(runs, evals, case_evaluators={"a": ["exact"], "b": []})
    e = build_scorecard(records).evaluator("exact")
    assert (e.n, e.imputed_failures, e.mean) == (1, 0, 1.0)


def test_two_runs_for_one_slot_are_refused():
    with pytest.raises(ValueError, match="only the final attempt"):
        build_scorecard(ExperimentRecords([run("a"), run("a")]))


def test_deterministic_and_json_round_trip():
    outcomes = {f"c{i}": [(i + r) % 3 != 0 for r in range(4)] for i in range(12)}
    runs = [run(c, r, cost_usd=0.01) for c, reps in outcomes.items() for r in range(4)]
    evals = [passed(c, r, ok) for c, reps in outcomes.items() for r, ok in enumerate(reps)]
    records = ExperimentRecords(runs, evals, experiment_id="42")
    scores = [
        EvaluationRecord(run_id=f"{c}#{r}", evaluator="judge", score=((i * 7 + r * 3) % 10) / 10)
        for i, c in enumerate(outcomes)
        for r in range(4)
    ]
    records = ExperimentRecords(runs, evals + scores, experiment_id="42")
    a = build_scorecard(records, seed=5)
    assert a == build_scorecard(ExperimentRecords(runs, evals + scores, experiment_id="42"), seed=5)
    # Scores in [0, 1] get a Wilson interval: no resampling, so the seed does not move it.
    other = build_scorecard(records, seed=6).evaluator("judge")
    assert (other.ci_low, other.ci_high) == (a.evaluator("judge").ci_low, a.evaluator("judge").ci_high)
    assert Scorecard.model_validate_json(a.model_dump_json()) == a
    md = render_markdown(a)
    assert md.startswith("## Scorecard 42")
    assert "| exact | pass rate | 48 |" in md
    assert "$0.4800" in md


def test_the_columns_answer_one_run_or_case_as_the_records_do():
    """Pages read single runs, verdicts and cases from the columns (not an object per run): each answer must be
    what the records say, re-scored verdicts (the later wins), errors, labels and unknown metrics included."""
    runs = [run("b", 1, cost_usd=0.5, input_tokens=10), run("b", 0, status="failed", duration_seconds=2.5),
            run("a", 0, traj=None, steps=3, output_tokens=7), run("c", 0, status="cancelled"),
            run("a", 1, status="timeout")]
    evals = [passed("a", 0, False), passed("a", 0, True),  # re-scored: the later verdict wins
             EvaluationRecord(run_id="b#1", evaluator="exact", error="judge down", cost_usd=None),
             EvaluationRecord(run_id="b#0", evaluator="judge", score=0.25, label="meh", explanation="x")]
    records = ExperimentRecords(runs, evals)
    columns = records.columns
    by_id = {r.run_id: r for r in runs}
    for case in ("a", "b", "c", "missing"):
        positions = columns.runs_of(case)
        assert [columns.run_record(at) for at in positions] == records.runs_by_case.get(case, [])
        for at in positions:
            run_id = columns.run_ids[at]
            assert columns.run_record(at) == by_id[run_id]
            for name in ("exact", "judge", "absent"):
                expected = records.evaluation_index.get(name, {}).get(run_id)
                got = columns.verdict(name, at)
                # explanations are not kept in the columns (pages read them per run)
                assert got == (None if expected is None else EvaluationRecord(
                    expected.run_id, name, expected.score, expected.passed, expected.label, None, expected.error,
                    expected.cost_usd))
    assert columns.status_counts() == {"completed": 2, "failed": 1, "cancelled": 1, "timeout": 1}
    assert sorted(map(str, columns.not_cancelled("cost_usd").tolist())) == sorted(
        str(float("nan") if r.metrics.cost_usd is None else r.metrics.cost_usd)
        for r in runs if r.status != "cancelled")


def test_one_case_with_repetitions_has_the_spread_of_its_runs_not_zero():
    # Found running one case three times with a numeric evaluator: the scorecard showed ± 0.000 and the interval
    # [5.000, 5.000] for scores 1, 5 and 9 (the clustered estimators need two cases and gave 0 / a point). With
    # one case the runs are the sample, as the design effect already takes them for a pass rate (Wilson on n).
    runs = [run("only", r) for r in range(3)]
    evals = [EvaluationRecord(run_id=f"only#{r}", evaluator="latency", score=s) for r, s in enumerate([1.0, 5.0, 9.0])]
    evals += [passed("only", r, ok) for r, ok in enumerate([True, False, True])]
    card = build_scorecard(ExperimentRecords(runs, evals))
    latency = card.evaluator("latency")
    assert latency.ci_method == "bootstrap-clustered" and latency.mean == pytest.approx(5.0)
    assert latency.std_error == pytest.approx(4.0 / 3 ** 0.5)  # stdev(1, 5, 9) = 4, over √3
    assert latency.ci_low is not None and latency.ci_high is not None
    assert 1.0 <= latency.ci_low < 5.0 < latency.ci_high <= 9.0
    exact = card.evaluator("exact")
    assert exact.std_error == pytest.approx(0.57735 / 3 ** 0.5, abs=1e-5)  # stdev(1, 0, 1) over √3
    # Wilson on the 3 runs (2 of 3), unchanged: the design effect of one case is 1.
    assert (exact.ci_low, exact.ci_high) == (pytest.approx(0.207655, abs=1e-5), pytest.approx(0.938509, abs=1e-5))


def test_an_experiment_with_no_runs_cost_nothing_everywhere():
    """Before: killed before its first run, its header said cost $0 (the service's summary) and its runs table
    "unknown" (this total, None over no runs): one experiment, two answers. A sum over no runs is 0; a mean is none."""
    sc = build_scorecard(ExperimentRecords([]))
    assert (sc.cost_usd.total, sc.cost_usd.n, sc.cost_usd.missing, sc.cost_usd.mean) == (0.0, 0, 0, None)
    assert sc.tokens.total == 0
    assert "$0.0000" in render_text(sc) and "unknown" not in render_text(sc)
    # Runs that are all unpriced stay unknown: nothing priced is not nothing spent.
    unpriced = build_scorecard(ExperimentRecords([run("a", cost_usd=None)]))
    assert unpriced.cost_usd.total is None and "unknown" in render_text(unpriced)
