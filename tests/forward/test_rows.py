"""Row schema 2: statuses, failure_reason derivation, consistency check, stereo, NDCG."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemgauge.benchmarks.forward.corpus import BenchReaction, InvalidRecord, reaction_identity
from chemgauge.benchmarks.forward.rows import (
    FAILURE_REASONS,
    PROPOSAL_STATUSES,
    RANKING_STATUSES,
    RowConsistencyError,
    check_status_consistency,
    derive_failure_reason,
    error_row,
    invalid_row,
    scored_row,
)
from chemgauge.engines.forward.predictor import Candidate, ForwardReport, ForwardStats


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
