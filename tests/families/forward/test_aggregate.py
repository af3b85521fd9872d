"""Aggregates on hand-checked rows: denominators, conditional vs end-to-end, buckets."""

from __future__ import annotations

import math

import pytest

from chemgauge.eval.metrics import estimate, rate
from chemgauge.eval.stats import bootstrap_mean_interval
from chemgauge.families.forward.aggregate import (
    Bootstrap,
    RowFacts,
    _Codes,
    aggregate,
    arity_bucket,
    breakdowns,
    by_split,
    held_out,
    pool_size_bucket,
)
from chemgauge.families.forward.corpus import InvalidRecord
from chemgauge.families.forward.metrics_model import Aggregate
from chemgauge.families.forward.rows import error_row, invalid_row, scored_row

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
    assert cond["mrr"]["value"] == pytest.approx((1 + 1 / 4) / 2)
    assert e2e["mrr"]["value"] == pytest.approx((1 + 1 / 4) / 4)
    assert cond["ndcg_at_10"]["value"] == pytest.approx((1 + 1 / math.log2(5)) / 2)
    assert e2e["ndcg_at_10"]["value"] == pytest.approx((1 + 1 / math.log2(5)) / 4)
    assert (cond["mrr"]["n"], e2e["ndcg_at_10"]["n"]) == (2, 4)
    assert cond["mean_best_correct_rank"] == 1.5 and cond["median_best_correct_rank"] == 0
    assert "mean_best_correct_rank" not in e2e


def test_outcome_rates_and_distributions() -> None:
    agg = aggregate(_rows())
    pools = [1, 4, 1, 0]
    assert agg["n_raw_outcomes"] == sum(p + 4 for p in pools)
    assert agg["invalid_outcomes_rejected"] == 12 and agg["no_op_outcomes_rejected"] == 4
    assert agg["invalid_product_rate"] == rate(12, 22)
    assert agg["no_op_rate"] == rate(4, 22)
    assert agg["no_op_rate"]["value"] == pytest.approx(4 / 22)
    assert agg["candidate_count_distribution"]["max"] == 4
    assert agg["candidate_count_distribution"]["p50"] == 1
    assert agg["latency_ms"]["mean"] == 5.0


def test_every_rate_has_a_wilson_interval() -> None:
    block = aggregate(_rows())["proposal_coverage"]
    low, high = block["interval"]
    assert (block["count"], block["n"], block["method"]) == (2, 4, "wilson95")
    assert low < 0.5 < high


def test_every_block_is_the_published_aggregate_shape() -> None:
    """Each group's block validates as the metrics model's Aggregate: rates are Rate or
    RateAtK (top-k ones carry their k), MRR and nDCG@10 Estimates."""
    rows = _rows()
    blocks = [aggregate(rows), aggregate([]), *by_split(rows).values()]
    for block in blocks:
        Aggregate.model_validate(block)
    e2e = blocks[0]["end_to_end"]
    assert [e2e[f"top{k}_hit_rate"]["k"] for k in (1, 5, 10)] == [1, 5, 10]
    assert blocks[0]["stereo"]["stereochemistry_ignored_top10_rate"]["k"] == 10
    assert "k" not in blocks[0]["proposal_coverage"]


def test_empty_groups_report_none_never_zero() -> None:
    agg = aggregate([])
    assert agg["proposal_coverage"]["value"] is None
    assert agg["conditional"]["mrr"] == estimate(None, 0, None, method="bootstrap95")
    assert agg["invalid_product_rate"]["value"] is None


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
            low, high = block[metric]["interval"]
            assert low <= block[metric]["value"] <= high
            assert block[metric]["method"] == "bootstrap95"
    # Reciprocal ranks 1, 1/4, 0, 0: a resample of four zeros has probability (1/2)**4 =
    # 6.25% > 2.5%, so the low end is 0; four ones has 1/256 < 2.5%, so the high end is < 1.
    low, high = first["end_to_end"]["mrr"]["interval"]
    assert low == 0.0 and (1 + 1 / 4) / 4 < high < 1.0
    other = aggregate(rows, Bootstrap(seed=1, resamples=500))["end_to_end"]["mrr"]
    assert other["value"] == first["end_to_end"]["mrr"]["value"]
    assert other["interval"] != first["end_to_end"]["mrr"]["interval"]


def test_an_interval_of_identical_values_is_a_point_and_empty_is_none() -> None:
    top = [scored_row(reaction([["CC=O"]]), report(["CC=O"]), 1.0) for _ in range(5)]
    e2e = aggregate(top)["end_to_end"]
    assert e2e["mrr"]["interval"] == e2e["ndcg_at_10"]["interval"] == [1.0, 1.0]
    empty = by_split(top)["train"]["end_to_end"]
    assert empty["mrr"] == estimate(None, 0, None, method="bootstrap95")
    assert empty["mrr"]["interval"] == [None, None]


def test_held_out_is_val_and_test_together() -> None:
    rows = _rows()
    for row, split in zip(rows, ("train", "val", "test", "train", "unknown"), strict=True):
        row["split"] = split
    both = held_out(rows)
    assert both["n_rows"] == 2 and both["n_covered"] == 1
    assert both == aggregate([r for r in rows if r["split"] in ("val", "test")])


def _at_rank(rank: int) -> dict:
    """A row whose one accepted product sits at 0-based ``rank`` of the pool."""
    return scored_row(reaction([["CC=O"]]), report([*FILLER[:rank], "CC=O"]), 1.0)


def test_truth_at_rank_exactly_k_counts_for_top_k_and_mrr() -> None:
    # 1-based ranks 1, 2, 5, 6, 10, 11 (each k and k + 1 for k = 1, 5, 10) and one miss.
    rows = [_at_rank(r) for r in (0, 1, 4, 5, 9, 10)]
    rows.append(scored_row(reaction([["CC=O"]]), report(["CCCO"]), 1.0))
    agg = aggregate(rows)
    assert (agg["n_rows"], agg["n_valid"], agg["n_covered"]) == (7, 7, 6)
    cond, e2e = agg["conditional"], agg["end_to_end"]
    # top-1: rank 1 only; top-5: ranks 1, 2, 5; top-10: ranks 1, 2, 5, 6, 10.
    for block, n in ((cond, 6), (e2e, 7)):
        assert block["n"] == n
        for k, hits in ((1, 1), (5, 3), (10, 5)):
            assert block[f"top{k}_hit_rate"] == rate(hits, n, k=k), k
    reciprocal_sum = 1 + 1 / 2 + 1 / 5 + 1 / 6 + 1 / 10 + 1 / 11  # the miss adds 0
    assert cond["mrr"]["value"] == pytest.approx(reciprocal_sum / 6)
    assert e2e["mrr"]["value"] == pytest.approx(reciprocal_sum / 7)
    # 0-based best ranks 0, 1, 4, 5, 9, 10: mean 29/6; nearest-rank median is the 3rd, 4.
    assert cond["mean_best_correct_rank"] == pytest.approx(29 / 6)
    assert cond["median_best_correct_rank"] == 4


def test_stereo_counts_are_over_valid_rows() -> None:
    def refuse(smiles: str) -> str | None:
        return None

    alanine = [["C[C@H](N)C(=O)O"]]
    rows = [
        scored_row(reaction(alanine), report(["C[C@H](N)C(=O)O"]), 1.0),  # exact hit
        scored_row(reaction(alanine), report(["C[C@@H](N)C(=O)O"]), 1.0),  # stereo only
        scored_row(reaction(alanine), report(["C[C@@H](N)C(=O)O"]), 1.0, flatten=refuse),
        scored_row(reaction(alanine), report(["CCO"]), 1.0),  # no hit either way
        scored_row(reaction(alanine), report([]), 1.0),  # no pool, no hit
        invalid_row(InvalidRecord(9, "bad", "unparseable_smiles", "x")),
    ]
    assert [r["stereo_status"] for r in rows] == [
        "exact_hit",
        "stereo_only_hit",
        "unsupported",
        "no_hit",
        "no_hit",
        "not_applicable",
    ]
    stereo = aggregate(rows)["stereo"]
    # of five valid rows: one exact hit; two stereo-ignored hits (exact and stereo-only)
    assert stereo["stereochemistry_aware_top10_rate"] == rate(1, 5, k=10)
    assert stereo["stereochemistry_ignored_top10_rate"] == rate(2, 5, k=10)
    assert (stereo["stereo_only_hits"], stereo["unsupported"]) == (1, 1)


def test_prediction_errors_and_capped_pools_are_counted_over_valid_rows() -> None:
    rows = [
        scored_row(reaction([["CC=O"]]), report(["CC=O"]), 1.0),  # 1 + 4 raw outcomes
        error_row(reaction([["CC=O"]]), "boom", 1.0),  # no outcomes
        scored_row(reaction([["CC=O"]]), report(["CCCO", "CCO"], capped=True), 1.0),  # 2 + 4
        invalid_row(InvalidRecord(9, "bad", "unparseable_smiles", "x")),
    ]
    agg = aggregate(rows)
    assert (agg["n_rows"], agg["n_valid"]) == (4, 3)
    assert (agg["prediction_errors"], agg["capped_unknown"]) == (1, 1)
    assert agg["n_raw_outcomes"] == 5 + 6
    assert agg["invalid_outcomes_rejected"] == 3 + 3 and agg["no_op_outcomes_rejected"] == 2
    # the error row produced no pool: the pool sizes are those of the two others
    assert agg["candidate_count_distribution"]["min"] == 1
    assert agg["candidate_count_distribution"]["max"] == 2
    assert agg["end_to_end"]["ndcg_at_10"]["value"] == pytest.approx(1 / 3)  # error row: 0


def test_pool_size_buckets_at_their_edges() -> None:
    def bucket(n: int) -> str:
        return pool_size_bucket(
            {"input_status": "valid", "proposal_status": "covered", "candidate_count": n}
        )

    edges = {0: "0", 1: "1", 2: "2-5", 5: "2-5", 6: "6-10", 10: "6-10", 11: "11-50"}
    edges |= {50: "11-50", 51: "51+", 400: "51+"}
    assert {n: bucket(n) for n in edges} == edges
    assert pool_size_bucket(error_row(reaction([["CC=O"]]), "boom", 1.0)) == "<missing>"


def test_reactant_count_stereo_and_class_buckets() -> None:
    def row(reactants: tuple[str, ...], accepted: str = "CC=O", cls: str | None = None) -> dict:
        out = scored_row(reaction([[accepted]], reactants), report([]), 1.0)
        out["reaction_class"] = cls
        return out

    rows = [
        row(("CCO",), cls="amide_coupling"),
        row(("CCO", "CN")),
        row(("CCO", "CN", "O")),
        row(("CCO", "CN", "O", "N")),
        row(("CCO", "CN", "O", "N", "C"), accepted="C[C@H](N)C(=O)O"),
        invalid_row(InvalidRecord(9, "bad", "unparseable_smiles", "x")),
    ]
    for r in rows:
        r["provenance"] = {"template_source": "embedded"}
    out = breakdowns(rows)
    sizes = {label: block["n_rows"] for label, block in out["num_reactants"].items()}
    assert sizes == {"1": 1, "2": 1, "3": 1, "4+": 2, "<missing>": 1}
    stereo = {label: block["n_rows"] for label, block in out["stereochemistry_presence"].items()}
    assert stereo == {"no_stereo": 4, "stereo": 1, "<missing>": 1}
    classes = {label: block["n_rows"] for label, block in out["reaction_class"].items()}
    assert classes == {"amide_coupling": 1, "<missing>": 5}
    reasons = {label: block["n_rows"] for label, block in out["failure_reason"].items()}
    assert reasons == {"correct_absent_empty_pool": 5, "input_invalid": 1}


def test_half_an_arity_is_missing_not_a_bucket() -> None:
    assert (
        arity_bucket({"accepted_product_count_min": 1, "accepted_product_count_max": None})
        == "<missing>"
    )
    assert (
        arity_bucket({"accepted_product_count_min": None, "accepted_product_count_max": 2})
        == "<missing>"
    )


def test_mrr_interval_is_the_binomial_quantiles_at_the_configured_confidence() -> None:
    # Four top-1 hits and five misses: reciprocal ranks four 1s and five 0s. A resample's mean
    # is Binomial(9, 4/9) / 9 exactly, so the percentile interval is that distribution's
    # quantiles (scipy.stats.binom.ppf): [1, 7]/9 at 95%, [2, 6]/9 at 80%, [3, 5]/9 at 50%.
    # Each CDF step is over 4 Monte Carlo errors (2,000 resamples) from its cut, so every seed
    # lands on them.
    from scipy.stats import binom

    rows = [_at_rank(0) for _ in range(4)]
    rows += [scored_row(reaction([["CC=O"]]), report(["CCCO"]), 1.0) for _ in range(5)]
    for confidence, (low, high) in ((0.95, (1, 7)), (0.8, (2, 6)), (0.5, (3, 5))):
        alpha = (1 - confidence) / 2
        assert (binom.ppf(alpha, 9, 4 / 9), binom.ppf(1 - alpha, 9, 4 / 9)) == (low, high)
        for seed in range(3):
            e2e = aggregate(rows, Bootstrap(seed=seed, confidence=confidence))["end_to_end"]
            assert e2e["mrr"]["interval"] == [low / 9, high / 9], (confidence, seed)
            assert e2e["ndcg_at_10"]["interval"] == [low / 9, high / 9], (confidence, seed)
            assert e2e["mrr"]["method"] == f"bootstrap{round(confidence * 100)}"
    default = aggregate(rows)["end_to_end"]["mrr"]["interval"]
    assert default == [1 / 9, 7 / 9]


def test_bootstrap_records_its_settings_and_method() -> None:
    recorded = Bootstrap(seed=3, resamples=500, confidence=0.9).to_dict()
    assert recorded == {
        "seed": 3,
        "resamples": 500,
        "confidence": 0.9,
        "method": bootstrap_mean_interval([1.0, 0.0], seed=3).method,  # the method it runs
    }
    default = Bootstrap().to_dict()  # the documented defaults: seed 0, 2,000 resamples, 95%
    assert (default["seed"], default["resamples"], default["confidence"]) == (0, 2000, 0.95)


def test_a_streamed_table_gives_what_the_row_functions_give() -> None:
    rows = _rows()
    facts = RowFacts()  # what the runner folds rows into: breakdowns included by default
    for row in rows:
        facts.add(row)
    assert len(facts) == 5
    assert facts.aggregate() == aggregate(rows)
    assert facts.by_split() == by_split(rows)
    assert facts.held_out() == held_out(rows)
    assert facts.breakdowns() == breakdowns(rows)
    with pytest.raises(ValueError, match=r"^this table was built without breakdown dimensions$"):
        RowFacts(dimensions=False).breakdowns()


def test_every_group_function_uses_the_bootstrap_it_is_given() -> None:
    rows = _rows()  # four valid rows, all in the test split
    other = Bootstrap(seed=1, resamples=500)
    valid = aggregate(rows[:4], other)
    assert (
        valid["end_to_end"]["mrr"]["interval"]
        != aggregate(rows[:4])["end_to_end"]["mrr"]["interval"]
    )
    assert by_split(rows, other)["test"] == valid
    assert held_out(rows, other) == valid
    assert breakdowns(rows, other)["input_status"]["valid"] == valid


def test_group_functions_need_no_provenance() -> None:
    # Only breakdowns read the template source; the plain groups read the metric fields.
    rows = [_at_rank(0), _at_rank(3)]
    assert aggregate(rows)["n_covered"] == 2
    assert held_out(rows)["n_covered"] == 2  # both rows are in the test split
    assert by_split(rows)["test"]["n_covered"] == 2


def test_a_dimension_past_256_labels_moves_to_four_byte_codes() -> None:
    codes = _Codes()
    for i in range(256):
        codes.add(f"class-{i}")
    assert codes.codes.itemsize == 1  # one byte a row while the labels fit
    assert codes.view().tolist() == list(range(256))
    codes.add("class-256")
    codes.add("class-0")
    assert codes.codes.itemsize == 4
    assert codes.view().tolist() == [*range(257), 0]


def test_breakdowns_over_300_reaction_classes() -> None:
    rows = []
    for i in range(300):
        row = scored_row(reaction([["CC=O"]]), report(["CC=O"] if i % 2 else []), 1.0)
        row["reaction_class"] = f"class-{i:03d}"
        row["provenance"] = {"template_source": "embedded"}
        rows.append(row)
    classes = breakdowns(rows, Bootstrap(resamples=50))["reaction_class"]
    assert len(classes) == 300
    assert [classes[f"class-{i:03d}"]["n_covered"] for i in (0, 1, 298, 299)] == [0, 1, 0, 1]
    assert all(block["n_rows"] == 1 for block in classes.values())
