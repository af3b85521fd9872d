"""Does a row's ``mapped_reaction`` describe that row's own reaction?

Template extraction reads only ``mapped_reaction``; the benchmark reads only ``reactants`` and
``accepted_products``. Nothing ties the two together unless it is checked, so a train row could
carry a held-out reaction's mapped text under unrelated reactants and give every held-out
template a train source. The check: the mapped reaction, atom maps cleared and every component
canonicalized (canonical isomeric SMILES, sorted, multiplicity kept), must have the row's
reactants on its left (alone, or with its reagents) and one of the row's accepted product
multisets on its right. A row that fails is excluded from extraction and counted by reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from chemgauge.chem import try_canonical_multiset
from chemgauge.families.forward.corpus import BenchReaction

__all__ = ["MAPPING_MISMATCH_REASONS", "mapping_mismatch", "mismatch_detail"]

MAPPING_MISMATCH_REASONS = (
    "mapped_reaction_unparsable",  # not reactants>reagents>products, or a side does not parse
    "mapped_reactants_differ",  # unmapped left side is not the row's reactants
    "mapped_products_differ",  # unmapped right side is none of the row's accepted products
)


def _side(text: str) -> tuple[str, ...] | None:
    return try_canonical_multiset(text) if text.strip() else ()


def mapping_mismatch(reaction: BenchReaction) -> str | None:
    """The reason ``reaction.mapped_reaction`` is not this row's reaction, or ``None`` when it
    is (or when there is no mapped reaction: nothing to extract, nothing to check)."""
    text = reaction.mapped_reaction
    if not text:
        return None
    parts = text.strip().split(maxsplit=1)[0].split(">") if text.strip() else []
    if len(parts) != 3 or not parts[0].strip() or not parts[2].strip():
        return MAPPING_MISMATCH_REASONS[0]
    left, middle, right = (_side(part) for part in parts)
    if left is None or middle is None or right is None:
        return MAPPING_MISMATCH_REASONS[0]
    reactants = reaction.reactants_canonical
    if left != reactants and tuple(sorted(left + middle)) != reactants:
        return MAPPING_MISMATCH_REASONS[1]
    if right not in reaction.accepted_products_canonical:
        return MAPPING_MISMATCH_REASONS[2]
    return None


def mismatch_detail(reaction: BenchReaction, reason: str) -> str:
    """One line naming what differs, for the bounded example lists."""
    accepted: Sequence[tuple[str, ...]] = reaction.accepted_products_canonical
    return (
        f"{reason}: row reactants {'.'.join(reaction.reactants_canonical)!r}, accepted "
        f"{' | '.join('.'.join(p) for p in accepted)!r}"
    )[:300]
