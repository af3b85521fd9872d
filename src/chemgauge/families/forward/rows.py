"""Benchmark rows (schema version 4): one per reaction, four orthogonal statuses, one derivation.

Version 3 adds ``group_key_source`` (``explicit``: the corpus's own ``group_key``;
``fallback``: the reactant hash; ``None`` for an invalid row) beside ``leakage_group_id``, so
the leakage audit is a function of rows. Version 4 adds ``in_sample`` and
``in_sample_reason`` (``template_source``, ``near_duplicate_of_source`` or ``None``), set by
the runner from the applied templates' sources (:mod:`~chemgauge.families.forward.insample`).

The four statuses say independent things:

* ``input_status``: ``valid`` | ``invalid`` (did the input canonicalize at all);
* ``proposal_status``: ``covered`` | ``missed_empty_pool`` | ``missed_nonempty_pool`` |
  ``capped_unknown`` (the pool was cut, by ``max_results`` or an RDKit product limit, before
  absence could be confirmed) | ``error`` (prediction failed) | ``not_attempted``;
* ``ranking_status``: ``top1`` | ``top5`` | ``top10`` | ``beyond10`` for covered rows, else
  ``not_applicable``;
* ``stereo_status``: ``exact_hit`` | ``stereo_only_hit`` (constitution right, stereo wrong) |
  ``no_hit`` | ``unsupported`` (flattening failed: never collapsed to ``no_hit``) |
  ``not_applicable`` (no pool). Like ``stereochemistry_aware_hit`` (which equals
  ``top10_hit``), the stereo dimension looks at the top 10 candidates.

``failure_reason`` is derived from them by :func:`derive_failure_reason` only, and every row
passes :func:`check_status_consistency` before it is written. One addition to the protocol's
eight legacy reasons: a ``capped_unknown`` row reports ``failure_reason: "capped_unknown"``
instead of pretending the product is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chemgauge.chem import try_flatten_stereo
from chemgauge.errors import RowConsistencyError
from chemgauge.eval.ranking import ndcg_at_k
from chemgauge.families.forward.corpus import BenchReaction, InvalidRecord
from chemgauge.families.forward.engine.predictor import ForwardReport

__all__ = [
    "FAILURE_REASONS",
    "INPUT_STATUSES",
    "PROPOSAL_STATUSES",
    "RANKING_STATUSES",
    "ROW_SCHEMA_VERSION",
    "STEREO_OUTCOMES",
    "STEREO_STATUSES",
    "RowConsistencyError",
    "check_status_consistency",
    "derive_failure_reason",
    "error_row",
    "invalid_row",
    "ranking_status_of",
    "scored_row",
]

ROW_SCHEMA_VERSION = 4
TOP_K = 10
INPUT_STATUSES = ("valid", "invalid")
PROPOSAL_STATUSES = (
    "covered",
    "missed_empty_pool",
    "missed_nonempty_pool",
    "capped_unknown",
    "error",
    "not_attempted",
)
RANKING_STATUSES = ("top1", "top5", "top10", "beyond10", "not_applicable")
STEREO_STATUSES = ("exact_hit", "stereo_only_hit", "no_hit", "unsupported", "not_applicable")
STEREO_OUTCOMES = ("hit", "no_hit", "unsupported")
FAILURE_REASONS = (
    "hit_top1",
    "hit_top5",
    "hit_top10",
    "hit_beyond_10",
    "correct_absent_empty_pool",
    "correct_absent_nonempty_pool",
    "capped_unknown",
    "input_invalid",
    "prediction_error",
)

Flattener = Callable[[str], str | None]


def ranking_status_of(best_rank: int | None) -> str:
    """``top1``/``top5``/``top10``/``beyond10`` for a 0-based rank; ``not_applicable`` if None."""
    if best_rank is None:
        return "not_applicable"
    if best_rank < 1:
        return "top1"
    if best_rank < 5:
        return "top5"
    if best_rank < 10:
        return "top10"
    return "beyond10"


_HIT_REASON = {
    "top1": "hit_top1",
    "top5": "hit_top5",
    "top10": "hit_top10",
    "beyond10": "hit_beyond_10",
}
_MISS_REASON = {
    "missed_empty_pool": "correct_absent_empty_pool",
    "missed_nonempty_pool": "correct_absent_nonempty_pool",
    "capped_unknown": "capped_unknown",
    "error": "prediction_error",
    "not_attempted": "input_invalid",
}


def derive_failure_reason(input_status: str, proposal_status: str, ranking_status: str) -> str:
    """The legacy one-word outcome, as a pure function of the orthogonal statuses."""
    if input_status == "invalid":
        return "input_invalid"
    if proposal_status == "covered":
        return _HIT_REASON[ranking_status]
    return _MISS_REASON[proposal_status]


def check_status_consistency(row: Mapping[str, Any]) -> None:
    """Raise :class:`RowConsistencyError` if the row's statuses or ranks contradict each other."""
    problems: list[str] = []
    inp, prop = row["input_status"], row["proposal_status"]
    rank_status, stereo = row["ranking_status"], row["stereo_status"]
    best = row["best_correct_rank"]
    if inp not in INPUT_STATUSES or prop not in PROPOSAL_STATUSES:
        problems.append("unknown input or proposal status")
    if rank_status not in RANKING_STATUSES or stereo not in STEREO_STATUSES:
        problems.append("unknown ranking or stereo status")
    if (inp == "invalid") != (prop == "not_attempted"):
        problems.append("input_status invalid iff proposal_status not_attempted")
    if inp == "invalid" and (row["split"] != "unknown" or row["leakage_group_id"] is not None):
        problems.append("an invalid row has split unknown and no group key")
    if inp == "valid" and (row["split"] == "unknown" or row["leakage_group_id"] is None):
        problems.append("a valid row has a split and a group key")
    if row["group_key_source"] not in ((None,) if inp == "invalid" else ("explicit", "fallback")):
        problems.append("group_key_source is explicit or fallback on a valid row, else None")
    if (prop == "covered") != (best is not None):
        problems.append("proposal_status covered iff best_correct_rank is set")
    if bool(row["correct_candidate_present"]) != (prop == "covered"):
        problems.append("correct_candidate_present iff covered")
    if rank_status != ranking_status_of(best):
        problems.append("ranking_status must follow best_correct_rank")
    if prop == "missed_empty_pool" and row["candidate_count"] != 0:
        problems.append("missed_empty_pool needs an empty pool")
    if prop == "missed_nonempty_pool" and row["candidate_count"] == 0:
        problems.append("missed_nonempty_pool needs a non-empty pool")
    for k, name in ((1, "top1_hit"), (5, "top5_hit"), (10, "top10_hit")):
        if bool(row[name]) != (best is not None and best < k):
            problems.append(f"{name} must equal best_correct_rank < {k}")
    if row["stereochemistry_aware_hit"] != row["top10_hit"]:
        problems.append("stereochemistry_aware_hit must equal top10_hit")
    outcome = row["stereochemistry_ignored_outcome"]
    attempted = prop not in ("not_attempted", "error")
    if not attempted:
        if stereo != "not_applicable" or outcome is not None:
            problems.append("no pool: stereo_status not_applicable and no stereo outcome")
    else:
        expected = (
            "exact_hit"
            if row["stereochemistry_aware_hit"]
            else {"hit": "stereo_only_hit", "no_hit": "no_hit", "unsupported": "unsupported"}.get(
                outcome, "?"
            )
        )
        if stereo != expected:
            problems.append(f"stereo_status {stereo} contradicts the stereo fields ({expected})")
        if row["stereochemistry_aware_hit"] and outcome == "no_hit":
            problems.append("a stereo-aware hit is a stereo-ignored hit too")
    flat = row["best_correct_rank_stereo_ignored"]
    if (flat is not None) != (outcome == "hit"):
        problems.append("best_correct_rank_stereo_ignored is set iff the outcome is hit")
    if flat is not None and not 0 <= flat < TOP_K:
        problems.append("best_correct_rank_stereo_ignored must be a rank below 10")
    if flat is not None and best is not None and flat > best:
        problems.append("best_correct_rank_stereo_ignored must be <= best_correct_rank")
    if sorted(row["correct_ranks_top10"]) != row["correct_ranks_top10"] or any(
        r >= TOP_K for r in row["correct_ranks_top10"]
    ):
        problems.append("correct_ranks_top10 must be sorted ranks below 10")
    if best is not None and best < TOP_K and row["correct_ranks_top10"][:1] != [best]:
        problems.append("correct_ranks_top10 must start at best_correct_rank")
    if row["failure_reason"] != derive_failure_reason(inp, prop, rank_status):
        problems.append("failure_reason must be derived from the statuses")
    if problems:
        where = f"row at line {row.get('source_line')} ({row.get('reaction_id')!r})"
        raise RowConsistencyError(f"{where}: " + "; ".join(problems))


def _empty_fields() -> dict[str, Any]:
    return {
        "candidate_count": 0,
        "raw_outcomes": 0,
        "correct_candidate_present": False,
        "best_correct_rank": None,
        "correct_ranks_top10": [],
        "best_correct_rank_stereo_ignored": None,
        "top1_hit": False,
        "top5_hit": False,
        "top10_hit": False,
        "stereochemistry_aware_hit": False,
        "stereochemistry_ignored_outcome": None,
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


def _finish(row: dict[str, Any], proposal: str, ranking: str, stereo: str) -> dict[str, Any]:
    row["failure_reason"] = derive_failure_reason(row["input_status"], proposal, ranking)
    row["proposal_status"] = proposal
    row["ranking_status"] = ranking
    row["stereo_status"] = stereo
    check_status_consistency(row)
    return row


def _head(reaction: BenchReaction) -> dict[str, Any]:
    accepted = reaction.accepted_products_canonical
    sizes = [len(p) for p in accepted]
    return {
        "reaction_id": reaction.reaction_id,
        "source_line": reaction.source_line,
        "split": reaction.split,
        "leakage_group_id": reaction.group_key,
        "group_key_source": reaction.group_key_source,
        "in_sample": False,
        "in_sample_reason": None,
        "reaction_class": reaction.reaction_class,
        "reactants_original": list(reaction.reactants_original),
        "reactants_canonical": list(reaction.reactants_canonical),
        "accepted_products_canonical": [list(p) for p in accepted],
        "num_reactants": len(reaction.reactants_canonical),
        "accepted_product_count_min": min(sizes),
        "accepted_product_count_max": max(sizes),
        "accepted_product_count_mixed": min(sizes) != max(sizes),
        "has_stereochemistry": reaction.has_stereochemistry,
        "input_status": "valid",
        "input_invalid_reason": None,
        "input_invalid_detail": None,
        "prediction_error": None,
    }


def invalid_row(record: InvalidRecord) -> dict[str, Any]:
    """The row of a rejected corpus line: every derived field null, zero or empty."""
    row: dict[str, Any] = {
        "reaction_id": record.reaction_id,
        "source_line": record.source_line,
        "split": "unknown",
        "leakage_group_id": None,
        "group_key_source": None,
        "in_sample": False,
        "in_sample_reason": None,
        "reaction_class": record.reaction_class,
        "reactants_original": [],
        "reactants_canonical": [],
        "accepted_products_canonical": [],
        "num_reactants": None,
        "accepted_product_count_min": None,
        "accepted_product_count_max": None,
        "accepted_product_count_mixed": None,
        "has_stereochemistry": None,
        "input_status": "invalid",
        "input_invalid_reason": record.reason,
        "input_invalid_detail": record.detail,
        "prediction_error": None,
        **_empty_fields(),
        "elapsed_ms": None,
    }
    return _finish(row, "not_attempted", "not_applicable", "not_applicable")


def error_row(reaction: BenchReaction, detail: str, elapsed_ms: float | None) -> dict[str, Any]:
    """The row of a valid reaction whose prediction failed (kept, never dropped)."""
    row = {**_head(reaction), **_empty_fields(), "elapsed_ms": elapsed_ms}
    row["prediction_error"] = detail[:500]
    return _finish(row, "error", "not_applicable", "not_applicable")


def _flat_multiset(products: tuple[str, ...], flatten: Flattener) -> tuple[str, ...] | None:
    text = ".".join(products)
    if not any(c in text for c in "@/\\"):
        return products  # nothing to clear: flattening a canonical string is the identity
    flat = flatten(text)
    return None if flat is None else tuple(sorted(flat.split(".")))


def scored_row(
    reaction: BenchReaction,
    report: ForwardReport,
    elapsed_ms: float,
    flatten: Flattener = try_flatten_stereo,
) -> dict[str, Any]:
    """Score one prediction against the accepted products (stereo-aware and stereo-ignored)."""
    accepted = set(reaction.accepted_products_canonical)
    candidates = report.candidates
    hits = [c.rank for c in candidates if c.products in accepted]
    best = min(hits, default=None)
    top10 = [r for r in hits if r < TOP_K]
    stats = report.stats

    flat_accepted = [_flat_multiset(p, flatten) for p in reaction.accepted_products_canonical]
    flat_top = [_flat_multiset(c.products, flatten) for c in candidates[:TOP_K]]
    if any(f is None for f in flat_accepted) or any(f is None for f in flat_top):
        outcome, flat_best = "unsupported", None
    else:
        flat_set = set(flat_accepted)
        flat_hits = [rank for rank, f in enumerate(flat_top) if f in flat_set]
        flat_best = min(flat_hits, default=None)
        outcome = "hit" if flat_best is not None else "no_hit"
    aware_hit = best is not None and best < TOP_K

    row = {
        **_head(reaction),
        "candidate_count": len(candidates),
        "raw_outcomes": stats.raw_outcomes,
        "correct_candidate_present": best is not None,
        "best_correct_rank": best,
        "correct_ranks_top10": top10,
        "best_correct_rank_stereo_ignored": flat_best,
        "top1_hit": best is not None and best < 1,
        "top5_hit": best is not None and best < 5,
        "top10_hit": aware_hit,
        "stereochemistry_aware_hit": aware_hit,
        "stereochemistry_ignored_outcome": outcome,
        "invalid_candidate_count": stats.invalid_outcomes_rejected,
        "no_op_candidate_count": stats.no_op_outcomes_rejected,
        "application_warning_count": stats.application_warnings,
        "application_error_count": stats.application_errors,
        "templates_attempted": stats.templates_attempted,
        "templates_matched": stats.templates_matched,
        "graph_rules_skipped": stats.graph_rules_skipped,
        "rules_loaded": stats.rules_loaded,
        "pool_capped": not stats.pool_complete,
        "top_candidates": [c.smiles for c in candidates[:TOP_K]],
        "ndcg_at_10": ndcg_at_k(top10, len(accepted), TOP_K),
        "elapsed_ms": round(elapsed_ms, 3),
    }
    if best is not None:
        proposal = "covered"
    elif not stats.pool_complete:
        proposal = "capped_unknown"
    else:
        proposal = "missed_nonempty_pool" if candidates else "missed_empty_pool"
    if aware_hit:
        stereo = "exact_hit"
    else:
        stereo = {"hit": "stereo_only_hit", "no_hit": "no_hit"}.get(outcome, "unsupported")
    return _finish(row, proposal, ranking_status_of(best), stereo)
