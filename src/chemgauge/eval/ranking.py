"""Ranking metrics: multi-positive NDCG and nearest-rank spreads (top-k and reciprocal rank are
computed where the benchmarks score rows: ``forward/rows.py``, ``forward/aggregate.py``,
``retro/metrics.py``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

__all__ = [
    "Distribution",
    "distribution",
    "distribution_of_sorted",
    "ndcg_at_k",
    "nearest_rank_percentile",
]


def ndcg_at_k(relevant_ranks: Iterable[int], n_relevant: int, k: int = 10) -> float:
    """Binary-relevance, multi-positive NDCG@k.

    Every rank below ``k`` in ``relevant_ranks`` earns 1/log2(rank + 2); the ideal DCG places
    ``min(k, n_relevant)`` relevant items at the top, ``n_relevant`` being the number of
    distinct accepted answers (so finding two of three scores between one and three).
    """
    if n_relevant <= 0:
        return 0.0
    ranks = sorted({r for r in relevant_ranks if 0 <= r < k})
    dcg = sum(1.0 / math.log2(r + 2) for r in ranks)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_relevant)))
    return dcg / ideal


def nearest_rank_percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation) of already sorted values; q in (0, 100]."""
    if not sorted_values:
        raise ValueError("percentile of an empty sequence")
    if not 0 < q <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {q}")
    index = max(1, math.ceil(q / 100 * len(sorted_values)))
    return float(sorted_values[index - 1])


@dataclass(frozen=True, slots=True)
class Distribution:
    """{min, p50, p90, p95, max, mean} with nearest-rank percentiles; ``n`` values summarized."""

    n: int
    min: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    max: float | None
    mean: float | None

    def to_dict(self) -> dict[str, float | int | None]:
        """Plain mapping for reports."""
        return asdict(self)


def distribution(values: Iterable[float]) -> Distribution:
    """Summarize values; an empty input yields ``None`` for every statistic, never zeros."""
    return distribution_of_sorted(sorted(float(v) for v in values))


def distribution_of_sorted(data: Sequence[float]) -> Distribution:
    """:func:`distribution` of values already sorted ascending (a list or a compact
    ``array('d')``, so callers summarizing many values need not build a list of floats)."""
    if not data:
        return Distribution(0, None, None, None, None, None, None)
    return Distribution(
        n=len(data),
        min=float(data[0]),
        p50=nearest_rank_percentile(data, 50),
        p90=nearest_rank_percentile(data, 90),
        p95=nearest_rank_percentile(data, 95),
        max=float(data[-1]),
        mean=math.fsum(data) / len(data),
    )
