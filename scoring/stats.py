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
    "clustered_standard_error",
    "clustered_standard_error_from_sums",
    "mcnemar_exact",
    "mean",
    "mean_pass_at_k",
    "mean_pass_hat_k",
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


def clustered_standard_error_from_sums(sums: Sequence[float], counts: Sequence[int]) -> float:
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


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Chosen over the normal (Wald) interval because it stays inside [0, 1] and keeps
    its coverage at 0/n and n/n, which agent pass rates hit often.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Interval(0.0, 1.0)
    z = z_value(confidence)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At 0/n and n/n the bound is exactly 0 (or 1); rounding would leave 1e-17.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


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
    _check_confidence(confidence)
    groups = [g for g in clusters if len(g) > 0]
    if not groups:
        raise ValueError("bootstrap of no clusters is undefined; check that the evaluator produced scores")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    sums = np.array([math.fsum(g) for g in groups], dtype=float)
    counts = np.array([len(g) for g in groups], dtype=float)
    estimate = float(sums.sum() / counts.sum())
    if len(groups) == 1:
        return BootstrapResult(estimate, Interval(estimate, estimate), math.nan, n_resamples)
    gen = _rng(seed)
    if bool(np.all(counts == counts[0])):
        # Equal cluster sizes: every resample has the same number of runs.
        (s,) = _resampled_sums([sums], n_resamples, gen)
        stats = s / (counts[0] * len(groups))
    else:
        s, c = _resampled_sums([sums, counts], n_resamples, gen)
        stats = s / c
    alpha = 1.0 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(estimate, Interval(float(low), float(high)), math.nan, n_resamples)


def paired_bootstrap(
    deltas: Sequence[float],
    *,
    seed: Seed,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of the mean of per-case deltas (candidate - baseline).

    Interval: percentile interval of the resampled means. p-value: two-sided,
    2·min(P*(mean ≤ 0), P*(mean ≥ 0)) with the +1 correction, so it never reports
    p = 0 from a finite number of resamples and agrees with the interval (the
    1-α interval excludes 0 roughly when p < α).
    """
    _check_confidence(confidence)
    if not deltas:
        raise ValueError("paired bootstrap needs at least one paired case; the two experiments share none")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    values = np.asarray(deltas, dtype=float)
    n = len(values)
    estimate = float(values.mean())
    # The bootstrap is anti-conservative with few pairs (two cases both +1 would give
    # p ≈ 0.001). No exact paired test can do better than 2/2^n with n pairs (all
    # signs agreeing), so the p-value is never reported below that.
    floor = min(1.0, 2.0 ** (1 - n))
    if bool(np.all(values == values[0])):
        p = 1.0 if estimate == 0.0 else max(floor, 2.0 / (n_resamples + 1))
        return BootstrapResult(estimate, Interval(estimate, estimate), p, n_resamples)
    (sums,) = _resampled_sums([values], n_resamples, _rng(seed))
    means = sums / n
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    le = int(np.count_nonzero(means <= 0.0))
    ge = int(np.count_nonzero(means >= 0.0))
    p = min(1.0, max(floor, 2.0 * (min(le, ge) + 1) / (n_resamples + 1)))
    return BootstrapResult(estimate, Interval(float(low), float(high)), p, n_resamples)


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
