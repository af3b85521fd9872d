"""Holm correction and the paired bootstrap on hand-checked cases."""

from __future__ import annotations

import pytest

from chemgauge.eval.stats import Interval, paired_bootstrap_difference
from chemgauge.report.compare import holm_adjust, paired_binary_bootstrap


def test_holm_hand_checked() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_input_order() -> None:
    assert holm_adjust([0.9, 0.2]) == pytest.approx([0.9, 0.4])
    assert holm_adjust([0.6, 0.7, 0.01]) == pytest.approx([1.0, 1.0, 0.03])


def test_holm_single_and_empty() -> None:
    assert holm_adjust([0.2]) == [0.2]
    assert holm_adjust([]) == []


def test_holm_rejects_invalid_p() -> None:
    with pytest.raises(ValueError, match="p-values"):
        holm_adjust([0.5, 1.5])


def test_bootstrap_degenerate_cases_are_exact() -> None:
    none = paired_binary_bootstrap(0, 0, 20, seed=1)
    assert (none.estimate, none.low, none.high) == (0.0, 0.0, 0.0)
    all_a = paired_binary_bootstrap(20, 0, 20, seed=1)
    assert (all_a.estimate, all_a.low, all_a.high) == (1.0, 1.0, 1.0)
    all_b = paired_binary_bootstrap(0, 7, 7, seed=1)
    assert (all_b.estimate, all_b.low, all_b.high) == (-1.0, -1.0, -1.0)
    empty = paired_binary_bootstrap(0, 0, 0, seed=1, resamples=300, confidence=0.9)
    assert empty == Interval(None, None, None, 0.9, "paired-bootstrap-multinomial", 0, 1, 300)


def test_bootstrap_is_seeded_and_recorded() -> None:
    one = paired_binary_bootstrap(30, 12, 200, seed=7)
    assert one == paired_binary_bootstrap(30, 12, 200, seed=7)
    assert one.seed == 7 and one.resamples == 2000
    assert (one.method, one.n, one.confidence) == ("paired-bootstrap-multinomial", 200, 0.95)
    assert one.estimate == pytest.approx(18 / 200)
    assert one.low is not None and one.high is not None and one.low < 0.09 < one.high


def test_bootstrap_matches_item_resampling() -> None:
    """The multinomial shortcut has the item bootstrap's distribution (same interval +- noise)."""
    a = [1] * 30 + [0] * 12 + [1] * 100 + [0] * 58
    b = [0] * 30 + [1] * 12 + [1] * 100 + [0] * 58
    items = paired_bootstrap_difference(a, b, seed=3, resamples=4000)
    fast = paired_binary_bootstrap(30, 12, 200, seed=3, resamples=4000)
    assert fast.estimate == pytest.approx(items.estimate)
    assert fast.low == pytest.approx(items.low, abs=0.015)
    assert fast.high == pytest.approx(items.high, abs=0.015)


@pytest.mark.parametrize(("only_a", "only_b"), [(8, 5), (-1, 0), (0, -1), (-1, -1), (11, 0)])
def test_bootstrap_rejects_impossible_counts(only_a: int, only_b: int) -> None:
    expected = rf"^need 0 <= only_a \+ only_b <= n, got {only_a} \+ {only_b} > 10$"
    with pytest.raises(ValueError, match=expected):
        paired_binary_bootstrap(only_a, only_b, 10, seed=0)


def test_bootstrap_ends_are_attainable_differences_never_interpolated() -> None:
    # Every resample's difference is (X_a - X_b) / n for whole counts; the percentile ends are
    # two of those (inverted-CDF quantiles), never a value between two of them. At 100
    # resamples the 2.5% end is the 3rd smallest draw, and the 3rd and 4th often differ.
    for seed in range(20):
        interval = paired_binary_bootstrap(9, 4, 40, seed=seed, resamples=100)
        assert interval.low is not None and interval.high is not None
        for end in (interval.low, interval.high):
            assert end * 40 == pytest.approx(round(end * 40), abs=1e-9), (seed, end)


def _exact_difference_quantiles(only_a: int, only_b: int, n: int, p: float) -> tuple[int, int]:
    """The p and 1 - p inverted-CDF quantiles of X_a - X_b, (X_a, X_b, rest) multinomial: the
    distribution the paired bootstrap samples, enumerated exactly with scipy.stats."""
    from scipy.stats import multinomial

    probs = [only_a / n, only_b / n, 1 - (only_a + only_b) / n]
    draws = [(xa, xb, n - xa - xb) for xa in range(n + 1) for xb in range(n + 1 - xa)]
    mass: dict[int, float] = {}
    for (xa, xb, _), pmf in zip(draws, multinomial.pmf(draws, n, probs), strict=True):
        mass[xa - xb] = mass.get(xa - xb, 0.0) + float(pmf)
    support, running, cdf = sorted(mass), 0.0, []
    for k in support:
        running += mass[k]
        cdf.append(running)
    low = next(k for k, c in zip(support, cdf, strict=True) if c >= p)
    high = next(k for k, c in zip(support, cdf, strict=True) if c >= 1 - p)
    return low, high


def test_bootstrap_default_is_a_95_percent_interval_against_the_exact_distribution() -> None:
    # 5 only-A, 2 only-B of 25: exact CDF of X_a - X_b is 0.0152 at -3, 0.0383 at -2, 0.0847
    # at -1; 0.9595 at 7, 0.9832 at 8. So the 95% interval is [-2, 8]/25 and the 90% one
    # [-1, 7]/25, each CDF step a few Monte Carlo errors (sqrt(.025 * .975 / 2000) = 0.0035)
    # away from the 2.5% / 97.5% cut: every seed lands on the exact quantiles.
    assert _exact_difference_quantiles(5, 2, 25, 0.025) == (-2, 8)
    assert _exact_difference_quantiles(5, 2, 25, 0.05) == (-1, 7)
    for seed in range(5):
        interval = paired_binary_bootstrap(5, 2, 25, seed=seed)
        assert interval.confidence == 0.95
        assert (interval.low, interval.high) == (-2 / 25, 8 / 25), seed
    ninety = paired_binary_bootstrap(5, 2, 25, seed=0, confidence=0.90)
    assert (ninety.confidence, ninety.low, ninety.high) == (0.90, -1 / 25, 7 / 25)
