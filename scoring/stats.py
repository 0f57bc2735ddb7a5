"""Statistics for scorecards and comparisons.

Plain functions over plain numbers; nothing here knows about runs or stores.
Every random procedure takes its seed (or a `random.Random`) from the caller so
that a scorecard computed twice from the same records is identical.

The bootstrap uses numpy: an experiment of 100,000 runs resampled 2,000 times
is hundreds of millions of additions, which a Python loop cannot do in time.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BootstrapResult",
    "Interval",
    "bootstrap_clustered_mean",
    "bootstrap_clustered_mean_from_sums",
    "clopper_pearson_interval",
    "clustered_standard_error",
    "clustered_standard_error_from_sums",
    "design_effect",
    "design_effect_wilson",
    "mcnemar_exact",
    "mcnemar_interval",
    "mean",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "min_pairs_for",
    "normal_interval",
    "paired_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "standard_error",
    "wilson_interval",
    "z_value",
]

Seed = int | random.Random
# From this many rows, mostly distinct, resampled sums are drawn from their normal limit (see _resampled_sums).
LARGE_SAMPLE_ROWS = 10_000


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """A bootstrap estimate: the statistic on the data, its interval, and for
    paired deltas a two-sided p-value for "the true delta is zero"."""

    estimate: float
    interval: Interval
    p_value: float
    n_resamples: int


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for `confidence` (1.959964 for 0.95)."""
    _check_confidence(confidence)
    return statistics.NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


# --- means and standard errors ---------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values is undefined; check that the evaluator produced scores")
    return math.fsum(values) / len(values)


def standard_error(values: Sequence[float]) -> float:
    """Standard error of the mean with the sample (n-1) standard deviation; 0.0 for n < 2
    because one observation says nothing about spread (callers show n beside it)."""
    n = len(values)
    if n < 2:
        return 0.0
    return statistics.stdev(values) / math.sqrt(n)


def clustered_standard_error(clusters: Sequence[Sequence[float]]) -> float:
    """Cluster-robust standard error of the overall mean of all observations.

    Repetitions of one case are correlated (same question, same agent), so treating
    them as independent understates the error. This is the usual sandwich estimator
    with the G/(G-1) small-sample factor: SE² = G/(G-1) · Σ_g (Σ_i (x_gi - x̄))² / N².
    With one observation per cluster it equals `standard_error`.
    """
    groups = [g for g in clusters if len(g) > 0]
    return clustered_standard_error_from_sums([math.fsum(g) for g in groups], [len(g) for g in groups])


def clustered_standard_error_from_sums(sums: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray) -> float:
    """`clustered_standard_error` from each cluster's sum and size."""
    g_count = len(sums)
    if g_count < 2:
        return 0.0
    s = np.asarray(sums, dtype=float)
    c = np.asarray(counts, dtype=float)
    n = float(c.sum())
    overall = float(s.sum()) / n
    ss = float(np.square(s - overall * c).sum())
    return math.sqrt(g_count / (g_count - 1) * ss) / n


# --- intervals ---------------------------------------------------------------------------


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Chosen over the normal (Wald) interval because it stays inside [0, 1] and keeps
    its coverage at 0/n and n/n, which agent pass rates hit often: it never has zero
    width for a finite n. `successes` and `n` may be fractional (an effective sample
    size, see `design_effect_wilson`).
    """
    if n < 0 or successes < 0 or successes > n * (1 + 1e-12):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Interval(0.0, 1.0)
    z = z_value(confidence)
    p = min(1.0, successes / n)
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At 0/n and n/n the bound is exactly 0 (or 1); rounding would leave 1e-17.
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return Interval(low, high)


def design_effect(sums: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray) -> float:
    """Kish's design effect of the overall mean of values in [0, 1] grouped by case:
    the cluster-robust variance over the variance of as many independent Bernoulli trials,
    p(1-p)/n, never below 1.

    Below 1 is impossible for pass/fail outcomes except by chance, and for scores in [0, 1]
    the Bernoulli variance is the largest there is, so 1 is the honest floor. When the
    data cannot estimate it (every value 0 or every value 1, or a single case) it is 1:
    the interval is then the plain Wilson interval over the runs.
    """
    n = float(np.sum(counts))
    if n <= 0:
        return 1.0
    p = float(np.sum(sums)) / n
    binomial = p * (1.0 - p) / n
    if binomial <= 1e-15:
        return 1.0
    clustered = clustered_standard_error_from_sums(sums, counts) ** 2
    return max(1.0, clustered / binomial)


def design_effect_wilson(sums: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray,
                         confidence: float = 0.95) -> Interval:
    """Wilson interval of the overall mean of [0, 1] values with repetitions per case, on the
    effective sample size n / design effect (Korn & Graubard's adjustment).

    Repetitions of one case are correlated, so n runs carry less information than n
    independent trials; dividing n by the design effect widens the interval by exactly the
    cluster-robust factor in the interior, and unlike a clustered bootstrap it keeps a
    width at 0/n and n/n (every run agreeing), where the bootstrap collapses to a point.
    """
    n = float(np.sum(counts))
    if n == 0:
        return Interval(0.0, 1.0)
    p = float(np.sum(sums)) / n
    n_eff = n / design_effect(sums, counts)
    return wilson_interval(p * n_eff, n_eff, confidence)


def clopper_pearson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The exact (Clopper-Pearson) interval of a binomial proportion: the proportions that the
    two one-sided exact binomial tests at (1-confidence)/2 each do not reject. It excludes π0
    exactly when the two-sided exact test p = min(1, 2·min tail) is below 1 - confidence.
    Found by bisection on the exact binomial tails (no scipy needed)."""
    _check_confidence(confidence)
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Interval(0.0, 1.0)
    tail = (1.0 - confidence) / 2.0
    # log C(n, i) for every i, once (cumulative sums of log((n-j+1)/j)); each tail is then a log-sum-exp in
    # numpy: exact to float rounding and no overflow, whatever n (a comparison may have 100,000 pairs).
    j = np.arange(1, n + 1, dtype=float)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log((n - j + 1) / j))))
    index = np.arange(n + 1, dtype=float)

    def tail_sum(p: float, lo: int, hi: int) -> float:  # P(lo <= X <= hi | p)
        if p <= 0.0:
            return 1.0 if lo == 0 else 0.0
        if p >= 1.0:
            return 1.0 if hi == n else 0.0
        logs = log_comb[lo : hi + 1] + index[lo : hi + 1] * math.log(p) + (n - index[lo : hi + 1]) * math.log1p(-p)
        top = float(logs.max())
        return math.exp(top) * float(np.exp(logs - top).sum())

    def upper_tail(p: float) -> float:  # P(X >= successes | p)
        return tail_sum(p, successes, n)

    def lower_tail(p: float) -> float:  # P(X <= successes | p)
        return tail_sum(p, 0, successes)

    def solve(f: Callable[[float], float], increasing: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (f(mid) < tail) == increasing:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if successes == 0 else solve(upper_tail, increasing=True)
    high = 1.0 if successes == n else solve(lower_tail, increasing=False)
    return Interval(low, high)


def mcnemar_interval(b: int, c: int, pairs: int, confidence: float = 0.95) -> Interval:
    """Interval of the paired difference in pass rates (candidate − baseline) that agrees with
    `mcnemar_exact`: conditional on the b + c discordant pairs, c ~ Binomial(b + c, π) and the
    difference is (b + c)/pairs · (2π − 1); the Clopper-Pearson interval of π maps onto it. It
    excludes 0 exactly when the exact McNemar test rejects at 1 - confidence."""
    if pairs <= 0:
        raise ValueError("an interval of a paired difference needs at least one pair")
    d = b + c
    if d == 0:
        # No discordant pair: the data cannot tell the two apart; the difference may be anything
        # a single discordant pair more would show.
        return Interval(-1.0 / pairs, 1.0 / pairs)
    pi = clopper_pearson_interval(c, d, confidence)
    scale = d / pairs
    return Interval(scale * (2 * pi.low - 1), scale * (2 * pi.high - 1))


def min_pairs_for(alpha: float) -> int:
    """The fewest paired cases with which any two-sided paired test can reach `alpha`: with n
    pairs the smallest exact p-value is 2/2^n (every pair moving the same way)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    n = 1
    while 2.0 ** (1 - n) >= alpha:
        n += 1
    return n


def normal_interval(estimate: float, std_error: float, confidence: float = 0.95) -> Interval:
    z = z_value(confidence)
    return Interval(estimate - z * std_error, estimate + z * std_error)


def _rng(seed: Seed) -> np.random.Generator:
    # A random.Random is accepted so callers can thread one seeded generator through
    # several computations; 128 bits of it seed numpy's generator.
    if isinstance(seed, random.Random):
        return np.random.default_rng(seed.getrandbits(128))
    return np.random.default_rng(seed)


def _resampled_sums(
    columns: Sequence[np.ndarray], n_resamples: int, gen: np.random.Generator
) -> list[np.ndarray]:
    """For each resample of the rows (drawn with replacement), the sum of every column.

    Rows that are identical across all columns are interchangeable, so when there
    are few distinct rows (pass/fail values, McNemar deltas, repetitions of 0/1
    outcomes) the resample is drawn as multinomial counts over the distinct rows:
    the same distribution as drawing row indices, in O(resamples × distinct rows)
    instead of O(resamples × rows). Otherwise row indices are drawn in chunks that
    keep the index matrix near 4 MB.
    """
    rows = len(columns[0])
    stacked = np.stack(columns)
    distinct, freq = np.unique(stacked, axis=1, return_counts=True)
    if distinct.shape[1] * 4 <= rows:
        draws = gen.multinomial(rows, freq / rows, size=n_resamples).astype(float)
        return [draws @ distinct[i] for i in range(len(columns))]
    if rows >= LARGE_SAMPLE_ROWS:
        # Many rows, mostly distinct: a resample's column sums are a sum of `rows` independent draws from the
        # rows, so (central limit theorem, Berry–Esseen error O(1/√rows), below the 2,000 resamples' own
        # Monte-Carlo error here) they are drawn from their normal limit: mean rows·x̄, covariance rows·Σ,
        # with Σ the rows' covariance (population form, as the resampling uses). Drawing the indices instead
        # is rows × resamples gathers: 200 million, seconds, for a 100,000-case comparison.
        centre = stacked.mean(axis=1) * rows
        cov = np.atleast_2d(np.cov(stacked, bias=True)) * rows
        draws = gen.multivariate_normal(centre, cov, size=n_resamples, method="cholesky" if len(columns) == 1
                                        else "eigh")
        return [draws[:, i] for i in range(len(columns))]
    chunk = max(1, min(n_resamples, 1_000_000 // max(rows, 1)))
    out = [np.empty(n_resamples) for _ in columns]
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        idx = gen.integers(0, rows, size=(size, rows), dtype=np.int32 if rows < 2**31 else np.int64)
        for column, target in zip(columns, out, strict=True):
            target[done : done + size] = column[idx].sum(axis=1)
        done += size
    return out


def bootstrap_clustered_mean(
    clusters: Sequence[Sequence[float]],
    *,
    seed: Seed,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap interval of the overall mean, resampling whole clusters.

    A cluster is one case with all its repetitions: resampling cases (not runs)
    keeps repetitions together, so the interval reflects that the cases, not the
    runs, are the sample. The statistic is the mean over all runs of the resample
    (Σ sums / Σ counts), matching the scorecard's mean. p_value is not meaningful
    here and is reported as NaN.
    """
    groups = [g for g in clusters if len(g) > 0]
    if not groups:
        raise ValueError("bootstrap of no clusters is undefined; check that the evaluator produced scores")
    return bootstrap_clustered_mean_from_sums([math.fsum(g) for g in groups], [len(g) for g in groups], seed=seed,
                                              n_resamples=n_resamples, confidence=confidence)


def bootstrap_clustered_mean_from_sums(
    sums: Sequence[float] | np.ndarray,
    counts: Sequence[int] | np.ndarray,
    *,
    seed: Seed,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """`bootstrap_clustered_mean` from each cluster's sum and size (what it resamples)."""
    _check_confidence(confidence)
    if len(sums) == 0:
        raise ValueError("bootstrap of no clusters is undefined; check that the evaluator produced scores")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    sums = np.asarray(sums, dtype=float)
    counts = np.asarray(counts, dtype=float)
    estimate = float(sums.sum() / counts.sum())
    if len(sums) == 1:
        return BootstrapResult(estimate, Interval(estimate, estimate), math.nan, n_resamples)
    gen = _rng(seed)
    if bool(np.all(counts == counts[0])):
        # Equal cluster sizes: every resample has the same number of runs.
        (s,) = _resampled_sums([sums], n_resamples, gen)
        stats = s / (counts[0] * len(sums))
    else:
        s, c = _resampled_sums([sums, counts], n_resamples, gen)
        stats = s / c
    alpha = 1.0 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(estimate, Interval(float(low), float(high)), math.nan, n_resamples)


def paired_bootstrap(
    deltas: Sequence[float] | np.ndarray,
    *,
    seed: Seed,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of the mean of per-case deltas (candidate - baseline).

    The interval and the p-value come from the same resampled means and agree by
    construction: with α = 1 - confidence and j = ⌈α·B/2⌉, the interval is the j-th
    smallest and j-th largest resampled mean, and the two-sided p-value is
    2·min(#means ≤ 0, #means ≥ 0)/B, so p < α exactly when the interval excludes 0.
    Resampled means within rounding of 0 (sums of deltas like 1/3 - 1/3) are 0, so ties
    at 0 count on both sides (left as 1e-17 they biased p low).

    The bootstrap is anti-conservative with few pairs (two cases both +1 would give
    p ≈ 0): no exact paired test can do better than 2/2^n with n pairs, so p is never
    reported below that; when that floor is ≥ α the interval is widened to reach 0,
    keeping the agreement (with so few pairs no test can tell).
    """
    _check_confidence(confidence)
    if len(deltas) == 0:
        raise ValueError("paired bootstrap needs at least one paired case; the two experiments share none")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    values = np.asarray(deltas, dtype=float)
    n = len(values)
    estimate = float(values.mean())
    floor = min(1.0, 2.0 ** (1 - n))
    alpha = 1.0 - confidence
    if bool(np.all(values == values[0])):
        means = np.full(n_resamples, estimate)
    else:
        (sums,) = _resampled_sums([values], n_resamples, _rng(seed))
        means = sums / n
        tolerance = 1e-9 * max(1.0, float(np.abs(values).max()))
        means[np.abs(means) <= tolerance] = 0.0
    means.sort()
    j = max(1, math.ceil(alpha * n_resamples / 2))
    low, high = float(means[j - 1]), float(means[n_resamples - j])
    le = int(np.searchsorted(means, 0.0, side="right"))
    ge = n_resamples - int(np.searchsorted(means, 0.0, side="left"))
    p = min(1.0, max(floor, 2.0 * min(le, ge) / n_resamples))
    if p >= alpha:
        low, high = min(low, 0.0), max(high, 0.0)
    return BootstrapResult(estimate, Interval(low, high), p, n_resamples)


# --- pass@k and pass^k --------------------------------------------------------------------


def _check_nck(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of repetitions n={n}, got k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one case (Chen et al. 2021): the probability that at least
    one of k repetitions drawn without replacement from n (c of them passing) passes,
    1 - C(n-c, k) / C(n, k)."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    # Integer comb and one true division: exact to the last float bit.
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one case (tau-bench): the probability that all k repetitions drawn
    without replacement from n pass, C(c, k) / C(n, k)."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _mean_over_cases(
    cases: Sequence[tuple[int, int]], k: int, per_case: Callable[[int, int, int], float]
) -> float:
    if not cases:
        raise ValueError("pass@k / pass^k of no cases is undefined")
    # Cases share few distinct (n, c) pairs; compute each once.
    tally = Counter(cases)
    return math.fsum(per_case(n, c, k) * m for (n, c), m in tally.items()) / len(cases)


def mean_pass_at_k(cases: Sequence[tuple[int, int]], k: int) -> float:
    """pass@k averaged over cases given as (n, c); every case needs n >= k."""
    return _mean_over_cases(cases, k, pass_at_k)


def mean_pass_hat_k(cases: Sequence[tuple[int, int]], k: int) -> float:
    """pass^k averaged over cases given as (n, c); every case needs n >= k."""
    return _mean_over_cases(cases, k, pass_hat_k)


# --- percentiles ------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float, *, presorted: bool = False) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks.

    This is Hyndman & Fan type 7: numpy's default ("linear"), Excel's PERCENTILE.INC
    and `statistics.quantiles(method="inclusive")`. With values 1..10, p50 = 5.5 and
    p90 = 9.1.
    """
    if not values:
        raise ValueError("percentile of no values is undefined")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be in [0, 100], got {q!r}")
    ordered = values if presorted else sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    frac = pos - lo
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)


# --- McNemar ----------------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    b = cases that passed in the baseline and failed in the candidate, c = the reverse
    (the test is symmetric). Under H0 the discordant pairs split Binomial(b+c, 1/2);
    p = min(1, 2·P(X ≤ min(b, c))). Concordant pairs carry no information and are not
    an argument.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    m = min(b, c)
    if n <= 1000:
        # Exact rational arithmetic while the integers stay small.
        tail = sum(math.comb(n, i) for i in range(m + 1))
        return min(1.0, 2 * tail / 2**n)
    # Large n: sum the tail in log space (exact up to float rounding, no huge ints).
    log_half_n = n * math.log(0.5)
    log_n_fact = math.lgamma(n + 1)
    logs = [log_n_fact - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n for i in range(m + 1)]
    top = max(logs)
    tail_f = math.exp(top) * math.fsum(math.exp(x - top) for x in logs)
    return min(1.0, 2.0 * tail_f)
