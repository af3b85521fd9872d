"""Intervals and paired tests against hand-checked and textbook values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemgauge.errors import ConfigError
from chemgauge.eval.stats import (
    MAX_SEED,
    binomial_tail,
    binomial_test_greater,
    bootstrap_interval,
    bootstrap_mean_interval,
    check_seed,
    holm_adjust,
    mcnemar_exact,
    paired_bootstrap_difference,
    poisson_binomial_greater,
    wilson_interval,
)


def test_wilson_textbook_value() -> None:
    interval = wilson_interval(8, 10)
    assert interval.estimate == 0.8
    assert interval.low == pytest.approx(0.4902, abs=1e-4)
    assert interval.high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0).estimate is None
    zero = wilson_interval(0, 20)
    assert zero.low == 0.0 and 0 < (zero.high or 0) < 0.2
    full = wilson_interval(20, 20)
    assert full.high == pytest.approx(1.0) and (full.low or 0) > 0.8
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_mcnemar_exact_hand_values() -> None:
    # 1 vs 9 discordant pairs: 2 * (C(10,0) + C(10,1)) / 2^10.
    assert mcnemar_exact(1, 9).p_value == pytest.approx(22 / 1024)
    assert mcnemar_exact(5, 5).p_value == 1.0
    assert mcnemar_exact(0, 0).p_value == 1.0
    assert mcnemar_exact(0, 6).p_value == pytest.approx(2 / 64)


def test_bootstrap_is_seeded_and_recorded() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    first = bootstrap_interval(values, seed=7, resamples=500)
    again = bootstrap_interval(values, seed=7, resamples=500)
    other = bootstrap_interval(values, seed=8, resamples=500)
    assert first == again
    assert first.seed == 7 and first.resamples == 500
    assert first.estimate == pytest.approx(0.625)
    assert (first.low or 0) <= 0.625 <= (first.high or 0)
    assert (first.low, first.high) != (other.low, other.high) or first.n < 3


def test_paired_bootstrap_difference() -> None:
    a = [1.0] * 30 + [0.0] * 10
    b = [1.0] * 20 + [0.0] * 20
    diff = paired_bootstrap_difference(a, b, seed=3, resamples=1000)
    assert diff.estimate == pytest.approx(0.25)
    assert (diff.low or 0) > 0, "a is better on every discordant item"
    with pytest.raises(ValueError):
        paired_bootstrap_difference([1.0], [1.0, 0.0], seed=1)


def test_mcnemar_exact_past_a_thousand_discordant_pairs() -> None:
    # 2**n is no float past n = 1023: the tail is summed exactly in integers instead.
    assert mcnemar_exact(600, 600).p_value == 1.0
    assert mcnemar_exact(500, 700).p_value == mcnemar_exact(700, 500).p_value
    assert 0.0 < mcnemar_exact(500, 700).p_value < 1e-6
    assert mcnemar_exact(0, 1100).p_value == 0.0  # 2**-1099 underflows
    # The exact tail agrees with the float sum where both work (1/1024 + 10/1024 = 11/1024).
    assert binomial_tail(10, 1) == 11 / 1024
    float_tail = math.fsum(math.comb(1000, i) for i in range(401)) / 2.0**1000
    assert binomial_tail(1000, 400) == pytest.approx(float_tail, rel=1e-12)


def test_bootstrap_in_blocks_equals_one_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from chemgauge.eval import stats

    values = [float(i % 7 == 0) for i in range(3001)]
    rng = np.random.default_rng(11)
    data = np.asarray(values)
    whole = np.sort(data[rng.integers(0, len(values), size=(500, len(values)))].mean(axis=-1))
    monkeypatch.setattr(stats, "BOOTSTRAP_BLOCK", 7 * len(values) + 3)  # 7 rows a block
    blocked = bootstrap_interval(values, seed=11, resamples=500)
    assert blocked.low == float(np.quantile(whole, 0.025, method="inverted_cdf"))
    assert blocked.high == float(np.quantile(whole, 0.975, method="inverted_cdf"))


def test_multinomial_mean_bootstrap_is_seeded_and_hand_checked() -> None:
    # Reciprocal ranks of 8 items: the mean is exact; one value everywhere has no spread.
    ranks = [1.0, 0.5, 0.0, 1.0, 0.2, 0.0, 1.0, 1 / 3]
    first = bootstrap_mean_interval(ranks, seed=5, resamples=1000)
    assert first == bootstrap_mean_interval(ranks, seed=5, resamples=1000)
    assert first.estimate == pytest.approx(sum(ranks) / 8)
    assert first.method == "bootstrap-percentile-multinomial" and first.seed == 5
    assert (first.low or 0) < first.estimate < (first.high or 0)
    assert first != bootstrap_mean_interval(ranks, seed=6, resamples=1000)
    same = bootstrap_mean_interval([0.5] * 40, seed=1)
    assert (same.low, same.estimate, same.high) == (0.5, 0.5, 0.5)
    assert bootstrap_mean_interval([], seed=1).estimate is None


def test_multinomial_mean_bootstrap_agrees_with_resampling_items() -> None:
    """Same distribution as indexing items: the two intervals agree to Monte Carlo error."""
    values = [1.0 / (1 + (i * 7919) % 11) if i % 3 else 0.0 for i in range(2000)]
    counts = bootstrap_mean_interval(values, seed=2, resamples=4000)
    items = bootstrap_interval(values, seed=2, resamples=4000)
    assert counts.low == pytest.approx(items.low, abs=0.004)
    assert counts.high == pytest.approx(items.high, abs=0.004)


def test_binomial_test_greater_hand_and_table_values() -> None:
    # 8 or more heads in 10 fair tosses: (45 + 10 + 1) / 1024
    assert binomial_test_greater(8, 10, Fraction(1, 2)) == 56 / 1024
    # 3 or more sixes in 5 rolls: (10 * 25 + 5 * 5 + 1) / 6**5
    assert binomial_test_greater(3, 5, Fraction(1, 6)) == pytest.approx(276 / 7776, rel=1e-15)
    # published cumulative binomial table, n = 20, p = 0.25: P(X <= 9) = 0.9861
    assert binomial_test_greater(10, 20, 0.25) == pytest.approx(1 - 0.9861, abs=5e-5)
    assert binomial_test_greater(0, 7, 0.3) == 1.0
    assert binomial_test_greater(7, 7, 1.0) == 1.0
    assert binomial_test_greater(1, 7, 0.0) == 0.0
    with pytest.raises(ValueError):
        binomial_test_greater(11, 10, 0.5)


def test_binomial_test_greater_matches_a_direct_exact_sum() -> None:
    for n, k, p in ((40, 18, Fraction(1, 4)), (137, 50, Fraction(1, 4)), (60, 30, Fraction(1, 3))):
        direct = sum(Fraction(math.comb(n, i)) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
        assert binomial_test_greater(k, n, p) == float(direct)
    # far tails keep their exact value (no cancellation against 1)
    assert binomial_test_greater(200, 200, Fraction(1, 4)) == float(Fraction(1, 4**200))


def test_poisson_binomial_reduces_to_the_binomial_and_hand_values() -> None:
    assert poisson_binomial_greater(1, [0.5, 1 / 3]) == pytest.approx(2 / 3)
    assert poisson_binomial_greater(2, [0.5, 1 / 3]) == pytest.approx(1 / 6)
    for k in (0, 5, 12, 30):
        assert poisson_binomial_greater(k, [0.25] * 30) == pytest.approx(
            binomial_test_greater(k, 30, 0.25), rel=1e-9, abs=1e-300
        )


def test_holm_lives_in_stats_and_compare_reexports_it() -> None:
    from chemgauge.report.compare import holm_adjust as from_compare

    assert from_compare is holm_adjust
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_poisson_binomial_tail_is_clipped_at_realistic_audit_input() -> None:
    # 200 tasks of 2-10 candidates and one success: the exact DP tail sums to
    # 1.0000000000000038 in doubles; a p-value above 1 would make holm_adjust raise.
    chances = [1 / (2 + i % 9) for i in range(200)]
    assert poisson_binomial_greater(1, chances) == 1.0
    assert holm_adjust([poisson_binomial_greater(1, chances), 0.01]) == [1.0, 0.02]


@given(
    chances=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=300),
    share=st.floats(min_value=0.0, max_value=1.0),
    only=st.tuples(st.integers(0, 3000), st.integers(0, 3000)),
)
def test_every_p_value_holm_receives_lies_in_the_unit_interval(
    chances: list[int], share: float, only: tuple[int, int]
) -> None:
    """Every producer of a p-value that reaches holm_adjust (audit, compare, board)."""
    successes = round(share * len(chances))
    produced = [
        poisson_binomial_greater(successes, [1 / k for k in chances]),
        binomial_test_greater(successes, len(chances), Fraction(1, chances[0])),
        mcnemar_exact(*only).p_value,
    ]
    for p in produced:
        assert 0.0 <= p <= 1.0
    adjusted = holm_adjust(produced)
    assert all(p <= a <= 1.0 for p, a in zip(produced, adjusted, strict=True))


def test_check_seed_accepts_exactly_zero_to_two_to_the_32_minus_one() -> None:
    assert check_seed(0) == 0
    assert check_seed(MAX_SEED) == MAX_SEED == 2**32 - 1
    for bad in (-1, MAX_SEED + 1, True, False, 1.0, "1", None):
        with pytest.raises(ConfigError) as caught:
            check_seed(bad, "--bootstrap-seed")  # type: ignore[arg-type]
        assert str(caught.value) == (
            f"--bootstrap-seed must be a whole number from 0 to 4,294,967,295, got {bad!r}"
        )
    with pytest.raises(ConfigError, match=r"^--seed must"):
        check_seed(-1)
