"""Frozen chemistry value types whose equality is their canonical key under a named policy."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rdkit import rdBase

from chemgauge.chem.smiles import canonical_multiset, canonical_smiles

__all__ = ["RDKIT_VERSION", "Molecule", "MoleculeBag"]

RDKIT_VERSION: str = rdBase.rdkitVersion


@dataclass(frozen=True, slots=True, order=True)
class Molecule:
    """One structure, identified by its canonical isomeric SMILES (atom maps removed)."""

    smiles: str

    @classmethod
    def from_smiles(cls, smiles: str) -> Molecule:
        """Canonicalize and wrap; raises :class:`chemgauge.errors.SmilesError` if unparsable."""
        return cls(canonical_smiles(smiles))


@dataclass(frozen=True, slots=True, order=True)
class MoleculeBag:
    """A multiset of canonical components: order-free, multiplicity kept (2 H2O != 1 H2O)."""

    components: tuple[str, ...]

    def __post_init__(self) -> None:
        if list(self.components) != sorted(self.components):
            object.__setattr__(self, "components", tuple(sorted(self.components)))

    @classmethod
    def from_smiles(cls, smiles: str) -> MoleculeBag:
        """Split a dot-separated SMILES into canonical components (raises if unparsable)."""
        return cls(canonical_multiset(smiles))

    @classmethod
    def from_parts(cls, parts: list[str] | tuple[str, ...]) -> MoleculeBag:
        """Canonicalize each SMILES (each may itself hold several components) and pool them."""
        pooled: list[str] = []
        for part in parts:
            pooled.extend(canonical_multiset(part))
        return cls(tuple(pooled))

    def counts(self) -> Counter[str]:
        """Multiplicity of each component."""
        return Counter(self.components)

    def to_smiles(self) -> str:
        """Dot-joined canonical SMILES in sorted order."""
        return ".".join(self.components)

    def __len__(self) -> int:
        return len(self.components)
