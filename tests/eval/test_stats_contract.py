"""The statistics' contracts at their edges: intervals against exact distributions (scipy.stats),
what every interval records about how it was made, and each refusal with its message."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from chemgauge.eval.stats import (
    MULTINOMIAL_MAX_DISTINCT,
    binomial_test_greater,
    bootstrap_interval,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    paired_bootstrap_difference,
    poisson_binomial_greater,
    wilson_interval,
)

# 7 hits of 17: a bootstrap mean is Binomial(17, 7/17) / 17. Its exact CDF steps past 2.5% at 3
# and past 97.5% at 11 (90%: 4 and 10), each step at least 0.011 (3 Monte Carlo errors at 2000
# resamples) away from the cut, so every seed lands on the exact quantiles.
HITS = [1.0] * 7 + [0.0] * 10


def _recorded(interval: Any) -> dict[str, object]:
    out = interval.to_dict()
    return {k: out[k] for k in ("confidence", "method", "n", "seed", "resamples")}


def test_the_exact_binomial_quantiles_are_those_the_test_relies_on() -> None:
    from scipy.stats import binom

    quantiles = binom.ppf([0.025, 0.975, 0.05, 0.95], 17, 7 / 17)
    assert quantiles.tolist() == [3.0, 11.0, 4.0, 10.0]


@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_means_of_hits_have_the_exact_binomial_95_percent_bounds(seed: int) -> None:
    for interval in (bootstrap_mean_interval(HITS, seed=seed), bootstrap_interval(HITS, seed=seed)):
        assert (interval.low, interval.high) == (3 / 17, 11 / 17)
        assert interval.estimate == pytest.approx(7 / 17) and interval.confidence == 0.95
    ninety = bootstrap_mean_interval(HITS, seed=seed, confidence=0.90)
    assert (ninety.low, ninety.high) == (4 / 17, 10 / 17)


def test_every_interval_records_how_it_was_made() -> None:
    assert _recorded(wilson_interval(0, 0)) == {
        "confidence": 0.95, "method": "wilson", "n": 0, "seed": None, "resamples": None,
    }  # fmt: skip
    assert _recorded(wilson_interval(3, 10, 0.9)) == {
        "confidence": 0.9, "method": "wilson", "n": 10, "seed": None, "resamples": None,
    }  # fmt: skip
    for empty, method in (
        (bootstrap_interval([], seed=4), "bootstrap-percentile"),
        (bootstrap_mean_interval([], seed=4), "bootstrap-percentile-multinomial"),
    ):
        assert empty.to_dict() == {
            "estimate": None, "low": None, "high": None, "confidence": 0.95, "method": method,
            "n": 0, "seed": 4, "resamples": 2000,
        }  # fmt: skip
    for made, method in (
        (bootstrap_interval(HITS, seed=5, confidence=0.8), "bootstrap-percentile"),
        (bootstrap_mean_interval(HITS, seed=5, confidence=0.8), "bootstrap-percentile-multinomial"),
        (
            paired_bootstrap_difference(HITS, HITS[::-1], seed=5, confidence=0.8),
            "paired-bootstrap-percentile",
        ),
    ):
        assert _recorded(made) == {
            "confidence": 0.8, "method": method, "n": 17, "seed": 5, "resamples": 2000,
        }  # fmt: skip
    one = bootstrap_interval([2.5], seed=1, resamples=7)
    assert (one.estimate, one.low, one.high, one.n, one.resamples) == (2.5, 2.5, 2.5, 1, 7)
    assert mcnemar_exact(0, 0).to_dict() == {"only_a": 0, "only_b": 0, "p_value": 1.0}
    assert mcnemar_exact(3, 1).to_dict() == {"only_a": 3, "only_b": 1, "p_value": 0.625}


def test_the_bootstrap_draws_exactly_the_resamples_asked_for_and_reports_one_of_them() -> None:
    shapes: list[tuple[int, ...]] = []
    seen: list[float] = []

    def spread(rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        shapes.append(rows.shape)
        out = rows.max(axis=-1) - rows.min(axis=-1) + rows.mean(axis=-1)
        seen.extend(out.tolist())
        return out  # type: ignore[no-any-return]

    values = [0.3, 1.7, 2.2, 5.1, 8.9]
    interval = bootstrap_interval(values, seed=2, resamples=10, confidence=0.5, statistic=spread)
    assert sum(s[0] for s in shapes[:-1]) == 10 and all(s[1] == 5 for s in shapes)
    # Percentile bounds are resample statistics themselves (inverted CDF, no interpolation:
    # the 25% and 75% points of 10 values fall between two of them).
    resampled = seen[:10]
    assert interval.low in resampled and interval.high in resampled
    assert interval.estimate == seen[-1] == pytest.approx(8.9 - 0.3 + 3.64)


def test_the_multinomial_bounds_are_means_a_resample_can_take() -> None:
    # 5 resamples at 50%: the quartile points fall between two resample means; the bounds
    # must be one of them, a whole number of hits over 17.
    for seed in range(3):
        interval = bootstrap_mean_interval(HITS, seed=seed, resamples=6, confidence=0.5)
        assert interval.low is not None and interval.high is not None
        assert (interval.low * 17) == pytest.approx(round(interval.low * 17), abs=1e-12)
        assert (interval.high * 17) == pytest.approx(round(interval.high * 17), abs=1e-12)


def test_wilson_upper_bound_is_capped_at_one_where_rounding_passes_it() -> None:
    # With every trial a success the Wilson bound is 1 exactly; in floating point
    # centre + half exceeds 1 for n = 38, 40, 46, ... (366 of n < 2000).
    for n in (38, 40, 46, 48, 51):
        assert wilson_interval(n, n).high == 1.0


def test_the_paired_difference_is_the_bootstrap_of_the_differences_with_its_seed() -> None:
    a = [0.31, 0.92, 0.15, 0.77, 0.48, 0.66, 0.05, 0.83]
    b = [0.12, 0.95, 0.40, 0.21, 0.50, 0.18, 0.33, 0.60]
    diff = [x - y for x, y in zip(a, b, strict=True)]
    paired = paired_bootstrap_difference(a, b, seed=11, resamples=300, confidence=0.8)
    plain = bootstrap_interval(diff, seed=11, resamples=300, confidence=0.8)
    assert (paired.estimate, paired.low, paired.high) == (plain.estimate, plain.low, plain.high)


def test_the_paired_difference_of_hit_flags() -> None:
    a = [True, True, False, True, False, True, True, False]
    b = [False, True, False, False, False, True, False, True]
    diff = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    paired = paired_bootstrap_difference(a, b, seed=11, resamples=300, confidence=0.8)  # type: ignore[arg-type]
    plain = bootstrap_interval(diff, seed=11, resamples=300, confidence=0.8)
    assert (paired.estimate, paired.low, paired.high) == (plain.estimate, plain.low, plain.high)
    assert paired.estimate == pytest.approx(2 / 8)
    assert paired == paired_bootstrap_difference(a, b, seed=11, resamples=300, confidence=0.8)  # type: ignore[arg-type]


def test_many_distinct_values_fall_back_to_the_item_bootstrap_at_the_limit() -> None:
    at_limit = [float(v) for v in range(MULTINOMIAL_MAX_DISTINCT)]
    assert bootstrap_mean_interval(at_limit, seed=3, resamples=20).method == (
        "bootstrap-percentile-multinomial"
    )
    over = [*at_limit, -1.0]
    fallback = bootstrap_mean_interval(over, seed=3, resamples=20, confidence=0.8)
    assert fallback == bootstrap_interval(over, seed=3, resamples=20, confidence=0.8)


def test_each_refusal_says_what_was_wrong() -> None:
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\), got"):
            wilson_interval(1, 2, confidence)
    for successes, n in ((-1, 3), (4, 3), (0, -1)):
        with pytest.raises(ValueError, match=r"need 0 <= successes <= n, got"):
            wilson_interval(successes, n)
    with pytest.raises(ValueError, match="paired samples differ in length: 2 vs 1"):
        paired_bootstrap_difference([1.0, 0.0], [1.0], seed=0)
    for only_a, only_b in ((-1, 2), (2, -1)):
        with pytest.raises(ValueError, match=r"^discordant counts must be non-negative$"):
            mcnemar_exact(only_a, only_b)
    with pytest.raises(ValueError, match=r"need 0 <= successes <= n, got 1/0"):
        binomial_test_greater(1, 0, 0.5)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\], got 1.5"):
        binomial_test_greater(1, 3, 1.5)
    with pytest.raises(ValueError, match=r"need 0 <= successes <= n, got 3/2"):
        poisson_binomial_greater(3, [0.5, 0.5])
    for prob in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"probabilities must be in \[0, 1\], got"):
            poisson_binomial_greater(1, [0.5, prob])
    for p in (-0.01, 1.01):
        with pytest.raises(ValueError, match=r"p-values must be in \[0, 1\]"):
            holm_adjust([0.5, p])


def test_the_closed_ends_of_each_range_are_accepted() -> None:
    assert binomial_test_greater(0, 0, 0.5) == 1.0  # no trials: certain to reach 0 successes
    assert binomial_test_greater(3, 5, 1) == 1.0 and binomial_test_greater(3, 5, 0) == 0.0
    assert binomial_test_greater(0, 4, Fraction(1, 3)) == 1.0
    assert poisson_binomial_greater(2, [0.0, 1.0, 1.0]) == 1.0
    assert poisson_binomial_greater(1, [0.0, 0.0]) == 0.0
    assert holm_adjust([0.0, 1.0, 0.02]) == [0.0, 1.0, 0.04]
