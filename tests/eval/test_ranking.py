"""Ranking metrics on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chemgauge.eval.ranking import (
    distribution,
    ndcg_at_k,
    nearest_rank_percentile,
)


def test_ndcg_multi_positive_hand_values() -> None:
    assert ndcg_at_k([0], 1) == 1.0
    assert ndcg_at_k([1], 1) == pytest.approx(1 / math.log2(3))
    # Two of three accepted outcomes, at ranks 0 and 2: (1 + 1/2) / (1 + 1/log2 3 + 1/2).
    assert ndcg_at_k([0, 2], 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3) + 0.5))
    assert ndcg_at_k([0, 1, 2], 3) == pytest.approx(1.0)
    assert ndcg_at_k([0], 3) < ndcg_at_k([0, 2], 3) < ndcg_at_k([0, 1, 2], 3)
    assert ndcg_at_k([10, 11], 1) == 0.0
    assert ndcg_at_k([], 0) == 0.0
    # The ideal is capped at k positions even with more accepted outcomes.
    assert ndcg_at_k(range(10), 15) == pytest.approx(1.0)


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 11)]
    assert nearest_rank_percentile(values, 50) == 5
    assert nearest_rank_percentile(values, 90) == 9
    assert nearest_rank_percentile(values, 95) == 10
    assert nearest_rank_percentile([7.0], 50) == 7
    summary = distribution([3, 1, 2])
    assert (summary.min, summary.p50, summary.max, summary.mean) == (1, 2, 3, 2)
    assert distribution([]).to_dict()["p50"] is None


def test_nearest_rank_percentile_rounds_the_rank_up_where_rounding_would_not() -> None:
    # Rank = ceil(q/100 * n): n = 7 gives p50 rank ceil(3.5) = 4, p90 ceil(6.3) = 7 (round: 6),
    # p95 ceil(6.65) = 7; n = 13 gives p50 ceil(6.5) = 7 (round: 6, banker's rounding);
    # n = 19 gives p95 ceil(18.05) = 19 (round: 18). floor would give 3, 6, 6, 6, 18.
    seven = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]
    assert nearest_rank_percentile(seven, 50) == 40.0
    assert nearest_rank_percentile(seven, 90) == 70.0
    assert nearest_rank_percentile(seven, 95) == 70.0
    assert nearest_rank_percentile([float(v) for v in range(1, 14)], 50) == 7.0
    assert nearest_rank_percentile([float(v) for v in range(1, 20)], 95) == 19.0
    summary = distribution(reversed(seven))
    assert (summary.n, summary.p50, summary.p90, summary.p95) == (7, 40.0, 70.0, 70.0)


def test_nearest_rank_percentile_agrees_with_numpy_inverted_cdf() -> None:
    # Hyndman-Fan type 1 (numpy's "inverted_cdf") is the nearest-rank definition: an outside
    # reference over every n up to 40 and the percentiles the reports publish.
    for n in range(1, 41):
        values = [float(3 * v + 1) for v in range(n)]
        for q in (1, 5, 25, 50, 75, 90, 95, 99, 100):
            expected = float(np.percentile(values, q, method="inverted_cdf"))
            assert nearest_rank_percentile(values, q) == expected, (n, q)


def test_percentile_refuses_what_has_no_percentile() -> None:
    with pytest.raises(ValueError, match=r"^percentile of an empty sequence$"):
        nearest_rank_percentile([], 50)
    for q in (0, -5, 100.5, 101):
        with pytest.raises(ValueError, match=r"percentile must be in \(0, 100\], got"):
            nearest_rank_percentile([1.0, 2.0], q)
    assert nearest_rank_percentile([1.0, 2.0], 100) == 2.0


def test_distribution_reads_the_published_percentiles_at_their_exact_rank() -> None:
    # 1..100: the q-th percentile is the value q itself, so p51/p91/p96 would show.
    summary = distribution(range(100, 0, -1))
    assert (summary.p50, summary.p90, summary.p95) == (50.0, 90.0, 95.0)
    assert distribution([]).to_dict() == dict.fromkeys(
        ("min", "p50", "p90", "p95", "max", "mean"), None
    ) | {"n": 0}
