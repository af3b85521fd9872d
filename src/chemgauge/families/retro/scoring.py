"""Per-target scoring: raw ranked outputs in, one row out, every convention derived from it.

Conventions (how a raw ranked list becomes ranks):

* ``raw_slots`` (Molecular Transformer ``score_predictions.py``, rxn-metrics): every raw
  output keeps its slot; an invalid output is a miss at its rank; duplicates are not removed.
* ``syntheseus``: invalid outputs are dropped and do not hold a rank; duplicates (same
  reactant multiset under ``exact``) are removed keeping the first; ranks are positions in
  what remains. Correctness under any matcher is judged on that same list, as syntheseus's
  stereo-relaxed mode does. This is syntheseus ``eval-single-step`` with its default
  ``skip_repeats=True``.
* ``syntheseus_keep_repeats``: syntheseus with ``skip_repeats=False``: invalid outputs are
  dropped and do not hold a rank, every valid output keeps a rank, repeats included (a
  repeat of a correct answer never counts twice: the best rank is the first correct one).

A row stores best ranks (0-based, ``None`` = miss) per convention and matcher; every
aggregate is a function of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.chem.limits import pinned_limits
from chemgauge.chem.reactant_sets import ReactantSetComparison, ReactantSetScorer
from chemgauge.families.retro.divergences import applying_divergences
from chemgauge.families.retro.syntheseus_verdict import judge

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTIONS",
    "ScoreSettings",
    "ScoreTask",
    "convention_ranks",
    "score_chunk",
    "score_target",
]

CONVENTIONS: tuple[str, ...] = ("syntheseus", "raw_slots", "syntheseus_keep_repeats")
#: Conventions a run derives unless told otherwise.
DEFAULT_CONVENTIONS: tuple[str, ...] = ("syntheseus", "raw_slots")

#: Forward model for round trips: reactant SMILES in, ranked product SMILES multisets out.
ForwardFunction = Callable[[list[str]], list[list[str]]]


@dataclass(frozen=True, slots=True)
class ScoreSettings:
    """What to compute per target (picklable; part of the run's config hash)."""

    matchers: tuple[str, ...] = ("exact", "stereo_ignored")
    conventions: tuple[str, ...] = DEFAULT_CONVENTIONS
    round_trip_model: str | None = None
    round_trip_max_rank: int = 10
    round_trip_num_results: int = 1
    #: syntheseus's own verdict (:mod:`~chemgauge.families.retro.syntheseus_verdict`): its
    #: ``skip_repeats`` and ``include_results_modulo_stereo``.
    syntheseus_skip_repeats: bool = True
    syntheseus_stereo: bool = False


@dataclass(frozen=True, slots=True)
class ScoreTask:
    """One target's data and its model outputs."""

    target: dict[str, Any]
    outputs: tuple[str, ...]
    returned: int
    status: str | None = None


def convention_ranks(comparison: ReactantSetComparison, convention: str) -> list[int | None]:
    """Per raw rank, the rank that output holds under a convention (``None``: holds none)."""
    if convention == "raw_slots":
        return list(range(len(comparison.valid)))
    ranks: list[int | None] = []
    position = 0
    if convention == "syntheseus":
        for rank, (valid, first) in enumerate(
            zip(comparison.valid, comparison.first_seen, strict=True)
        ):
            if valid and first == rank:
                ranks.append(position)
                position += 1
            else:
                ranks.append(None)
        return ranks
    if convention == "syntheseus_keep_repeats":
        for valid in comparison.valid:
            if valid:
                ranks.append(position)
                position += 1
            else:
                ranks.append(None)
        return ranks
    raise ValueError(f"unknown convention {convention!r}; choose one of {', '.join(CONVENTIONS)}")


def _best(correct: Sequence[bool], ranks: Sequence[int | None]) -> int | None:
    for flag, rank in zip(correct, ranks, strict=True):
        if flag and rank is not None:
            return rank
    return None


_SCORERS: dict[tuple[str, ...], ReactantSetScorer] = {}
_FORWARD: dict[str, ForwardFunction] = {}


def _scorer(matchers: tuple[str, ...]) -> ReactantSetScorer:
    scorer = _SCORERS.get(matchers)
    if scorer is None:
        scorer = _SCORERS[matchers] = ReactantSetScorer(matchers)
    return scorer


def _forward(name: str) -> ForwardFunction:
    fn = _FORWARD.get(name)
    if fn is None:
        from chemgauge.families.retro.roundtrip import build_forward_function

        fn = _FORWARD[name] = build_forward_function(name)
    return fn


def score_target(task: ScoreTask, settings: ScoreSettings) -> dict[str, Any]:
    """The row of one target (no timing fields: rows are byte-reproducible)."""
    outputs = list(task.outputs)
    truth = task.target["reactants"]
    # targets come from the data loaders, which write canonical SMILES
    comparison = _scorer(settings.matchers).compare(
        truth, outputs, task.target["product"], canonical_truth=True
    )
    hits: dict[str, dict[str, int | None]] = {}
    per_convention = {c: convention_ranks(comparison, c) for c in settings.conventions}
    for convention, ranks in per_convention.items():
        hits[convention] = {m: _best(comparison.correct[m], ranks) for m in settings.matchers}
    valid = comparison.valid
    row: dict[str, Any] = {
        **task.target,
        "status": task.status or ("ok" if outputs else "no_outputs"),
        "n_returned": task.returned,
        "n_outputs": len(outputs),
        "n_valid_unique": sum(
            1
            for r, (v, f) in enumerate(zip(valid, comparison.first_seen, strict=True))
            if v and f == r
        ),
        "invalid_ranks": [r for r, v in enumerate(valid) if not v],
        "invalid_reasons": list(comparison.invalid_reasons),
        "duplicate_ranks": [
            r for r, f in enumerate(comparison.first_seen) if f is not None and f != r
        ],
        "product_in_reactants_ranks": list(comparison.product_in_outputs),
        "hits": hits,
        "unsupported": {m: list(comparison.unsupported[m]) for m in settings.matchers},
        "truth_unsupported": sorted(
            m for m in settings.matchers if comparison.truth_unsupported[m]
        ),
    }
    verdict = judge(
        task.target.get("syntheseus_reactants"),
        truth,
        outputs,
        comparison,
        skip_repeats=settings.syntheseus_skip_repeats,
        stereo=settings.syntheseus_stereo,
    )
    row["syntheseus"] = None if verdict is None else verdict.to_dict(settings.syntheseus_stereo)
    row["syntheseus_divergences"] = applying_divergences(row, outputs, settings)
    if settings.round_trip_model is not None:
        row["round_trip"] = _round_trip(task, comparison, settings)
    return row


def _round_trip(
    task: ScoreTask, comparison: ReactantSetComparison, settings: ScoreSettings
) -> dict[str, Any]:
    """Re-predict the product from the first proposals (syntheseus convention list)."""
    assert settings.round_trip_model is not None
    ranks = convention_ranks(comparison, "syntheseus")
    proposals = [
        task.outputs[raw]
        for raw, rank in enumerate(ranks)
        if rank is not None and rank < settings.round_trip_max_rank
    ]
    forward = _forward(settings.round_trip_model)
    product = task.target["product"]
    flags: list[bool] = []
    no_candidates = 0
    for proposal in proposals:
        candidates = forward([proposal])[0] if proposal else []
        if not candidates:
            no_candidates += 1
        top = candidates[: settings.round_trip_num_results]
        flags.append(any(product in candidate.split(".") for candidate in top))
    first = next((i for i, flag in enumerate(flags) if flag), None)
    return {
        "checked": len(flags),
        "round_trips": sum(flags),
        "first_rank": first,
        "no_candidates": no_candidates,
    }


def score_chunk(items: list[tuple[ScoreTask, ScoreSettings]]) -> list[dict[str, Any]]:
    """Executor entry point (module level so it pickles): rows in input order."""
    with pinned_limits():
        return [score_target(task, settings) for task, settings in items]
