"""Several systems on the same items: values, pairwise tests, Holm, ranks and letters checked
by hand, and the bootstrap against the one in ``eval.stats``."""

from __future__ import annotations

import numpy as np
import pytest

from chemgauge.eval.stats import bootstrap_interval, mcnemar_exact, wilson_interval
from chemgauge.report.compare import holm_adjust
from chemgauge.report.standings import (
    Column,
    StatSettings,
    bootstrap_p_value,
    rank_systems,
)


def _hits(bits: str) -> Column:
    """A hit column from ``1``/``0`` per item (``-``: the item does not take part)."""
    return Column.of([None if c == "-" else (float(c), 1.0) for c in bits])


def test_hits_mcnemar_holm_ranks_and_letters_by_hand() -> None:
    # 12 items. A hits 10, B hits 9, C hits 2.
    a = _hits("111111111100")
    b = _hits("111111111000")
    c = _hits("110000000000")
    result = rank_systems([a, b, c], "hit", ["A", "B", "C"])
    assert [s.index for s in result.standings] == [0, 1, 2]
    assert [s.rank for s in result.standings] == [1, 2, 3]
    assert [s.value.estimate for s in result.standings] == pytest.approx([10 / 12, 9 / 12, 2 / 12])
    assert result.standings[0].value == wilson_interval(10, 12)
    ab, ac, bc = result.pair(0, 1), result.pair(0, 2), result.pair(1, 2)
    assert (ab.only_a, ab.only_b, ab.n) == (1, 0, 12)
    assert (ac.only_a, ac.only_b) == (8, 0)
    assert (bc.only_a, bc.only_b) == (7, 0)
    assert ab.p_value == mcnemar_exact(1, 0).p_value == 1.0
    assert ac.p_value == pytest.approx(2 / 2**8)
    assert bc.p_value == pytest.approx(2 / 2**7)
    # Holm over the three pairs: 3 * 2^-7, then max(that, 2 * 2^-6), then 1.
    assert [ac.p_holm, bc.p_holm, ab.p_holm] == pytest.approx(
        holm_adjust([ac.p_value, bc.p_value, ab.p_value])
    )
    assert ac.p_holm == pytest.approx(3 * 2 / 2**8) and bc.p_holm == pytest.approx(2 * 2 / 2**7)
    assert [s.letters for s in result.standings] == ["a", "a", "b"]
    assert result.pair(2, 0) is ac


def test_non_transitive_tie_from_real_tests() -> None:
    # Item patterns (A, B, C): 110 x4, 100 x4, 010 x1, 101 x1, 111 x10, 000 x10.
    # Discordant pairs: A-B 5 vs 1 (p 0.22), B-C 5 vs 1 (p 0.22), A-C 8 vs 0 (p 2/256).
    patterns = ["110"] * 4 + ["100"] * 4 + ["010", "101"] + ["111"] * 10 + ["000"] * 10
    a, b, c = (_hits("".join(p[i] for p in patterns)) for i in range(3))
    result = rank_systems([c, a, b], "hit", ["C", "A", "B"])
    labels = ["C", "A", "B"]
    assert (result.pair(1, 2).only_a, result.pair(1, 2).only_b) == (5, 1)
    assert result.pair(1, 0).p_value == pytest.approx(2 / 256)
    assert result.pair(1, 0).p_holm == pytest.approx(3 * 2 / 256)  # significant
    assert result.pair(1, 2).p_holm > 0.05 and result.pair(2, 0).p_holm > 0.05
    letters = {labels[s.index]: s.letters for s in result.standings}
    assert letters == {"A": "a", "B": "ab", "C": "b"}


def test_ties_share_a_rank_and_order_by_label() -> None:
    same = _hits("1100")
    result = rank_systems([same, _hits("1000"), same], "hit", ["z", "m", "b"])
    assert [(s.index, s.rank) for s in result.standings] == [(2, 1), (0, 1), (1, 3)]


def test_items_outside_a_system_do_not_count() -> None:
    # The last two items take part in neither system's measure (invalid inputs, say).
    a, b = _hits("1110--"), _hits("0000--")
    result = rank_systems([a, b], "hit", ["a", "b"])
    assert result.standings[0].value.n == 4 and result.standings[0].count == 3
    assert result.pair(0, 1).n == 4 and result.pair(0, 1).only_a == 3


def test_ratio_uses_wilson_on_each_systems_own_denominator() -> None:
    # Round trips of emitted names: A emits 8 of 10 and 6 round-trip; B emits 4, all round-trip.
    a = Column.of([(1.0, 1.0)] * 6 + [(0.0, 1.0)] * 2 + [(0.0, 0.0)] * 2)
    b = Column.of([(1.0, 1.0)] * 4 + [(0.0, 0.0)] * 6)
    result = rank_systems([a, b], "ratio", ["A", "B"], StatSettings(seed=3))
    top, second = result.standings
    assert (top.index, top.value) == (1, wilson_interval(4, 4))
    assert (second.count, second.total) == (6, 8)
    pair = result.pair(0, 1)
    assert pair.test == "paired-bootstrap" and pair.only_a is None
    assert pair.difference.estimate == pytest.approx(6 / 8 - 1.0)
    assert 0 < pair.p_value <= 1


def test_mean_interval_is_the_stats_bootstrap() -> None:
    rng = np.random.default_rng(7)
    values = 1.0 / (1 + rng.integers(0, 20, size=300))
    column = Column(values, np.ones(300), np.ones(300, dtype=np.bool_))
    other = Column(values * 0.5, np.ones(300), np.ones(300, dtype=np.bool_))
    result = rank_systems([column, other], "mean", ["x", "y"], StatSettings(seed=11))
    reference = bootstrap_interval(values.tolist(), seed=11)
    mine = result.standings[0].value
    assert mine.estimate == pytest.approx(reference.estimate)
    assert (mine.low, mine.high) == pytest.approx((reference.low, reference.high), rel=1e-12)
    assert (mine.seed, mine.resamples) == (11, 2000)
    # Halving every score is a large paired difference: the smallest p-value resamples allow.
    pair = result.pair(0, 1)
    assert pair.p_value == pytest.approx(1 / 2001)
    assert pair.difference.low is not None and pair.difference.low > 0


def test_identical_systems_are_never_different() -> None:
    values = Column(np.linspace(0, 1, 50), np.ones(50), np.ones(50, dtype=np.bool_))
    result = rank_systems([values, values], "mean", ["p", "q"])
    assert result.pair(0, 1).p_value == 1.0
    assert [s.letters for s in result.standings] == ["a", "a"]


def test_same_inputs_same_numbers_and_seed_matters() -> None:
    rng = np.random.default_rng(1)
    cols = [Column(rng.random(100), np.ones(100), np.ones(100, dtype=np.bool_)) for _ in range(3)]
    one = rank_systems(cols, "mean", ["a", "b", "c"], StatSettings(seed=5))
    two = rank_systems(cols, "mean", ["a", "b", "c"], StatSettings(seed=5))
    other = rank_systems(cols, "mean", ["a", "b", "c"], StatSettings(seed=6))
    assert one == two
    assert one.standings[0].value.low != other.standings[0].value.low


def test_bootstrap_p_value_by_hand() -> None:
    resampled = np.array([0.1, 0.2, 0.3, -0.05, np.nan])
    # observed 0.1: |d* - 0.1| >= 0.1 for 0.2, 0.3 and -0.05 (3 of 4 finite).
    assert bootstrap_p_value(0.1, resampled) == pytest.approx((1 + 3) / (1 + 4))
    assert bootstrap_p_value(0.0, resampled) == 1.0


def test_no_items_and_bad_input() -> None:
    empty = Column.of([])
    result = rank_systems([empty, empty], "mean", ["a", "b"])
    assert result.pair(0, 1).p_value == 1.0
    assert [s.rank for s in result.standings] == [None, None]
    with pytest.raises(ValueError, match="distinct label"):
        rank_systems([empty, empty], "hit", ["a", "a"])
    with pytest.raises(ValueError, match="different numbers of items"):
        rank_systems([empty, _hits("1")], "hit", ["a", "b"])
    with pytest.raises(ValueError, match="whole counts"):
        rank_systems([Column.of([(0.5, 1.0)])], "hit", ["a"])
    with pytest.raises(ValueError, match="resamples"):
        StatSettings(resamples=10)


def test_a_system_without_items_has_no_rank_and_no_letter() -> None:
    result = rank_systems([_hits("10"), _hits("--"), _hits("01")], "hit", ["a", "b", "c"])
    by_index = {s.index: s for s in result.standings}
    assert (by_index[1].rank, by_index[1].letters, by_index[1].value.estimate) == (None, "", None)
    assert by_index[0].letters == by_index[2].letters == "a"
    assert result.pair(0, 1).n == 0 and result.pair(0, 1).p_value == 1.0
