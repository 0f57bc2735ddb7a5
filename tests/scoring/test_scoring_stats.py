"""Statistics against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math
import random

import pytest

from evalkit.scoring import stats


def test_wilson_7_of_10():
    # z = 1.959964; p = 0.7; denom = 1 + z²/10 = 1.384146
    # centre = (0.7 + z²/20) / denom = 0.796074 / 1.384146 = 0.575137
    # half = z·sqrt(0.7·0.3/10 + z²/400) / denom = 1.959964·0.174942 / 1.384146 = 0.247719
    ci = stats.wilson_interval(7, 10)
    assert ci.low == pytest.approx(0.3968, abs=1e-4)
    assert ci.high == pytest.approx(0.8922, abs=1e-4)


def test_wilson_edges_stay_inside_unit_interval():
    # 0/10: centre = (z²/20)/denom = 0.192074/1.384146 = 0.138767 = half → low 0, high 0.277533
    zero = stats.wilson_interval(0, 10)
    assert zero.low == 0.0
    assert zero.high == pytest.approx(0.2775, abs=1e-4)
    full = stats.wilson_interval(10, 10)
    assert full.high == 1.0
    assert full.low == pytest.approx(1 - 0.2775, abs=1e-4)
    assert stats.wilson_interval(0, 0) == stats.Interval(0.0, 1.0)


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="successes"):
        stats.wilson_interval(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        stats.wilson_interval(1, 2, confidence=1.0)


def test_mcnemar_exact_b1_c8():
    # n = 9 discordant pairs; P(X ≤ 1) = (C(9,0) + C(9,1)) / 2^9 = 10/512; two-sided: 20/512
    assert stats.mcnemar_exact(1, 8) == 0.0390625
    assert stats.mcnemar_exact(8, 1) == 0.0390625


def test_mcnemar_exact_small_cases():
    assert stats.mcnemar_exact(0, 0) == 1.0
    # b=c: the tail is more than half, capped at 1
    assert stats.mcnemar_exact(3, 3) == 1.0
    # b=0, c=5: 2 · 1/32 = 0.0625
    assert stats.mcnemar_exact(0, 5) == 0.0625


def test_mcnemar_large_n_matches_exact_sum():
    # Past 1000 discordant pairs the log-space path is used; check it against exact integers.
    b, c = 480, 600
    n = b + c
    exact = 2 * sum(math.comb(n, i) for i in range(b + 1)) / 2**n
    assert stats.mcnemar_exact(b, c) == pytest.approx(exact, rel=1e-9)
    assert exact < 0.001


def test_pass_at_k_chen():
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    assert stats.pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # k=1 is the pass rate
    assert stats.pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert stats.pass_at_k(5, 0, 3) == 0.0
    # n - c < k: every draw of k contains a pass
    assert stats.pass_at_k(5, 4, 2) == 1.0


def test_pass_hat_k_tau_bench():
    # n=5, c=2, k=2: C(2,2)/C(5,2) = 1/10
    assert stats.pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # n=4, c=3, k=2: C(3,2)/C(4,2) = 3/6
    assert stats.pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert stats.pass_hat_k(5, 1, 2) == 0.0


def test_pass_k_averaged_over_cases():
    cases = [(5, 2), (5, 5), (5, 0)]
    # pass@2: (0.7 + 1 + 0)/3 ; pass^2: (0.1 + 1 + 0)/3
    assert stats.mean_pass_at_k(cases, 2) == pytest.approx(1.7 / 3)
    assert stats.mean_pass_hat_k(cases, 2) == pytest.approx(1.1 / 3)
    with pytest.raises(ValueError, match="k must be between 1"):
        stats.pass_at_k(2, 1, 3)


def test_percentile_is_linear_interpolation():
    values = list(range(1, 11))
    # type 7: position (n-1)·q = 9·0.5 = 4.5 → 5.5; 9·0.9 = 8.1 → 9 + 0.1 = 9.1
    assert stats.percentile(values, 50) == pytest.approx(5.5)
    assert stats.percentile(values, 90) == pytest.approx(9.1)
    assert stats.percentile([3.0], 90) == 3.0
    assert stats.percentile([10, 0], 25) == pytest.approx(2.5)


def test_standard_errors():
    # stdev(1,2,3,4) = sqrt(5/3) = 1.290994; / 2
    assert stats.standard_error([1, 2, 3, 4]) == pytest.approx(0.645497, abs=1e-6)
    # clusters [1,1],[0,0],[1,0]: mean 0.5; residual sums 1, -1, 0 → ss 2;
    # sqrt(3/2 · 2) / 6 = 0.288675 (= stdev of cluster means 1, 0, 0.5 over sqrt 3)
    assert stats.clustered_standard_error([[1, 1], [0, 0], [1, 0]]) == pytest.approx(0.288675, abs=1e-6)
    # one observation per cluster: the plain standard error
    assert stats.clustered_standard_error([[1], [2], [3], [4]]) == pytest.approx(0.645497, abs=1e-6)


def test_clustered_bootstrap_is_deterministic_and_wider_for_correlated_runs():
    # 10 cases always pass, 10 always fail, 5 repetitions each: the runs are not
    # 100 independent samples but 20, and the clustered interval must show it.
    clusters = [[1.0] * 5] * 10 + [[0.0] * 5] * 10
    one = stats.bootstrap_clustered_mean(clusters, seed=7)
    again = stats.bootstrap_clustered_mean(clusters, seed=random.Random(7))
    assert one.estimate == 0.5
    assert one == stats.bootstrap_clustered_mean(clusters, seed=7)
    assert again.interval == stats.bootstrap_clustered_mean(clusters, seed=random.Random(7)).interval
    naive = stats.bootstrap_clustered_mean([[v] for c in clusters for v in c], seed=7)
    clustered_width = one.interval.high - one.interval.low
    naive_width = naive.interval.high - naive.interval.low
    # sqrt(5) ≈ 2.24 times wider in expectation
    assert clustered_width > 1.8 * naive_width
    # 20 clusters of 0/1: SE = 0.5/sqrt(20) = 0.112 → roughly ±0.22
    assert 0.25 < one.interval.low < 0.33
    assert 0.67 < one.interval.high < 0.75


def test_paired_bootstrap_detects_a_shift_and_not_noise():
    rng = random.Random(3)
    shifted = [0.2 + rng.gauss(0, 0.1) for _ in range(40)]
    res = stats.paired_bootstrap(shifted, seed=1)
    assert res.p_value < 0.01
    assert 0.1 < res.interval.low < res.estimate < res.interval.high < 0.3
    noise = [rng.gauss(0, 0.1) for _ in range(40)]
    assert stats.paired_bootstrap(noise, seed=1).p_value > 0.05
    assert stats.paired_bootstrap([0.0] * 10, seed=1).p_value == 1.0


def test_paired_bootstrap_never_overclaims_with_few_pairs():
    # Two cases that both improved: no exact paired test can give p below 2/2² = 0.5.
    assert stats.paired_bootstrap([1.0, 1.0], seed=0).p_value >= 0.5
    assert stats.paired_bootstrap([1.0, 0.5, 0.8], seed=0).p_value >= 0.25


def test_empty_inputs_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="at least one paired case"):
        stats.paired_bootstrap([], seed=0)
    with pytest.raises(ValueError, match="no clusters"):
        stats.bootstrap_clustered_mean([], seed=0)
    with pytest.raises(ValueError, match="no values"):
        stats.percentile([], 50)


def test_paired_bootstrap_p_value_has_no_float_tie_bias():
    """Against the exact bootstrap distribution, enumerated with fractions: every multiset of 4 draws from
    4 deltas, weighted by its multinomial probability. Deltas of ±1/3 and 2/3 make many resampled means
    exactly 0 in rationals and ±1e-17 in floats, which biased the old p-value low."""
    import itertools
    from fractions import Fraction

    deltas = [Fraction(1, 3), Fraction(-1, 3), Fraction(2, 3), Fraction(-2, 3), Fraction(1, 3)]
    n = len(deltas)
    le = ge = Fraction(0)
    for counts in itertools.product(range(n + 1), repeat=n):
        if sum(counts) != n:
            continue
        weight = Fraction(math.factorial(n), math.prod(math.factorial(c) for c in counts)) / n**n
        total = sum(c * d for c, d in zip(counts, deltas, strict=True))
        le += weight if total <= 0 else 0
        ge += weight if total >= 0 else 0
    exact = float(min(1, 2 * min(le, ge)))
    got = stats.paired_bootstrap([float(d) for d in deltas], seed=3, n_resamples=200_000).p_value
    assert got == pytest.approx(exact, abs=0.01)


def test_min_pairs_for_alpha():
    # 2/2^5 = 0.0625 ≥ 0.05, 2/2^6 = 0.03125 < 0.05; 2/2^7 = 0.0156 ≥ 0.01, 2/2^8 < 0.01
    assert stats.min_pairs_for(0.05) == 6
    assert stats.min_pairs_for(0.01) == 8


def test_clopper_pearson_against_hand_computed_bounds():
    # 0 of 10: upper = 1 - 0.025^(1/10) = 0.308497; 10 of 10: lower = 0.025^(1/10) = 0.691503
    assert stats.clopper_pearson_interval(0, 10).high == pytest.approx(1 - 0.025 ** 0.1, abs=1e-9)
    assert stats.clopper_pearson_interval(10, 10).low == pytest.approx(0.025 ** 0.1, abs=1e-9)
    # 3 of 10 (textbook value, e.g. R's binom.test): [0.066739, 0.652453]
    ci = stats.clopper_pearson_interval(3, 10)
    assert (ci.low, ci.high) == (pytest.approx(0.066739, abs=1e-6), pytest.approx(0.652453, abs=1e-6))


def test_large_continuous_resamples_follow_their_normal_limit():
    """From LARGE_SAMPLE_ROWS mostly distinct rows the resampled sums are drawn from their normal limit: the
    percentile interval is then mean ± z·sd/√n (population sd) within Monte-Carlo error, as index resampling
    gives."""
    rng = random.Random(5)
    n = stats.LARGE_SAMPLE_ROWS
    deltas = [rng.uniform(-0.4, 0.6) for _ in range(n)]
    mean = sum(deltas) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / n)
    res = stats.paired_bootstrap(deltas, seed=1, n_resamples=4000)
    half = 1.959964 * sd / math.sqrt(n)
    assert res.interval.low == pytest.approx(mean - half, abs=half * 0.1)
    assert res.interval.high == pytest.approx(mean + half, abs=half * 0.1)
    assert res.p_value < 0.001  # the mean is ~0.1, far from 0
