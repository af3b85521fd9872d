"""Aggregates: pure functions of rows, overall, per split and per breakdown bucket.

Denominators are named and never mixed: ``valid_input_rate`` over all rows,
``proposal_coverage`` and every ``end_to_end`` metric over valid rows (a coverage miss
counts 0, never excluded), every ``conditional`` metric over covered rows only. Each rate
carries its numerator, denominator and a 95% Wilson interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from chemgauge.eval.ranking import distribution, reciprocal_rank
from chemgauge.eval.stats import wilson_interval

__all__ = [
    "BREAKDOWN_DIMENSIONS",
    "aggregate",
    "arity_bucket",
    "breakdowns",
    "by_split",
    "pool_size_bucket",
    "rate",
]

Row = Mapping[str, Any]
MISSING = "<missing>"
SPLITS = ("train", "val", "test")


def rate(successes: int, n: int) -> dict[str, Any]:
    """``{value, numerator, denominator, wilson95: [low, high]}``; ``None`` values when n == 0."""
    interval = wilson_interval(successes, n)
    return {
        "value": interval.estimate,
        "numerator": successes,
        "denominator": n,
        "wilson95": [interval.low, interval.high],
    }


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _ranking_block(rows: Sequence[Row], *, conditional: bool) -> dict[str, Any]:
    n = len(rows)
    best = [r["best_correct_rank"] for r in rows]
    block: dict[str, Any] = {"n": n}
    for k in (1, 5, 10):
        block[f"top{k}_hit_rate"] = rate(sum(b is not None and b < k for b in best), n)
    block["mrr"] = _mean([reciprocal_rank(b) for b in best])
    block["ndcg_at_10"] = _mean([float(r["ndcg_at_10"]) for r in rows])
    if conditional:
        ranks = [float(b) for b in best if b is not None]
        spread = distribution(ranks)
        block["mean_best_correct_rank"] = spread.mean
        block["median_best_correct_rank"] = spread.p50
    return block


def aggregate(rows: Sequence[Row]) -> dict[str, Any]:
    """Every metric of the protocol over one group of rows."""
    valid = [r for r in rows if r["input_status"] == "valid"]
    covered = [r for r in valid if r["proposal_status"] == "covered"]
    pooled = [r for r in valid if r["proposal_status"] != "error"]
    n_raw = sum(r["raw_outcomes"] for r in valid)
    invalid = sum(r["invalid_candidate_count"] for r in valid)
    no_op = sum(r["no_op_candidate_count"] for r in valid)
    stereo_hit = sum(r["stereochemistry_ignored_outcome"] == "hit" for r in valid)
    timed = [float(r["elapsed_ms"]) for r in valid if r["elapsed_ms"] is not None]
    return {
        "n_rows": len(rows),
        "n_valid": len(valid),
        "n_covered": len(covered),
        "valid_input_rate": rate(len(valid), len(rows)),
        "proposal_coverage": rate(len(covered), len(valid)),
        "conditional": _ranking_block(covered, conditional=True),
        "end_to_end": _ranking_block(valid, conditional=False),
        "stereo": {
            "stereochemistry_aware_top10_rate": rate(
                sum(r["stereochemistry_aware_hit"] for r in valid), len(valid)
            ),
            "stereochemistry_ignored_top10_rate": rate(stereo_hit, len(valid)),
            "stereo_only_hits": sum(r["stereo_status"] == "stereo_only_hit" for r in valid),
            "unsupported": sum(r["stereo_status"] == "unsupported" for r in valid),
        },
        "n_raw_outcomes": n_raw,
        "invalid_outcomes_rejected": invalid,
        "no_op_outcomes_rejected": no_op,
        "invalid_product_rate": invalid / n_raw if n_raw else None,
        "no_op_rate": no_op / n_raw if n_raw else None,
        "prediction_errors": sum(r["proposal_status"] == "error" for r in valid),
        "capped_unknown": sum(r["proposal_status"] == "capped_unknown" for r in valid),
        "candidate_count_distribution": distribution(
            r["candidate_count"] for r in pooled
        ).to_dict(),
        "latency_ms": distribution(timed).to_dict(),
    }


def arity_bucket(row: Row) -> str:
    """``1``/``2``/``3+``, ``mixed:{min}-{max}`` (each end bucketed), or ``<missing>``."""
    low, high = row["accepted_product_count_min"], row["accepted_product_count_max"]
    if low is None or high is None:
        return MISSING

    def one(n: int) -> str:
        return "3+" if n >= 3 else str(n)

    if low == high:
        return one(low)
    return f"mixed:{one(low)}-{one(high)}"


def pool_size_bucket(row: Row) -> str:
    """Candidate pool size as ``0``, ``1``, ``2-5``, ``6-10``, ``11-50``, ``51+`` (``<missing>``
    when no pool was produced)."""
    if row["input_status"] != "valid" or row["proposal_status"] == "error":
        return MISSING
    n = int(row["candidate_count"])
    for high, label in ((0, "0"), (1, "1"), (5, "2-5"), (10, "6-10"), (50, "11-50")):
        if n <= high:
            return label
    return "51+"


def _num_reactants(row: Row) -> str:
    n = row["num_reactants"]
    return MISSING if n is None else ("4+" if n >= 4 else str(n))


def _stereo_presence(row: Row) -> str:
    flag = row["has_stereochemistry"]
    return MISSING if flag is None else ("stereo" if flag else "no_stereo")


def _field(name: str) -> Callable[[Row], str]:
    def bucket(row: Row) -> str:
        value = row.get(name)
        return MISSING if value is None else str(value)

    return bucket


BREAKDOWN_DIMENSIONS: dict[str, Callable[[Row], str]] = {
    "reaction_class": _field("reaction_class"),
    "num_reactants": _num_reactants,
    "accepted_product_arity": arity_bucket,
    "stereochemistry_presence": _stereo_presence,
    "template_source": lambda row: str(row["provenance"]["template_source"]),
    "candidate_pool_size": pool_size_bucket,
    "failure_reason": _field("failure_reason"),
    "input_status": _field("input_status"),
    "proposal_status": _field("proposal_status"),
    "ranking_status": _field("ranking_status"),
    "stereo_status": _field("stereo_status"),
}


def _group(rows: Iterable[Row], key: Callable[[Row], str]) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def by_split(rows: Sequence[Row]) -> dict[str, Any]:
    """One aggregate per split; ``unknown`` (invalid) rows are in none of them."""
    groups = _group(rows, lambda r: str(r["split"]))
    return {split: aggregate(groups.get(split, [])) for split in SPLITS}


def breakdowns(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """One aggregate per bucket of every breakdown dimension (buckets sorted by name)."""
    out: dict[str, dict[str, Any]] = {}
    for name, key in BREAKDOWN_DIMENSIONS.items():
        groups = _group(rows, key)
        out[name] = {bucket: aggregate(groups[bucket]) for bucket in sorted(groups)}
    return out
