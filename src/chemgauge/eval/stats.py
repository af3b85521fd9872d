"""Uncertainty for headline rates and paired comparisons of two runs on the same items.

Every random draw takes an explicit seed that is returned with the result; no global RNG.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from chemgauge.errors import ConfigError
from chemgauge.eval.rates import wilson_bounds

__all__ = [
    "MAX_SEED",
    "Interval",
    "McNemarResult",
    "binomial_tail",
    "binomial_test_greater",
    "bootstrap_interval",
    "bootstrap_mean_interval",
    "check_seed",
    "holm_adjust",
    "mcnemar_exact",
    "paired_bootstrap_difference",
    "poisson_binomial_greater",
    "wilson_interval",
]


#: Largest seed a run accepts (``--seed``): a seed is recorded in reports and drives numpy's
#: generator, so it is a non-negative integer of 32 bits.
MAX_SEED = 2**32 - 1


def check_seed(seed: int, flag: str = "--seed") -> int:
    """``seed`` if it is a whole number from 0 to :data:`MAX_SEED`, else a
    :class:`~chemgauge.errors.ConfigError` naming the flag and the range."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"{flag} must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}")
    return seed


#: Resampled values drawn at once by :func:`bootstrap_interval` (about 16 bytes each).
BOOTSTRAP_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a two-sided interval and how it was obtained."""

    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    method: str
    n: int
    seed: int | None = None
    resamples: int | None = None

    def to_dict(self) -> dict[str, object]:
        """Plain mapping for reports."""
        return asdict(self)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial rate; with n == 0 every value is ``None``.

    The arithmetic is :func:`chemgauge.eval.rates.wilson_bounds` (standard library only, so
    the p2s scorer computes the same interval without numpy).
    """
    value, low, high = wilson_bounds(successes, n, confidence)
    return Interval(value, low, high, confidence, "wilson", n)


def _as_array(values: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(values, dtype=np.float64)


def bootstrap_interval(
    values: Sequence[float] | NDArray[np.float64],
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
) -> Interval:
    """Percentile bootstrap interval of a statistic (default: the mean) with a recorded seed.

    ``statistic`` receives a (rows, n) array of resamples and returns one value per row.
    """
    data = _as_array(values)
    n = len(data)
    if n == 0:
        return Interval(None, None, None, confidence, "bootstrap-percentile", 0, seed, resamples)
    stat = statistic or (lambda a: a.mean(axis=-1))
    rng = np.random.default_rng(seed)
    # Resamples are drawn a block of rows at a time (the generator's stream does not depend
    # on how it is split), so memory stays near BOOTSTRAP_BLOCK values, not resamples * n.
    rows = max(1, BOOTSTRAP_BLOCK // n)
    parts = [
        stat(data[rng.integers(0, n, size=(min(rows, resamples - start), n))])
        for start in range(0, resamples, rows)
    ]
    dist = np.sort(np.concatenate(parts))
    alpha = (1 - confidence) / 2
    low = float(np.quantile(dist, alpha, method="inverted_cdf"))
    high = float(np.quantile(dist, 1 - alpha, method="inverted_cdf"))
    estimate = float(stat(data[np.newaxis, :])[0])
    return Interval(estimate, low, high, confidence, "bootstrap-percentile", n, seed, resamples)


#: Distinct values up to which :func:`bootstrap_mean_interval` draws multinomial counts.
MULTINOMIAL_MAX_DISTINCT = 4096


def bootstrap_mean_interval(
    values: Sequence[float] | NDArray[np.float64],
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of a mean, for values that take few distinct values.

    The mean of n items drawn with replacement depends only on how often each distinct value
    is drawn, and those counts are one multinomial draw (n, the values' frequencies): the
    same distribution as indexing items, at O(resamples * distinct) cost instead of
    O(resamples * n) (ranking metrics such as a reciprocal rank take a few dozen values).
    With more than :data:`MULTINOMIAL_MAX_DISTINCT` distinct values this is
    :func:`bootstrap_interval`.
    """
    data = np.asarray(values, dtype=np.float64)
    n = len(data)
    method = "bootstrap-percentile-multinomial"
    if n == 0:
        return Interval(None, None, None, confidence, method, 0, seed, resamples)
    distinct, counts = np.unique(data, return_counts=True)
    if len(distinct) > MULTINOMIAL_MAX_DISTINCT:
        return bootstrap_interval(data, seed=seed, resamples=resamples, confidence=confidence)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=resamples)
    means = np.sort(draws @ distinct / n)
    alpha = (1 - confidence) / 2
    low = float(np.quantile(means, alpha, method="inverted_cdf"))
    high = float(np.quantile(means, 1 - alpha, method="inverted_cdf"))
    estimate = math.fsum(data.tolist()) / n
    return Interval(estimate, low, high, confidence, method, n, seed, resamples)


def paired_bootstrap_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> Interval:
    """Interval of mean(a) - mean(b) over the same items, resampling items jointly."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    diff = _as_array(a) - _as_array(b)
    result = bootstrap_interval(
        diff.tolist(), seed=seed, resamples=resamples, confidence=confidence
    )
    return Interval(
        result.estimate,
        result.low,
        result.high,
        confidence,
        "paired-bootstrap-percentile",
        result.n,
        seed,
        resamples,
    )


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Exact McNemar test on discordant pairs: b = only A right, c = only B right."""

    only_a: int
    only_b: int
    p_value: float

    def to_dict(self) -> dict[str, object]:
        """Plain mapping for reports."""
        return asdict(self)


def mcnemar_exact(only_a: int, only_b: int) -> McNemarResult:
    """Two-sided exact (binomial) McNemar p-value; 1.0 when there are no discordant pairs."""
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts must be non-negative")
    n = only_a + only_b
    if n == 0:
        return McNemarResult(only_a, only_b, 1.0)
    k = min(only_a, only_b)
    try:
        tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    except OverflowError:  # past about 1,000 discordant pairs 2**n is no float
        tail = binomial_tail(n, k)
    return McNemarResult(only_a, only_b, min(1.0, 2.0 * tail))


def binomial_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly in integers, then rounded once."""
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return float(Fraction(total, 1 << n))


def binomial_test_greater(successes: int, n: int, p: float | Fraction) -> float:
    """One-sided exact binomial test: P(X >= successes) for X ~ Binomial(n, p).

    Summed exactly in integers for the rational value of ``p`` (a float is taken at its exact
    binary value, so pass ``Fraction(1, 3)`` for a third), then rounded once: no underflow and
    no cancellation however small the tail.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    rate = Fraction(p)
    if not 0 <= rate <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if successes == 0 or rate == 1:
        return 1.0
    a, b = rate.numerator, rate.denominator
    # term_i = C(n, i) a^i (b - a)^(n - i); the tail is sum_{i >= successes} term_i / b^n.
    term = math.comb(n, successes) * a**successes * (b - a) ** (n - successes)
    total = term
    for i in range(successes, n):
        term = term * (n - i) * a // ((i + 1) * (b - a))
        total += term
    return float(Fraction(total, b**n))


def poisson_binomial_greater(successes: int, probabilities: Sequence[float]) -> float:
    """P(X >= successes) where X is a sum of independent Bernoulli(p_i) trials.

    The exact distribution by dynamic programming (double precision); with one shared p it
    equals :func:`binomial_test_greater`. Used when trials differ in their chance rate (tasks
    with different candidate counts).
    """
    n = len(probabilities)
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if successes == 0:
        return 1.0
    dist = np.zeros(n + 1)
    dist[0] = 1.0
    for i, prob in enumerate(probabilities):
        if not 0 <= prob <= 1:
            raise ValueError(f"probabilities must be in [0, 1], got {prob}")
        dist[1 : i + 2] = dist[1 : i + 2] * (1 - prob) + dist[0 : i + 1] * prob
        dist[0] *= 1 - prob
    return float(min(1.0, math.fsum(dist[successes:].tolist())))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Sorted ascending, the i-th smallest (1-based) becomes ``max_{j<=i} min(1, (m-j+1) p_(j))``;
    rejecting where the adjusted value is <= alpha controls the family-wise error rate at alpha
    under any dependence between the tests.
    """
    m = len(p_values)
    for p in p_values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must be in [0, 1], got {p}")
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
