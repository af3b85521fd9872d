"""Holm correction and the paired bootstrap on hand-checked cases."""

from __future__ import annotations

import pytest

from chemgauge.eval.stats import paired_bootstrap_difference
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
    empty = paired_binary_bootstrap(0, 0, 0, seed=1)
    assert empty.estimate is None and empty.n == 0


def test_bootstrap_is_seeded_and_recorded() -> None:
    one = paired_binary_bootstrap(30, 12, 200, seed=7)
    assert one == paired_binary_bootstrap(30, 12, 200, seed=7)
    assert one.seed == 7 and one.resamples == 2000
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


def test_bootstrap_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        paired_binary_bootstrap(8, 5, 10, seed=0)
