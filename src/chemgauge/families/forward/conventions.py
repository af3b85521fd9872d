"""Named ranking conventions: how one system's raw ranked outputs become one ranked list.

A forward system answers a reaction with one or more ranked lists of raw product SMILES
(several when it was run on augmented spellings of the input). The same outputs give
different numbers under different conventions, so each is a named object and reports show
them side by side over the same reactions:

- ``as_given`` (Molecular Transformer's ``score_predictions.py``): the first list as written;
  an invalid output and a repeated product keep their slots.
- ``deduplicated`` (syntheseus for retro): the first list, invalid outputs dropped, each
  product kept at its first spelling.
- ``pooled`` (the Augmented Transformer's ``compare.pl``): every list of the reaction pooled;
  within a list a product counts once and invalid outputs take no position; the i-th counted
  output of a list adds ``1 / (1 + 1e-5 * i)`` to its product (summed in list order, as
  doubles), products ranked by that score, the earliest output breaking exact ties.

Outputs are compared by a key (a sorted tuple of component keys; ``None`` for an invalid
output), computed by the caller once per distinct string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CONVENTIONS",
    "CONVENTION_LINES",
    "HEADLINE_CONVENTION",
    "OutputKey",
    "Ranking",
    "rank_as_given",
    "rank_deduplicated",
    "rank_outputs",
    "rank_pooled",
]

#: A product multiset (sorted component keys) or ``None`` for an invalid output.
OutputKey = tuple[str, ...] | None
KeyOf = Callable[[str], OutputKey]

#: The weight step of the pooled score: ``compare.pl``'s ``1 / (1 + 0.00001 * i)``.
POOL_STEP = 0.00001

#: The convention a report leads with unless the run names another.
HEADLINE_CONVENTION = "deduplicated"


@dataclass(frozen=True, slots=True)
class Ranking:
    """One convention's ranked list for one reaction.

    Attributes:
        convention: the convention's name.
        ranked: product keys by rank; ``None`` is an invalid output keeping its slot
            (``as_given`` only).
        invalid: invalid outputs among those the convention read.
        duplicates: outputs repeating a product already ranked (or, pooled, within a list).
        ties_at: 0-based ranks whose product shares its exact score with the next one
            (``pooled`` only; a tie broken by output order, never by chemistry).
    """

    convention: str
    ranked: tuple[OutputKey, ...]
    invalid: int = 0
    duplicates: int = 0
    ties_at: tuple[int, ...] = ()

    def best_rank(self, accepted: set[tuple[str, ...]]) -> int | None:
        """0-based rank of the first accepted product, ``None`` if none is ranked."""
        for rank, key in enumerate(self.ranked):
            if key is not None and key in accepted:
                return rank
        return None

    def rank_bounds(self, accepted: set[tuple[str, ...]]) -> tuple[int, int] | None:
        """Best and worst 0-based rank of the first accepted product over every order of
        its exact ties (``None`` if none is ranked): how far output order decides it."""
        best = self.best_rank(accepted)
        if best is None:
            return None
        tied = set(self.ties_at)
        low = best
        while low > 0 and (low - 1) in tied:
            low -= 1
        end = best
        while end in tied:
            end += 1
        # the worst order puts every product of the tie that is not accepted first
        missing = sum(1 for key in self.ranked[low : end + 1] if key not in accepted)
        return low, low + missing


def rank_as_given(lists: Sequence[Sequence[str]], key_of: KeyOf) -> Ranking:
    """The first list as written: invalid outputs and repeats keep their slots."""
    outputs = lists[0] if lists else ()
    keys = tuple(key_of(o) for o in outputs)
    seen: set[tuple[str, ...]] = set()
    duplicates = 0
    for key in keys:
        if key is None:
            continue
        if key in seen:
            duplicates += 1
        seen.add(key)
    return Ranking("as_given", keys, sum(k is None for k in keys), duplicates)


def rank_deduplicated(lists: Sequence[Sequence[str]], key_of: KeyOf) -> Ranking:
    """The first list, invalid outputs dropped, each product at its first spelling."""
    outputs = lists[0] if lists else ()
    ranked: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    invalid = duplicates = 0
    for output in outputs:
        key = key_of(output)
        if key is None:
            invalid += 1
        elif key in seen:
            duplicates += 1
        else:
            seen.add(key)
            ranked.append(key)
    return Ranking("deduplicated", tuple(ranked), invalid, duplicates)


def rank_pooled(lists: Sequence[Sequence[str]], key_of: KeyOf) -> Ranking:
    """Every list pooled, weighted by position within its list (see the module doc)."""
    score: dict[tuple[str, ...], float] = {}
    first: dict[tuple[str, ...], tuple[int, int]] = {}
    invalid = duplicates = 0
    for index, outputs in enumerate(lists):
        in_list: set[tuple[str, ...]] = set()
        position = 1
        for output in outputs:
            key = key_of(output)
            if key is None:
                invalid += 1
                continue
            if key in in_list:
                duplicates += 1
                continue
            in_list.add(key)
            if key not in score:
                score[key] = 0.0
                first[key] = (index, position)
            score[key] += 1.0 / (1.0 + POOL_STEP * position)
            position += 1
    ranked = sorted(score, key=lambda k: (-score[k], first[k]))
    ties = tuple(i for i in range(len(ranked) - 1) if score[ranked[i]] == score[ranked[i + 1]])
    return Ranking("pooled", tuple(ranked), invalid, duplicates, ties)


CONVENTIONS: Mapping[str, Callable[[Sequence[Sequence[str]], KeyOf], Ranking]] = {
    "as_given": rank_as_given,
    "deduplicated": rank_deduplicated,
    "pooled": rank_pooled,
}

#: ``chemgauge list`` lines of the conventions.
CONVENTION_LINES = {
    "as_given": "first list as written; invalid and repeated outputs keep their slots "
    "(Molecular Transformer score_predictions.py)",
    "deduplicated": "first list, invalid dropped, first spelling of each product kept "
    "(syntheseus); the headline unless --convention names another",
    "pooled": "all augmented lists pooled, ranked by position-weighted count, earliest "
    "output breaking ties (Augmented Transformer compare.pl)",
}


def rank_outputs(lists: Sequence[Sequence[str]], key_of: KeyOf) -> dict[str, Ranking]:
    """Every convention's ranking of one reaction's lists, by name."""
    return {name: rank(lists, key_of) for name, rank in CONVENTIONS.items()}
