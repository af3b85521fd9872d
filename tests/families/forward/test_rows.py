"""Row schema 2: statuses, failure_reason derivation, consistency check, stereo, NDCG."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemgauge.chem import try_flatten_stereo
from chemgauge.errors import RowConsistencyError
from chemgauge.families.forward.corpus import BenchReaction, InvalidRecord, reaction_identity
from chemgauge.families.forward.engine.predictor import Candidate, ForwardReport, ForwardStats
from chemgauge.families.forward.rows import (
    FAILURE_REASONS,
    PROPOSAL_STATUSES,
    RANKING_STATUSES,
    check_status_consistency,
    derive_failure_reason,
    error_row,
    invalid_row,
    scored_row,
)


def reaction(accepted: list[list[str]], reactants: tuple[str, ...] = ("CCO",)) -> BenchReaction:
    acc = tuple(sorted({tuple(sorted(p)) for p in accepted}))
    return BenchReaction(
        source_line=7,
        reaction_id="r",
        reactants_original=reactants,
        reactants_canonical=reactants,
        accepted_products_canonical=acc,
        reaction_class=None,
        group_key="g",
        split="test",
        identity=reaction_identity(reactants, acc),
    )


def report(pool: list[str], *, capped: bool = False, warnings: int = 0) -> ForwardReport:
    candidates = tuple(
        Candidate(rank, tuple(sorted(s.split("."))), 1, ("t",), 1, None)
        for rank, s in enumerate(pool)
    )
    stats = ForwardStats(
        rules_loaded=3,
        graph_rules_skipped=1,
        reactant_molecules=1,
        templates_attempted=3,
        templates_matched=2,
        templates_partially_matched=0,
        raw_outcomes=len(pool) + 4,
        invalid_outcomes_rejected=3,
        no_op_outcomes_rejected=1,
        application_errors=0,
        application_warnings=warnings,
        candidates_before_cap=len(pool) + capped,
        capped=capped,
    )
    return ForwardReport(("CCO",), candidates, stats, (), "hash")


FILLER = [f"C{'C' * i}O" for i in range(1, 15)]


@pytest.mark.parametrize(
    ("rank", "ranking", "reason"),
    [
        (0, "top1", "hit_top1"),
        (4, "top5", "hit_top5"),
        (9, "top10", "hit_top10"),
        (10, "beyond10", "hit_beyond_10"),
    ],
)
def test_rank_buckets(rank: int, ranking: str, reason: str) -> None:
    pool = [*FILLER[:rank], "CC=O", *FILLER[rank:]]
    row = scored_row(reaction([["CC=O"]]), report(pool), 1.0)
    assert row["best_correct_rank"] == rank and row["ranking_status"] == ranking
    assert row["failure_reason"] == reason and row["proposal_status"] == "covered"
    assert (row["top1_hit"], row["top5_hit"], row["top10_hit"]) == (rank < 1, rank < 5, rank < 10)
    assert row["stereochemistry_aware_hit"] == row["top10_hit"]


def test_misses_empty_and_nonempty_pools() -> None:
    empty = scored_row(reaction([["CC=O"]]), report([]), 1.0)
    assert (empty["proposal_status"], empty["failure_reason"]) == (
        "missed_empty_pool",
        "correct_absent_empty_pool",
    )
    missed = scored_row(reaction([["CC=O"]]), report(["CCCO"]), 1.0)
    assert (missed["proposal_status"], missed["failure_reason"]) == (
        "missed_nonempty_pool",
        "correct_absent_nonempty_pool",
    )
    assert missed["ranking_status"] == "not_applicable" and missed["stereo_status"] == "no_hit"


def test_capped_pool_miss_is_unknown_not_absent() -> None:
    row = scored_row(reaction([["CC=O"]]), report(["CCCO"], capped=True), 1.0)
    assert row["proposal_status"] == "capped_unknown" and row["pool_capped"]
    assert row["failure_reason"] == "capped_unknown"
    truncated = scored_row(reaction([["CC=O"]]), report(["CCCO"], warnings=1), 1.0)
    assert truncated["proposal_status"] == "capped_unknown"
    found = scored_row(reaction([["CC=O"]]), report(["CC=O"], capped=True), 1.0)
    assert found["proposal_status"] == "covered"


def test_multi_positive_ndcg_is_hand_checked() -> None:
    accepted = [["CC=O"], ["CC(=O)O"], ["C=C"]]
    pool = ["CC=O", "CCCO", "CC(=O)O", "CCCCO"]
    row = scored_row(reaction(accepted), report(pool), 1.0)
    assert row["correct_ranks_top10"] == [0, 2] and row["best_correct_rank"] == 0
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert row["ndcg_at_10"] == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    one = scored_row(reaction(accepted), report(["CC=O"]), 1.0)
    all_three = scored_row(reaction(accepted), report(["CC=O", "CC(=O)O", "C=C"]), 1.0)
    assert one["ndcg_at_10"] < row["ndcg_at_10"] < all_three["ndcg_at_10"] == pytest.approx(1.0)


def test_duplicate_accepted_entries_do_not_inflate_the_ideal() -> None:
    row = scored_row(reaction([["CC=O"], ["CC=O"]]), report(["CC=O"]), 1.0)
    assert row["ndcg_at_10"] == 1.0


def test_mixed_arity_fields() -> None:
    row = scored_row(reaction([["CC=O"], ["CC=O", "O"], ["CC(=O)O"]]), report([]), 1.0)
    assert (row["accepted_product_count_min"], row["accepted_product_count_max"]) == (1, 2)
    assert row["accepted_product_count_mixed"] is True


def test_stereo_only_hit_is_constitution_right_stereo_wrong() -> None:
    row = scored_row(reaction([["C[C@H](N)C(=O)O"]]), report(["CCO", "C[C@@H](N)C(=O)O"]), 1.0)
    assert row["proposal_status"] == "missed_nonempty_pool"
    assert row["stereochemistry_ignored_outcome"] == "hit"
    assert row["stereo_status"] == "stereo_only_hit"
    assert row["best_correct_rank_stereo_ignored"] == 1


def test_e_z_mismatch_is_stereo_only_too() -> None:
    row = scored_row(reaction([["C/C=C/C"]]), report([r"C/C=C\C"]), 1.0)
    assert row["stereo_status"] == "stereo_only_hit"


def test_unsupported_flattening_is_never_a_no_hit() -> None:
    def refuse(smiles: str) -> str | None:
        return None

    row = scored_row(
        reaction([["C[C@H](N)C(=O)O"]]), report(["C[C@@H](N)C(=O)O"]), 1.0, flatten=refuse
    )
    assert row["stereochemistry_ignored_outcome"] == "unsupported"
    assert row["stereo_status"] == "unsupported"
    assert row["best_correct_rank_stereo_ignored"] is None
    hit = scored_row(
        reaction([["C[C@H](N)C(=O)O"]]), report(["C[C@H](N)C(=O)O"]), 1.0, flatten=refuse
    )
    assert hit["stereo_status"] == "exact_hit"
    assert hit["stereochemistry_ignored_outcome"] == "unsupported"


def test_stereo_dimension_looks_at_the_top_10_like_the_aware_hit() -> None:
    pool = [*FILLER[:10], "C[C@@H](N)C(=O)O"]
    row = scored_row(reaction([["C[C@H](N)C(=O)O"]]), report(pool), 1.0)
    assert row["stereochemistry_ignored_outcome"] == "no_hit"
    assert row["stereo_status"] == "no_hit"


def test_invalid_and_error_rows() -> None:
    bad = invalid_row(InvalidRecord(3, "x", "unparseable_smiles", "SMILES syntax error", "c1"))
    assert bad["split"] == "unknown" and bad["leakage_group_id"] is None
    assert bad["failure_reason"] == "input_invalid" and bad["proposal_status"] == "not_attempted"
    assert bad["reaction_class"] == "c1" and bad["candidate_count"] == 0
    err = error_row(reaction([["CC=O"]]), "boom", 2.0)
    assert err["failure_reason"] == "prediction_error" and err["leakage_group_id"] == "g"
    assert err["stereo_status"] == "not_applicable" and err["prediction_error"] == "boom"


def test_failure_reason_is_a_function_of_the_statuses() -> None:
    seen = set()
    for proposal in PROPOSAL_STATUSES:
        for ranking in RANKING_STATUSES:
            if (proposal == "covered") == (ranking == "not_applicable"):
                continue
            inp = "invalid" if proposal == "not_attempted" else "valid"
            seen.add(derive_failure_reason(inp, proposal, ranking))
    assert seen == set(FAILURE_REASONS)


def _good_row() -> dict[str, Any]:
    return scored_row(reaction([["CC=O"]]), report(["CCCO", "CC=O"]), 1.0)


@pytest.mark.parametrize(
    "change",
    [
        {"failure_reason": "hit_top1"},
        {"ranking_status": "top1"},
        {"best_correct_rank": None},
        {"proposal_status": "missed_nonempty_pool"},
        {"input_status": "invalid"},
        {"stereo_status": "no_hit"},
        {"top5_hit": False},
        {"stereochemistry_aware_hit": False},
        {"correct_ranks_top10": [3]},
        {"split": "unknown"},
        {"best_correct_rank_stereo_ignored": None},
        {"correct_candidate_present": False},
    ],
)
def test_consistency_check_rejects_contradictions(change: dict[str, Any]) -> None:
    row = _good_row()
    check_status_consistency(row)
    row.update(change)
    with pytest.raises(RowConsistencyError, match="line 7"):
        check_status_consistency(row)


POOL = ["CC=O", "CCO", "C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O", "CC(=O)O", "C/C=C/C", r"C/C=C\C"]


@settings(max_examples=60, deadline=None)
@given(
    pool=st.lists(st.sampled_from(POOL), unique=True, max_size=7).flatmap(
        lambda p: st.permutations(p)
    ),
    accepted=st.lists(st.sampled_from(POOL), min_size=1, max_size=3),
    capped=st.booleans(),
    padding=st.integers(min_value=0, max_value=12),
)
def test_every_scored_row_is_consistent(
    pool: list[str], accepted: list[str], capped: bool, padding: int
) -> None:
    row = scored_row(
        reaction([[a] for a in accepted]), report([*FILLER[:padding], *pool], capped=capped), 1.0
    )
    check_status_consistency(row)
    best = row["best_correct_rank"]
    assert (best is None) == (row["proposal_status"] != "covered")
    if row["stereo_status"] == "stereo_only_hit":
        assert not row["top10_hit"]


@pytest.mark.parametrize("k", [1, 5, 10])
def test_truth_at_rank_exactly_k_counts_for_top_k(k: int) -> None:
    # 1-based rank k is 0-based rank k - 1: inside top-k. One rank lower (k + 1) is outside.
    name = f"top{k}_hit"
    at_k = scored_row(reaction([["CC=O"]]), report([*FILLER[: k - 1], "CC=O"]), 1.0)
    assert at_k["best_correct_rank"] == k - 1 and at_k[name] is True
    assert at_k["ranking_status"] == f"top{k}"
    below = scored_row(reaction([["CC=O"]]), report([*FILLER[:k], "CC=O"]), 1.0)
    assert below["best_correct_rank"] == k and below[name] is False
    # rank k + 1 falls in the next bucket: top1 -> top5, top5 -> top10, top10 -> beyond10
    assert below["ranking_status"] == {1: "top5", 5: "top10", 10: "beyond10"}[k]
    assert below["failure_reason"] == {1: "hit_top5", 5: "hit_top10", 10: "hit_beyond_10"}[k]


#: Every field of a schema-3 row before the runner adds ``provenance``, written out by hand:
#: a field dropped or renamed by mistake changes what every reader of the rows sees.
ROW_FIELDS = {
    "accepted_product_count_max", "accepted_product_count_min", "accepted_product_count_mixed",
    "accepted_products_canonical", "application_error_count", "application_warning_count",
    "best_correct_rank", "best_correct_rank_stereo_ignored", "candidate_count",
    "correct_candidate_present", "correct_ranks_top10", "elapsed_ms", "failure_reason",
    "graph_rules_skipped", "group_key_source", "has_stereochemistry", "in_sample",
    "in_sample_reason", "input_invalid_detail",
    "input_invalid_reason", "input_status", "invalid_candidate_count", "leakage_group_id",
    "ndcg_at_10", "no_op_candidate_count", "num_reactants", "pool_capped", "prediction_error",
    "proposal_status", "ranking_status", "raw_outcomes", "reactants_canonical",
    "reactants_original", "reaction_class", "reaction_id", "rules_loaded", "source_line",
    "split", "stereo_status", "stereochemistry_aware_hit", "stereochemistry_ignored_outcome",
    "templates_attempted", "templates_matched", "top10_hit", "top1_hit", "top5_hit",
    "top_candidates",
}  # fmt: skip


def test_every_row_kind_has_the_schema_4_fields() -> None:
    scored = scored_row(reaction([["CC=O"]]), report(["CCCO", "CC=O"]), 1.0)
    error = error_row(reaction([["CC=O"]]), "boom", 2.0)
    invalid = invalid_row(InvalidRecord(3, "x", "unparseable_smiles", "SMILES syntax error"))
    for row in (scored, error, invalid):
        assert set(row) == ROW_FIELDS, sorted(set(row) ^ ROW_FIELDS)


def test_rows_without_a_pool_count_nothing() -> None:
    # A failed prediction and a rejected input produced no candidates: every count is 0,
    # nothing was capped and nDCG is 0.0 (the end-to-end means count them as misses).
    nothing = {
        "candidate_count": 0,
        "raw_outcomes": 0,
        "invalid_candidate_count": 0,
        "no_op_candidate_count": 0,
        "application_warning_count": 0,
        "application_error_count": 0,
        "templates_attempted": 0,
        "templates_matched": 0,
        "graph_rules_skipped": 0,
        "rules_loaded": 0,
        "pool_capped": False,
        "top_candidates": [],
        "ndcg_at_10": 0.0,
    }
    error = error_row(reaction([["CC=O"]]), "boom", 2.0)
    invalid = invalid_row(InvalidRecord(3, "x", "unparseable_smiles", "SMILES syntax error"))
    for row in (error, invalid):
        assert {k: row[k] for k in nothing} == nothing
    assert error["elapsed_ms"] == 2.0 and invalid["elapsed_ms"] is None
    assert (error["reaction_id"], error["input_invalid_reason"]) == ("r", None)
    assert (invalid["reaction_id"], invalid["source_line"]) == ("x", 3)
    assert invalid["input_invalid_reason"] == "unparseable_smiles"
    assert invalid["input_invalid_detail"] == "SMILES syntax error"


def test_a_long_prediction_error_keeps_its_first_500_characters() -> None:
    detail = "".join(f"{i % 10}" for i in range(600))
    row = error_row(reaction([["CC=O"]]), detail, 2.0)
    assert row["prediction_error"] == detail[:500] and len(row["prediction_error"]) == 500


def test_elapsed_ms_is_kept_to_the_microsecond() -> None:
    # 1.23456 ms rounded to 3 decimals (1 microsecond) is 1.235.
    assert scored_row(reaction([["CC=O"]]), report(["CC=O"]), 1.23456)["elapsed_ms"] == 1.235


def test_a_multi_part_product_is_flattened_as_a_whole() -> None:
    # L-alanine + water accepted, D-alanine + water proposed: the same constitution.
    row = scored_row(reaction([["C[C@H](N)C(=O)O", "O"]]), report(["C[C@@H](N)C(=O)O.O"]), 1.0)
    assert row["stereo_status"] == "stereo_only_hit"
    assert row["best_correct_rank_stereo_ignored"] == 0


def test_a_stereo_free_answer_matches_a_candidate_that_adds_stereo() -> None:
    # Accepted: alanine + water with no stereo given; proposed: L-alanine + water. Exact
    # comparison misses (the strings differ), the stereo-ignored one finds it at rank 0.
    row = scored_row(reaction([["CC(N)C(=O)O", "O"]]), report(["CCO", "C[C@H](N)C(=O)O.O"]), 1.0)
    assert row["best_correct_rank"] is None and row["stereo_status"] == "stereo_only_hit"
    assert row["best_correct_rank_stereo_ignored"] == 1


def test_only_products_with_stereo_marks_reach_the_flattener() -> None:
    asked: list[str] = []

    def recording(smiles: str) -> str | None:
        asked.append(smiles)
        return try_flatten_stereo(smiles)

    # Xenon difluoride: an X in a SMILES that carries no stereo mark.
    pool = ["F[Xe]F", "CC=O", "C[C@@H](N)C(=O)O", "C/C=C/C"]
    row = scored_row(reaction([["CC=O"]]), report(pool), 1.0, flatten=recording)
    assert asked == ["C[C@@H](N)C(=O)O", "C/C=C/C"]
    assert row["stereo_status"] == "exact_hit"


def test_a_refused_candidate_makes_the_stereo_dimension_unsupported() -> None:
    # The accepted answer has no stereo (never flattened); the one candidate has and cannot be
    # flattened: the stereo-ignored outcome is unknown, not a miss.
    def refuse(smiles: str) -> str | None:
        return None

    row = scored_row(reaction([["CC(N)C(=O)O"]]), report(["C[C@@H](N)C(=O)O"]), 1.0, flatten=refuse)
    assert row["stereochemistry_ignored_outcome"] == "unsupported"
    assert row["stereo_status"] == "unsupported"


def test_an_invalid_input_is_input_invalid_whatever_the_other_statuses() -> None:
    for proposal, ranking in (("error", "not_applicable"), ("covered", "top1")):
        assert derive_failure_reason("invalid", proposal, ranking) == "input_invalid"


def _problems(row: dict[str, Any]) -> list[str]:
    """The problems check_status_consistency lists for a row of reaction 'r' at line 7."""
    with pytest.raises(RowConsistencyError) as caught:
        check_status_consistency(row)
    message = str(caught.value)
    prefix = "row at line 7 ('r'): "
    assert message.startswith(prefix), message
    return message[len(prefix) :].split("; ")


def _base(kind: str) -> dict[str, Any]:
    if kind == "hit":  # best rank 1 of ["CCCO", "CC=O"]: top5, exact hit, flat rank 1
        return _good_row()
    if kind == "miss":  # a non-empty pool without the product
        return scored_row(reaction([["CC=O"]]), report(["CCCO"]), 1.0)
    if kind == "empty":
        return scored_row(reaction([["CC=O"]]), report([]), 1.0)
    if kind == "beyond":  # best rank 10, no stereo-ignored hit in the top 10
        return scored_row(reaction([["CC=O"]]), report([*FILLER[:10], "CC=O"]), 1.0)
    if kind == "error":
        return error_row(reaction([["CC=O"]]), "boom", 1.0)
    row = invalid_row(InvalidRecord(7, "r", "unparseable_smiles", "x"))
    assert kind == "invalid"
    return row


COVERED_IFF = "proposal_status covered iff best_correct_rank is set"
PRESENT_IFF = "correct_candidate_present iff covered"
DERIVED = "failure_reason must be derived from the statuses"
SORTED_BELOW_10 = "correct_ranks_top10 must be sorted ranks below 10"


@pytest.mark.parametrize(
    ("kind", "change", "problems"),
    [
        # each list walks the checks in order by hand
        ("hit", {"input_status": "maybe"}, ["unknown input or proposal status"]),
        (
            "hit",
            {"stereo_status": "fuzzy"},
            [
                "unknown ranking or stereo status",
                "stereo_status fuzzy contradicts the stereo fields (exact_hit)",
            ],
        ),
        (
            "hit",
            {"input_status": "invalid"},
            [
                "input_status invalid iff proposal_status not_attempted",
                "an invalid row has split unknown and no group key",
                "group_key_source is explicit or fallback on a valid row, else None",
                DERIVED,  # an invalid input is input_invalid, not hit_top5
            ],
        ),
        (
            "invalid",
            {"leakage_group_id": "g"},
            ["an invalid row has split unknown and no group key"],
        ),
        ("hit", {"split": "unknown"}, ["a valid row has a split and a group key"]),
        (
            "hit",
            {"group_key_source": "guessed"},
            ["group_key_source is explicit or fallback on a valid row, else None"],
        ),
        ("hit", {"proposal_status": "missed_nonempty_pool"}, [COVERED_IFF, PRESENT_IFF, DERIVED]),
        ("hit", {"correct_candidate_present": False}, [PRESENT_IFF]),
        (
            "hit",
            {"ranking_status": "top1"},
            ["ranking_status must follow best_correct_rank", DERIVED],
        ),
        (
            "miss",
            {"proposal_status": "missed_empty_pool", "failure_reason": "correct_absent_empty_pool"},
            ["missed_empty_pool needs an empty pool"],
        ),
        (
            "empty",
            {
                "proposal_status": "missed_nonempty_pool",
                "failure_reason": "correct_absent_nonempty_pool",
            },
            ["missed_nonempty_pool needs a non-empty pool"],
        ),
        ("hit", {"top1_hit": True}, ["top1_hit must equal best_correct_rank < 1"]),
        (
            "hit",
            {"stereochemistry_aware_hit": False},
            [
                "stereochemistry_aware_hit must equal top10_hit",
                "stereo_status exact_hit contradicts the stereo fields (stereo_only_hit)",
            ],
        ),
        (
            "error",
            {"stereochemistry_ignored_outcome": "no_hit"},
            ["no pool: stereo_status not_applicable and no stereo outcome"],
        ),
        (
            "miss",
            {"stereochemistry_ignored_outcome": "maybe"},
            ["stereo_status no_hit contradicts the stereo fields (?)"],
        ),
        (
            "hit",
            {"stereochemistry_ignored_outcome": "no_hit", "best_correct_rank_stereo_ignored": None},
            ["a stereo-aware hit is a stereo-ignored hit too"],
        ),
        (
            "hit",
            {"best_correct_rank_stereo_ignored": None},
            ["best_correct_rank_stereo_ignored is set iff the outcome is hit"],
        ),
        (
            "beyond",
            {
                "stereochemistry_ignored_outcome": "hit",
                "stereo_status": "stereo_only_hit",
                "best_correct_rank_stereo_ignored": 10,
            },
            ["best_correct_rank_stereo_ignored must be a rank below 10"],
        ),
        (
            "hit",
            {"best_correct_rank_stereo_ignored": 2},
            ["best_correct_rank_stereo_ignored must be <= best_correct_rank"],
        ),
        ("hit", {"correct_ranks_top10": [1, 0]}, [SORTED_BELOW_10]),
        ("hit", {"correct_ranks_top10": [1, 10]}, [SORTED_BELOW_10]),
        (
            "hit",
            {"correct_ranks_top10": [3]},
            ["correct_ranks_top10 must start at best_correct_rank"],
        ),
        ("hit", {"failure_reason": "hit_top1"}, [DERIVED]),
    ],
)
def test_consistency_check_names_each_contradiction(
    kind: str, change: dict[str, Any], problems: list[str]
) -> None:
    row = _base(kind)
    check_status_consistency(row)
    row.update(change)
    assert _problems(row) == problems


@pytest.mark.parametrize("source", ["explicit", "fallback"])
def test_consistency_check_accepts_both_group_key_sources(source: str) -> None:
    row = _good_row()
    row["group_key_source"] = source
    check_status_consistency(row)  # raises on a contradiction
