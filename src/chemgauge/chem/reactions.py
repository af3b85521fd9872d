"""Reaction SMILES: split ``reactants>reagents>products``; canonicalize each side as a multiset."""

from __future__ import annotations

from dataclasses import dataclass

from chemgauge.chem.smiles import canonical_multiset
from chemgauge.errors import SmilesError

__all__ = ["CanonicalReaction", "ReactionParts", "canonicalize_reaction", "split_reaction_smiles"]


@dataclass(frozen=True, slots=True)
class ReactionParts:
    """The three raw text sides of a reaction SMILES; reagents are kept apart, never scored."""

    reactants: str
    reagents: str
    products: str


@dataclass(frozen=True, slots=True)
class CanonicalReaction:
    """Canonical, atom-map-free multisets for each side of a reaction."""

    reactants: tuple[str, ...]
    reagents: tuple[str, ...]
    products: tuple[str, ...]

    def to_smiles(self, *, with_reagents: bool = False) -> str:
        """Reaction SMILES of the canonical sides (reagents omitted unless asked)."""
        middle = ".".join(self.reagents) if with_reagents else ""
        return f"{'.'.join(self.reactants)}>{middle}>{'.'.join(self.products)}"


def split_reaction_smiles(text: str) -> ReactionParts:
    """Split a reaction SMILES into its three sides.

    A CXSMILES extension (``" |f:0.1|"``) after whitespace is ignored; exactly two '>'
    separators are required.
    """
    core = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    parts = core.split(">")
    if len(parts) != 3:
        raise SmilesError(text, "reaction SMILES needs exactly two '>' separators")
    return ReactionParts(reactants=parts[0], reagents=parts[1], products=parts[2])


def _side(text: str, whole: str, label: str) -> tuple[str, ...]:
    if not text:
        return ()
    try:
        return canonical_multiset(text)
    except SmilesError as exc:
        raise SmilesError(whole, f"unparsable {label} ({exc.reason})") from exc


def canonicalize_reaction(text: str) -> CanonicalReaction:
    """Canonicalize every side of a reaction SMILES, stripping atom maps."""
    parts = split_reaction_smiles(text)
    return CanonicalReaction(
        reactants=_side(parts.reactants, text, "reactants"),
        reagents=_side(parts.reagents, text, "reagents"),
        products=_side(parts.products, text, "products"),
    )
