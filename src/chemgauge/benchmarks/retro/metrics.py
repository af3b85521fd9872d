"""Aggregates of retro rows: pure functions of the rows, with intervals and a class breakdown.

Every target is in every denominator: a target without outputs, or whose scoring failed, is a
miss, never a gap. Top-k is cumulative (a hit at rank r counts for every k > r); MRR uses
1/(rank+1) and 0 for a miss; the full curve for k = 1..num_top_results is kept next to the
chosen k values.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from chemgauge.eval.ranking import distribution
from chemgauge.eval.stats import wilson_interval

__all__ = ["aggregate", "top_k_block"]


def _rate(count: int, n: int) -> float | None:
    return count / n if n else None


def top_k_block(ranks: Sequence[int | None], ks: Sequence[int], max_k: int) -> dict[str, Any]:
    """Top-k counts, rates and Wilson intervals for ``ks``, the full curve, and MRR."""
    n = len(ranks)
    hits_at = [0] * (max_k + 1)
    for rank in ranks:
        if rank is not None and rank < max_k:
            hits_at[rank + 1] += 1
    cumulative = [0] * (max_k + 1)
    for k in range(1, max_k + 1):
        cumulative[k] = cumulative[k - 1] + hits_at[k]
    top_k = {}
    for k in ks:
        interval = wilson_interval(cumulative[k], n)
        top_k[str(k)] = {
            "hits": cumulative[k],
            "rate": interval.estimate,
            "low": interval.low,
            "high": interval.high,
        }
    return {
        "n": n,
        "top_k": top_k,
        "curve": [_rate(cumulative[k], n) for k in range(1, max_k + 1)],
        "mrr": math.fsum(1.0 / (r + 1) for r in ranks if r is not None) / n if n else None,
        "misses": sum(1 for r in ranks if r is None),
    }


def _per_rank(rows: Sequence[Mapping[str, Any]], field: str, max_k: int) -> list[dict[str, Any]]:
    present = [0] * max_k
    flagged = [0] * max_k
    for row in rows:
        for r in range(min(row["n_outputs"], max_k)):
            present[r] += 1
        for r in row[field]:
            if r < max_k:
                flagged[r] += 1
    return [
        {
            "rank": r + 1,
            "outputs": present[r],
            "count": flagged[r],
            "rate": _rate(flagged[r], present[r]),
        }
        for r in range(max_k)
        if present[r]
    ]


def _blocks(
    rows: Sequence[Mapping[str, Any]],
    conventions: Sequence[str],
    matchers: Sequence[str],
    ks: Sequence[int],
    max_k: int,
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for convention in conventions:
        out[convention] = {}
        for matcher in matchers:
            ranks = [row["hits"][convention][matcher] if row.get("hits") else None for row in rows]
            out[convention][matcher] = top_k_block(ranks, ks, max_k)
    return out


def aggregate(
    rows: Sequence[Mapping[str, Any]],
    *,
    conventions: Sequence[str],
    matchers: Sequence[str],
    ks: Sequence[int],
    max_k: int,
    round_trip_max_rank: int | None = None,
) -> dict[str, Any]:
    """Every headline number of a retro run, derived from rows only."""
    n = len(rows)
    status = Counter(str(row["status"]) for row in rows)
    scored = [row for row in rows if row.get("hits")]
    total_outputs = sum(row["n_outputs"] for row in scored)
    invalid = sum(len(row["invalid_ranks"]) for row in scored)
    duplicates = sum(len(row["duplicate_ranks"]) for row in scored)
    self_loops = sum(len(row.get("product_in_reactants_ranks", ())) for row in scored)
    result: dict[str, Any] = {
        "targets": n,
        "status": dict(sorted(status.items())),
        "accuracy": _blocks(rows, conventions, matchers, ks, max_k),
        "outputs": {
            "total": total_outputs,
            "invalid": invalid,
            "invalid_rate": _rate(invalid, total_outputs),
            "duplicates": duplicates,
            "duplicate_rate": _rate(duplicates, total_outputs),
            # an output listing the product among its own reactants (counted, still ranked)
            "product_in_reactants": self_loops,
            "product_in_reactants_rate": _rate(self_loops, total_outputs),
            "cut_at_num_top_results": sum(
                max(0, row["n_returned"] - row["n_outputs"]) for row in scored
            ),
            "per_target_raw": distribution(row["n_outputs"] for row in rows).to_dict(),
            "per_target_valid_unique": distribution(
                row.get("n_valid_unique", 0) for row in rows
            ).to_dict(),
            "invalid_by_rank": _per_rank(scored, "invalid_ranks", max_k),
            "duplicate_by_rank": _per_rank(scored, "duplicate_ranks", max_k),
        },
        "unsupported": {
            m: {
                "outputs": sum(len(row["unsupported"][m]) for row in scored),
                "targets_truth_unsupported": sum(
                    1 for row in scored if m in row["truth_unsupported"]
                ),
            }
            for m in matchers
        },
    }
    classes = sorted(
        {row["reaction_class"] for row in rows if row.get("reaction_class") is not None},
        key=lambda c: (len(c), c),
    )
    if classes:
        by_class: dict[str, Any] = {}
        for cls in classes:
            members = [row for row in rows if row.get("reaction_class") == cls]
            by_class[cls] = _blocks(members, conventions, matchers, ks, max_k)
        unclassed = [row for row in rows if row.get("reaction_class") is None]
        if unclassed:
            by_class["(none)"] = _blocks(unclassed, conventions, matchers, ks, max_k)
        result["by_class"] = by_class
    if round_trip_max_rank is not None:
        result["round_trip"] = _round_trip_block(rows, ks, round_trip_max_rank)
    return result


def _round_trip_block(
    rows: Sequence[Mapping[str, Any]], ks: Sequence[int], max_rank: int
) -> dict[str, Any]:
    from chemgauge.benchmarks.retro.roundtrip import ROUND_TRIP_DEFINITION

    firsts = [row["round_trip"]["first_rank"] if "round_trip" in row else None for row in rows]
    checked = sum(row["round_trip"]["checked"] for row in rows if "round_trip" in row)
    ok = sum(row["round_trip"]["round_trips"] for row in rows if "round_trip" in row)
    no_cand = sum(row["round_trip"]["no_candidates"] for row in rows if "round_trip" in row)
    coverage: dict[str, Any] = {}
    for k in [k for k in ks if k <= max_rank]:
        hits = sum(1 for f in firsts if f is not None and f < k)
        interval = wilson_interval(hits, len(rows))
        coverage[str(k)] = {
            "hits": hits,
            "rate": interval.estimate,
            "low": interval.low,
            "high": interval.high,
        }
    return {
        "definition": ROUND_TRIP_DEFINITION,
        "max_rank_checked": max_rank,
        "round_trip_coverage": coverage,
        "proposals_checked": checked,
        "proposals_round_tripping": ok,
        "round_trip_proposal_rate": _rate(ok, checked),
        "proposals_without_forward_candidates": no_cand,
    }
