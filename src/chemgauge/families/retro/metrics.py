"""Aggregates of retro rows: folded row by row, with intervals and a class breakdown.

Every target is in every denominator: a target without outputs, or whose scoring failed, is a
miss, never a gap. Top-k is cumulative (a hit at rank r counts for every k > r); MRR uses
1/(rank+1) and 0 for a miss; the full curve for k = 1..num_top_results is kept next to the
chosen k values. Every rate is the one shape of :mod:`chemgauge.eval.metrics` (a top-k rate
carries its ``k``), and the block names the conventions, matchers and k values it holds, so
no reader parses a metric's name (the typed model is
:class:`~chemgauge.families.retro.metrics_model.RetroMetrics`).

:class:`RetroTally` folds rows in as they stream past and keeps only counts and two compact
arrays of per-target output counts (for their percentiles), so a run of any size aggregates
in memory that does not grow with its rows; :func:`aggregate` is the same over a row list.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any

from chemgauge.eval.metrics import estimate, rate
from chemgauge.eval.ranking import distribution_of_sorted

__all__ = ["RankTally", "RetroTally", "aggregate", "top_k_block"]


class RankTally:
    """Best ranks of targets (``None`` for a miss) as a rank histogram.

    ``sequential_reciprocal`` is the sum of reciprocal ranks added left to right in the order
    the targets came, the arithmetic of syntheseus's MRR, so the syntheseus-shaped results
    file carries syntheseus's float to the last bit (the report's MRR sums exactly).
    """

    __slots__ = ("misses", "n", "ranks", "sequential_reciprocal")

    def __init__(self) -> None:
        self.n = 0
        self.misses = 0
        self.ranks: Counter[int] = Counter()
        self.sequential_reciprocal = 0.0

    def add(self, rank: int | None) -> None:
        self.n += 1
        if rank is None:
            self.misses += 1
        else:
            self.ranks[rank] += 1
            self.sequential_reciprocal += 1.0 / (rank + 1)

    def cumulative(self, max_k: int) -> list[int]:
        """Targets hit within the first k outputs, for k = 0..max_k."""
        hits_at = [0] * (max_k + 1)
        for rank, count in self.ranks.items():
            if rank < max_k:
                hits_at[rank + 1] += count
        cumulative = [0] * (max_k + 1)
        for k in range(1, max_k + 1):
            cumulative[k] = cumulative[k - 1] + hits_at[k]
        return cumulative

    def block(self, ks: Sequence[int], max_k: int) -> dict[str, Any]:
        """Top-k rates (Wilson intervals) for ``ks``, the full curve, and MRR."""
        n = self.n
        cumulative = self.cumulative(max_k)
        # fsum is exact, so summing each reciprocal once per hit equals summing per target
        reciprocals = (x for r in sorted(self.ranks) for x in repeat(1.0 / (r + 1), self.ranks[r]))
        return {
            "n": n,
            "top_k": [rate(cumulative[k], n, k=k) for k in ks],
            "curve": [cumulative[k] / n if n else None for k in range(1, max_k + 1)],
            "mrr": estimate(math.fsum(reciprocals) / n if n else None, n),
            "misses": self.misses,
        }


def top_k_block(ranks: Iterable[int | None], ks: Sequence[int], max_k: int) -> dict[str, Any]:
    """Top-k counts, rates and Wilson intervals for ``ks``, the full curve, and MRR."""
    tally = RankTally()
    for rank in ranks:
        tally.add(rank)
    return tally.block(ks, max_k)


class _PerRank:
    """Outputs present and flagged (invalid or duplicate) at each raw rank below ``max_k``."""

    def __init__(self, max_k: int) -> None:
        self.max_k = max_k
        self.lengths = [0] * (max_k + 1)  # targets by min(n_outputs, max_k)
        self.flagged = [0] * max_k

    def add(self, n_outputs: int, ranks: Iterable[int]) -> None:
        self.lengths[min(n_outputs, self.max_k)] += 1
        for r in ranks:
            if r < self.max_k:
                self.flagged[r] += 1

    def result(self) -> list[dict[str, Any]]:
        """Per 1-based rank with an output there: the flagged share of those outputs."""
        present = [0] * self.max_k
        running = 0
        for r in range(self.max_k - 1, -1, -1):
            running += self.lengths[r + 1]
            present[r] = running
        return [
            {"rank": r + 1, "share": rate(self.flagged[r], present[r])}
            for r in range(self.max_k)
            if present[r]
        ]


class RetroTally:
    """Every headline number of a retro run, folded in one row at a time (see module doc)."""

    def __init__(
        self,
        *,
        conventions: Sequence[str],
        matchers: Sequence[str],
        ks: Sequence[int],
        max_k: int,
        round_trip_max_rank: int | None = None,
    ) -> None:
        self.conventions = tuple(conventions)
        self.matchers = tuple(matchers)
        self.ks = tuple(ks)
        self.max_k = max_k
        self.round_trip_max_rank = round_trip_max_rank
        self.n = 0
        self.status: Counter[str] = Counter()
        self.accuracy = self._rank_tallies()
        self.by_class: dict[str | None, dict[tuple[str, str], RankTally]] = {}
        self.total_outputs = self.invalid = self.duplicates = self.self_loops = self.cut = 0
        self.invalid_reasons: Counter[str] = Counter()
        self.raw_counts = array("d")
        self.valid_unique_counts = array("d")
        self.valid_counts = array("d")  # valid outputs, repeats included
        self.invalid_by_rank = _PerRank(max_k)
        self.duplicate_by_rank = _PerRank(max_k)
        self.unsupported_outputs = dict.fromkeys(self.matchers, 0)
        self.truth_unsupported = dict.fromkeys(self.matchers, 0)
        self.rt_firsts: Counter[int] = Counter()
        self.rt_checked = self.rt_ok = self.rt_no_candidates = 0
        self.rt_sequential_reciprocal = 0.0

    def _rank_tallies(self) -> dict[tuple[str, str], RankTally]:
        return {(c, m): RankTally() for c in self.conventions for m in self.matchers}

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row in."""
        self.n += 1
        self.status[str(row["status"])] += 1
        hits = row.get("hits")
        cls = row.get("reaction_class")
        per_class = self.by_class.get(cls)
        if per_class is None:
            per_class = self.by_class[cls] = self._rank_tallies()
        for pair, tally in self.accuracy.items():
            rank = hits[pair[0]][pair[1]] if hits else None
            tally.add(rank)
            per_class[pair].add(rank)
        self.raw_counts.append(row["n_outputs"])
        self.valid_unique_counts.append(row["n_valid_unique"])
        self.valid_counts.append(row["n_outputs"] - len(row["invalid_ranks"]) if hits else 0)
        if hits:
            self.total_outputs += row["n_outputs"]
            self.invalid += len(row["invalid_ranks"])
            self.invalid_reasons.update(row["invalid_reasons"])
            self.duplicates += len(row["duplicate_ranks"])
            self.self_loops += len(row["product_in_reactants_ranks"])
            self.cut += max(0, row["n_returned"] - row["n_outputs"])
            self.invalid_by_rank.add(row["n_outputs"], row["invalid_ranks"])
            self.duplicate_by_rank.add(row["n_outputs"], row["duplicate_ranks"])
            for m in self.matchers:
                self.unsupported_outputs[m] += len(row["unsupported"][m])
                self.truth_unsupported[m] += m in row["truth_unsupported"]
        if "round_trip" in row:
            trip = row["round_trip"]
            self.rt_checked += trip["checked"]
            self.rt_ok += trip["round_trips"]
            self.rt_no_candidates += trip["no_candidates"]
            if trip["first_rank"] is not None:
                self.rt_firsts[trip["first_rank"]] += 1
                self.rt_sequential_reciprocal += 1.0 / (trip["first_rank"] + 1)

    def _blocks(self, tallies: Mapping[tuple[str, str], RankTally]) -> dict[str, dict[str, Any]]:
        return {
            c: {m: tallies[(c, m)].block(self.ks, self.max_k) for m in self.matchers}
            for c in self.conventions
        }

    def result(self) -> dict[str, Any]:
        """The aggregate part of the report's metrics block (what ``verify`` recomputes)."""
        total = self.total_outputs
        result: dict[str, Any] = {
            "conventions": list(self.conventions),
            "matchers": list(self.matchers),
            "k": list(self.ks),
            "num_top_results": self.max_k,
            "targets": self.n,
            "status": dict(sorted(self.status.items())),
            "accuracy": self._blocks(self.accuracy),
            "outputs": {
                "total": total,
                "invalid_rate": rate(self.invalid, total),
                "invalid_by_reason": dict(sorted(self.invalid_reasons.items())),
                "duplicate_rate": rate(self.duplicates, total),
                # an output listing the product among its own reactants (counted, still ranked)
                "product_in_reactants_rate": rate(self.self_loops, total),
                "cut_at_num_top_results": self.cut,
                "per_target_raw": distribution_of_sorted(sorted(self.raw_counts)).to_dict(),
                "per_target_valid_unique": distribution_of_sorted(
                    sorted(self.valid_unique_counts)
                ).to_dict(),
                "invalid_by_rank": self.invalid_by_rank.result(),
                "duplicate_by_rank": self.duplicate_by_rank.result(),
            },
            "unsupported": [
                {
                    "matcher": m,
                    "outputs": self.unsupported_outputs[m],
                    "targets_truth_unsupported": self.truth_unsupported[m],
                }
                for m in self.matchers
            ],
        }
        classes = sorted((c for c in self.by_class if c is not None), key=lambda c: (len(c), c))
        if classes:
            by_class: dict[str, Any] = {c: self._blocks(self.by_class[c]) for c in classes}
            if None in self.by_class:
                by_class["(none)"] = self._blocks(self.by_class[None])
            result["by_class"] = by_class
        if self.round_trip_max_rank is not None:
            result["round_trip"] = self._round_trip_block()
        return result

    def _round_trip_block(self) -> dict[str, Any]:
        from chemgauge.families.retro.roundtrip import ROUND_TRIP_DEFINITION

        max_rank = self.round_trip_max_rank
        assert max_rank is not None
        coverage = [
            rate(sum(c for first, c in self.rt_firsts.items() if first < k), self.n, k=k)
            for k in self.ks
            if k <= max_rank
        ]
        return {
            "definition": ROUND_TRIP_DEFINITION,
            "max_rank_checked": max_rank,
            "round_trip_coverage": coverage,
            # count: proposals round-tripping, n: proposals checked
            "round_trip_proposal_rate": rate(self.rt_ok, self.rt_checked),
            "proposals_without_forward_candidates": self.rt_no_candidates,
        }


def aggregate(
    rows: Iterable[Mapping[str, Any]],
    *,
    conventions: Sequence[str],
    matchers: Sequence[str],
    ks: Sequence[int],
    max_k: int,
    round_trip_max_rank: int | None = None,
) -> dict[str, Any]:
    """Every headline number of a retro run, derived from rows only."""
    tally = RetroTally(
        conventions=conventions,
        matchers=matchers,
        ks=ks,
        max_k=max_k,
        round_trip_max_rank=round_trip_max_rank,
    )
    for row in rows:
        tally.add(row)
    return tally.result()
