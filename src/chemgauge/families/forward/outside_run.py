"""The forward benchmark of an outside system: its raw outputs -> rows -> every convention.

An outside run is the engine's run (:mod:`~chemgauge.families.forward.runner`): every corpus
line gets one row; a reaction the system did not answer (a predictions file without it, a
crashed command batch) is a counted miss in every denominator, never dropped. Each row is the
engine's row scored on the headline convention, and keeps the system's raw outputs as written
and, per ranking convention (:mod:`~chemgauge.families.forward.conventions`), the best rank of
an accepted product, stereo-aware and stereo-ignored, and the invalid and duplicate outputs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.eval.ranking import ndcg_at_k
from chemgauge.eval.rates import rate
from chemgauge.eval.stats import bootstrap_mean_interval
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.conventions import CONVENTIONS, Ranking, rank_outputs
from chemgauge.families.forward.corpus import BenchReaction
from chemgauge.families.forward.engine.predictor import Candidate, ForwardReport, ForwardStats
from chemgauge.families.forward.engine.rules import RuleSet
from chemgauge.families.forward.output_keys import OutputKeys
from chemgauge.families.forward.outside import Answer, OutsideSystem, PredictionsSystem
from chemgauge.families.forward.rows import error_row, scored_row
from chemgauge.families.forward.sources import LoadedRules

__all__ = [
    "ConventionScores",
    "OutsideChunk",
    "outside_conventions",
    "outside_loaded",
    "outside_row",
    "score_rows",
]

TOP_KS = (1, 2, 3, 5, 10)
TOP_SHOWN = 10


def _convention_cell(ranking: Ranking, reaction: BenchReaction, keys: OutputKeys) -> dict[str, Any]:
    accepted = set(reaction.accepted_products_canonical)
    best = ranking.best_rank(accepted)
    flat_accepted = {keys.flat(p) for p in accepted}
    flat_best = None
    if None not in flat_accepted:
        for rank, key in enumerate(ranking.ranked):
            if key is not None and keys.flat(key) in flat_accepted:
                flat_best = rank
                break
    bounds = ranking.rank_bounds(accepted)
    if None in flat_accepted:
        stereo = "unsupported"
    elif best is not None and best < TOP_SHOWN:
        stereo = "exact_hit"
    elif flat_best is not None and flat_best < TOP_SHOWN:
        stereo = "stereo_only_hit"
    else:
        stereo = "no_hit"
    relevant = [r for r, k in enumerate(ranking.ranked[:TOP_SHOWN]) if k in accepted]
    return {
        "best_correct_rank": best,
        "best_correct_rank_stereo_ignored": flat_best,
        "best_correct_rank_bounds": None if bounds is None else list(bounds),
        "stereo_status_top10": stereo,
        "ranked_count": len(ranking.ranked),
        "invalid_outputs": ranking.invalid,
        "duplicate_outputs": ranking.duplicates,
        "ndcg_at_10": ndcg_at_k(relevant, len(accepted), TOP_SHOWN),
        "top_candidates": [None if k is None else ".".join(k) for k in ranking.ranked[:TOP_SHOWN]],
    }


@dataclass(frozen=True)
class ConventionScores:
    """One convention's aggregate over the valid reactions (every one in the denominator)."""

    name: str
    block: dict[str, Any]


def _mean_block(values: list[float], seed: int) -> dict[str, Any]:
    interval = bootstrap_mean_interval(values, seed=seed)
    value = sum(values) / len(values) if values else None
    return {
        "n": len(values),
        "value": value,
        "interval": [interval.low, interval.high],
        "method": interval.method,
        "seed": seed,
    }


def score_rows(rows: Sequence[Mapping[str, Any]], seed: int = 0) -> dict[str, Any]:
    """Every convention's top-k (stereo-aware and -ignored), MRR and nDCG@10, with intervals,
    over all valid reactions and per split."""
    valid = [r for r in rows if r["input_status"] == "valid"]
    out = _score_valid(valid, seed)
    splits = sorted({r["split"] for r in valid})
    for name, block in out.items():
        block["by_split"] = {
            split: _score_valid([r for r in valid if r["split"] == split], seed)[name]["top_k"]
            for split in splits
        }
    return out


def _score_valid(valid: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    n = len(valid)
    out: dict[str, Any] = {}
    for name in CONVENTIONS:
        cells = [r["conventions"][name] for r in valid]
        best = [c["best_correct_rank"] for c in cells]
        flat = [c["best_correct_rank_stereo_ignored"] for c in cells]
        low = [
            None if c["best_correct_rank_bounds"] is None else c["best_correct_rank_bounds"][0]
            for c in cells
        ]
        high = [
            None if c["best_correct_rank_bounds"] is None else c["best_correct_rank_bounds"][1]
            for c in cells
        ]

        def hits(ranks: list[int | None], k: int) -> int:
            return sum(1 for b in ranks if b is not None and b < k)

        out[name] = {
            "top_k": {str(k): rate(hits(best, k), n, k=k) for k in TOP_KS},
            "top_k_stereo_ignored": {str(k): rate(hits(flat, k), n, k=k) for k in TOP_KS},
            "top_k_tie_range": {str(k): [hits(high, k), hits(low, k)] for k in TOP_KS},
            "mrr": _mean_block([0.0 if b is None else 1.0 / (b + 1) for b in best], seed),
            "ndcg_at_10": _mean_block([float(c["ndcg_at_10"]) for c in cells], seed),
            "invalid_outputs": sum(c["invalid_outputs"] for c in cells),
            "duplicate_outputs": sum(c["duplicate_outputs"] for c in cells),
            "stereo_status_top10": {
                status: sum(1 for c in cells if c["stereo_status_top10"] == status)
                for status in ("exact_hit", "stereo_only_hit", "no_hit", "unsupported")
            },
        }
    return out


# --- the standard run envelope ------------------------------------------------------------
#
# An outside run goes through the built-in engine's runner (journal, resume, rows, envelope,
# verify, board): each reaction's row is the engine's row shape, scored on the headline
# convention's ranked list, with the raw outputs and every convention's cell beside it.


def outside_loaded(corpus_sha256: str) -> LoadedRules:
    """The empty rule set an outside run records (no template took part)."""
    return LoadedRules(
        rules=RuleSet(()),
        template_source="outside",
        rules_file=None,
        rules_file_sha256=None,
        manifest_file=None,
        manifest_sha256=None,
        corpus_sha256=corpus_sha256,
    )


def _engine_report(reaction: BenchReaction, answer: Answer, ranking: Ranking) -> ForwardReport:
    """The headline convention's ranked list in the engine's report shape."""
    candidates = tuple(
        Candidate(rank, key or (), 0, (), 1, None) for rank, key in enumerate(ranking.ranked)
    )
    stats = ForwardStats(
        rules_loaded=0,
        graph_rules_skipped=0,
        reactant_molecules=len(reaction.reactants_canonical),
        templates_attempted=0,
        templates_matched=0,
        templates_partially_matched=0,
        raw_outcomes=sum(len(lst) for lst in answer.lists),
        invalid_outcomes_rejected=ranking.invalid,
        no_op_outcomes_rejected=0,
        application_errors=0,
        application_warnings=0,
        candidates_before_cap=len(candidates),
        capped=False,
    )
    return ForwardReport(tuple(reaction.reactants_original), candidates, stats, (), "")


def outside_row(
    reaction: BenchReaction,
    answer: Answer,
    keys: OutputKeys,
    headline: str,
    elapsed_ms: float,
) -> dict[str, Any]:
    """One valid reaction's row: the engine's row on the headline convention, plus the raw
    outputs, the answer status and every convention's cell."""
    rankings = rank_outputs(answer.lists, keys)
    if answer.status == "answered":
        row = scored_row(reaction, _engine_report(reaction, answer, rankings[headline]), elapsed_ms)
    else:
        detail = answer.detail or "no predictions for this reaction"
        row = error_row(reaction, f"{answer.status}: {detail}", round(elapsed_ms, 3))
    row["answer_status"] = answer.status
    row["answer_detail"] = answer.detail or None
    row["raw_outputs"] = [list(lst) for lst in answer.lists]
    row["conventions"] = {name: _convention_cell(r, reaction, keys) for name, r in rankings.items()}
    return row


class OutsideChunk:
    """Chunk function of an outside run: the system answers a chunk, each answer a row."""

    def __init__(self, system: OutsideSystem, identity: str, headline: str) -> None:
        self.system = system
        self.keys = OutputKeys(identity)
        self.headline = headline

    def __call__(self, items: list[BenchReaction]) -> list[dict[str, Any]]:
        start = time.perf_counter()
        answers = self.system.answer(items)
        each = (time.perf_counter() - start) * 1000 / max(len(items), 1)
        return [
            outside_row(r, a, self.keys, self.headline, each)
            for r, a in zip(items, answers, strict=True)
        ]


def outside_conventions(
    rows: Iterable[Mapping[str, Any]], config: BenchmarkConfig, system: OutsideSystem
) -> dict[str, Any]:
    """The report's ``metrics.conventions`` of an outside run: the system, the answers'
    statuses (and a predictions file's keys no corpus reaction asked for) and every
    convention's scores over the valid reactions (:func:`score_rows`)."""
    kept: list[dict[str, Any]] = []
    statuses = {"answered": 0, "missing": 0, "error": 0}
    for row in rows:
        if row["input_status"] != "valid":
            continue
        if isinstance(system, PredictionsSystem):  # resumed rows too, not just this process's
            system.mark_used(row["reaction_id"], row["reactants_canonical"])
        statuses[row["answer_status"]] += 1
        kept.append(
            {"input_status": "valid", "split": row["split"], "conventions": row["conventions"]}
        )
    unmatched = system.unmatched() if isinstance(system, PredictionsSystem) else 0
    return {
        "system": system.describe(),
        "headline": config.convention,
        "output_identity": config.output_identity,
        "answers": {**statuses, "unmatched_prediction_keys": unmatched},
        "scores": score_rows(kept, config.seed),
    }
