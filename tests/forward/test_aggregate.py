"""Aggregates on hand-checked rows: denominators, conditional vs end-to-end, buckets."""

from __future__ import annotations

import math

import pytest

from chemgauge.benchmarks.forward.aggregate import (
    Bootstrap,
    aggregate,
    arity_bucket,
    breakdowns,
    by_split,
    held_out,
    pool_size_bucket,
)
from chemgauge.benchmarks.forward.corpus import InvalidRecord
from chemgauge.benchmarks.forward.rows import invalid_row, scored_row

from .test_rows import FILLER, reaction, report


def _rows() -> list[dict]:
    rows = [
        scored_row(reaction([["CC=O"]]), report(["CC=O"]), 2.0),  # rank 0
        scored_row(reaction([["CC=O"]]), report([*FILLER[:3], "CC=O"]), 4.0),  # rank 3
        scored_row(reaction([["CC=O"]]), report(["CCCO"]), 6.0),  # miss
        scored_row(reaction([["CC=O"]]), report([]), 8.0),  # miss, empty
        invalid_row(InvalidRecord(9, "bad", "unparseable_smiles", "x")),
    ]
    for row in rows:
        row["provenance"] = {"template_source": "embedded"}
    return rows


def test_denominators_and_conditional_versus_end_to_end() -> None:
    agg = aggregate(_rows())
    assert agg["valid_input_rate"]["value"] == pytest.approx(4 / 5)
    assert agg["proposal_coverage"]["value"] == pytest.approx(2 / 4)
    cond, e2e = agg["conditional"], agg["end_to_end"]
    assert (cond["n"], e2e["n"]) == (2, 4)
    assert cond["top1_hit_rate"]["value"] == pytest.approx(1 / 2)
    assert e2e["top1_hit_rate"]["value"] == pytest.approx(1 / 4)
    assert cond["top5_hit_rate"]["value"] == 1.0 and e2e["top5_hit_rate"]["value"] == 0.5
    assert cond["mrr"] == pytest.approx((1 + 1 / 4) / 2)
    assert e2e["mrr"] == pytest.approx((1 + 1 / 4) / 4)
    assert cond["ndcg_at_10"] == pytest.approx((1 + 1 / math.log2(5)) / 2)
    assert e2e["ndcg_at_10"] == pytest.approx((1 + 1 / math.log2(5)) / 4)
    assert cond["mean_best_correct_rank"] == 1.5 and cond["median_best_correct_rank"] == 0
    assert "mean_best_correct_rank" not in e2e


def test_outcome_rates_and_distributions() -> None:
    agg = aggregate(_rows())
    pools = [1, 4, 1, 0]
    assert agg["n_raw_outcomes"] == sum(p + 4 for p in pools)
    assert agg["invalid_outcomes_rejected"] == 12 and agg["no_op_outcomes_rejected"] == 4
    assert agg["invalid_product_rate"] == pytest.approx(12 / 22)
    assert agg["no_op_rate"] == pytest.approx(4 / 22)
    assert agg["candidate_count_distribution"]["max"] == 4
    assert agg["candidate_count_distribution"]["p50"] == 1
    assert agg["latency_ms"]["mean"] == 5.0


def test_every_rate_has_a_wilson_interval() -> None:
    block = aggregate(_rows())["proposal_coverage"]
    low, high = block["wilson95"]
    assert (block["numerator"], block["denominator"]) == (2, 4)
    assert low < 0.5 < high


def test_empty_groups_report_none_never_zero() -> None:
    agg = aggregate([])
    assert agg["proposal_coverage"]["value"] is None
    assert agg["conditional"]["mrr"] is None and agg["invalid_product_rate"] is None


def test_invalid_rows_are_in_no_split() -> None:
    splits = by_split(_rows())
    assert splits["test"]["n_rows"] == 4 and splits["train"]["n_rows"] == 0
    assert sum(s["n_rows"] for s in splits.values()) == 4


def test_arity_buckets_including_mixed() -> None:
    def row(accepted: list[list[str]]) -> dict:
        return scored_row(reaction(accepted), report([]), 1.0)

    assert arity_bucket(row([["C"]])) == "1"
    assert arity_bucket(row([["C", "O"]])) == "2"
    assert arity_bucket(row([["C", "O", "N"], ["C", "O", "N", "S"]])) == "mixed:3+-3+"
    assert arity_bucket(row([["C", "O", "N", "S"]])) == "3+"
    assert arity_bucket(row([["C"], ["C", "O"]])) == "mixed:1-2"
    assert arity_bucket(row([["C"], ["C", "O", "N", "S"]])) == "mixed:1-3+"
    assert arity_bucket(invalid_row(InvalidRecord(1, "x", "malformed", ""))) == "<missing>"


def test_pool_size_buckets_and_breakdown_dimensions() -> None:
    rows = _rows()
    assert [pool_size_bucket(r) for r in rows] == ["1", "2-5", "1", "0", "<missing>"]
    out = breakdowns(rows)
    assert set(out) == {
        "reaction_class",
        "num_reactants",
        "accepted_product_arity",
        "stereochemistry_presence",
        "template_source",
        "candidate_pool_size",
        "failure_reason",
        "input_status",
        "proposal_status",
        "ranking_status",
        "stereo_status",
    }
    assert out["failure_reason"]["input_invalid"]["n_rows"] == 1
    assert out["template_source"]["embedded"]["n_rows"] == 5
    assert out["proposal_status"]["covered"]["conditional"]["n"] == 2


def test_mrr_and_ndcg_carry_seeded_bootstrap_intervals() -> None:
    rows = _rows()
    first, again = aggregate(rows), aggregate(rows, Bootstrap(seed=0))
    assert first == again
    for name in ("end_to_end", "conditional"):
        block = first[name]
        for metric in ("mrr", "ndcg_at_10"):
            low, high = block[f"{metric}_bootstrap95"]
            assert low <= block[metric] <= high
    # Reciprocal ranks 1, 1/4, 0, 0: a resample of four zeros has probability (1/2)**4 =
    # 6.25% > 2.5%, so the low end is 0; four ones has 1/256 < 2.5%, so the high end is < 1.
    low, high = first["end_to_end"]["mrr_bootstrap95"]
    assert low == 0.0 and (1 + 1 / 4) / 4 < high < 1.0
    other = aggregate(rows, Bootstrap(seed=1, resamples=500))
    assert other["end_to_end"]["mrr"] == first["end_to_end"]["mrr"]
    assert other["end_to_end"]["mrr_bootstrap95"] != first["end_to_end"]["mrr_bootstrap95"]


def test_an_interval_of_identical_values_is_a_point_and_empty_is_none() -> None:
    top = [scored_row(reaction([["CC=O"]]), report(["CC=O"]), 1.0) for _ in range(5)]
    e2e = aggregate(top)["end_to_end"]
    assert e2e["mrr_bootstrap95"] == [1.0, 1.0] and e2e["ndcg_at_10_bootstrap95"] == [1.0, 1.0]
    empty = by_split(top)["train"]["end_to_end"]
    assert empty["mrr"] is None and empty["mrr_bootstrap95"] == [None, None]


def test_held_out_is_val_and_test_together() -> None:
    rows = _rows()
    for row, split in zip(rows, ("train", "val", "test", "train", "unknown"), strict=True):
        row["split"] = split
    both = held_out(rows)
    assert both["n_rows"] == 2 and both["n_covered"] == 1
    assert both == aggregate([r for r in rows if r["split"] in ("val", "test")])
