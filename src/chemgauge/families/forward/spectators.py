"""Near-duplicate keys of reactions: spectators removed, stereo ignored.

Two reactions are near-duplicates when they differ only by spectators and stereo. A
spectator is a molecule on both sides of the reaction (water added to reactants and products),
or a molecule found in at least :data:`SPECTATOR_SHARE` of the corpus's reactions and in at
least :data:`SPECTATOR_MIN_REACTIONS` of them (water, salts, common solvents in a corpus that
lists them; the floor keeps a small corpus from calling every reactant frequent). What remains
is flattened by the ``stereo_ignored`` structure flattening and sorted; a side with nothing
left has no key (two empty sides are never a match).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.chem import try_flatten_stereo

__all__ = [
    "SPECTATOR_MIN_REACTIONS",
    "SPECTATOR_SHARE",
    "Spectators",
    "molecules_of",
]

SPECTATOR_SHARE = 0.02
SPECTATOR_MIN_REACTIONS = 10
MAX_LISTED = 20


@functools.lru_cache(maxsize=200_000)
def _flat(smiles: str) -> str:
    """Stereo-flattened SMILES (the exact string where flattening is unsupported)."""
    return try_flatten_stereo(smiles) or smiles


def molecules_of(reactants: Iterable[str], accepted: Iterable[Iterable[str]]) -> set[str]:
    """The distinct molecules of one reaction, either side."""
    return {*reactants, *(m for products in accepted for m in products)}


@dataclass(frozen=True)
class Spectators:
    """The corpus's frequent molecules and the near-duplicate keys they imply."""

    frequent: frozenset[str]
    reactions: int
    counts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of_counts(cls, counts: Mapping[str, int], reactions: int) -> Spectators:
        """Spectators of a corpus from per-molecule reaction counts."""
        floor = max(SPECTATOR_MIN_REACTIONS, math.ceil(SPECTATOR_SHARE * reactions))
        found = sorted(
            ((m, n) for m, n in counts.items() if n >= floor), key=lambda x: (-x[1], x[0])
        )
        return cls(frozenset(m for m, _ in found), reactions, tuple(found))

    @classmethod
    def of_reactions(
        cls, reactions: Iterable[tuple[Sequence[str], Sequence[Sequence[str]]]]
    ) -> Spectators:
        """Spectators of ``(reactants, accepted products)`` pairs."""
        counts: Counter[str] = Counter()
        n = 0
        for reactants, accepted in reactions:
            n += 1
            counts.update(molecules_of(reactants, accepted))
        return cls.of_counts(counts, n)

    def _drop(self, reactants: Sequence[str], accepted: Sequence[Sequence[str]]) -> set[str]:
        both = set(reactants) & {m for products in accepted for m in products}
        return both | self.frequent

    def reactant_key(
        self, reactants: Sequence[str], accepted: Sequence[Sequence[str]]
    ) -> str | None:
        """The near-duplicate key of the reactant set (``None`` when nothing is left)."""
        drop = self._drop(reactants, accepted)
        kept = sorted(_flat(m) for m in reactants if m not in drop)
        return ".".join(kept) if kept else None

    def product_keys(
        self, reactants: Sequence[str], accepted: Sequence[Sequence[str]]
    ) -> list[str]:
        """The near-duplicate key of every accepted product multiset that keeps a molecule."""
        drop = self._drop(reactants, accepted)
        keys = set()
        for products in accepted:
            kept = sorted(_flat(m) for m in products if m not in drop)
            if kept:
                keys.add(".".join(kept))
        return sorted(keys)

    def to_dict(self) -> dict[str, Any]:
        """The rule and the frequent molecules found, for the report."""
        return {
            "rule": (
                "a spectator is a molecule on both sides of a reaction, or in at least "
                f"{SPECTATOR_SHARE:.0%} of the corpus's reactions and at least "
                f"{SPECTATOR_MIN_REACTIONS} of them; spectators are removed and stereo is "
                "ignored before comparing"
            ),
            "share_threshold": SPECTATOR_SHARE,
            "min_reactions": SPECTATOR_MIN_REACTIONS,
            "reactions": self.reactions,
            "frequent_molecules": [
                {"smiles": m, "reactions": n} for m, n in self.counts[:MAX_LISTED]
            ],
            "frequent_molecules_total": len(self.counts),
        }
