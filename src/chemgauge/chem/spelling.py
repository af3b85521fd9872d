"""Alternative spellings of a structure: random valid SMILES and guaranteed-invalid corruptions.

Used to build test and benchmark outputs whose duplicates differ only in spelling, so that a
scorer comparing text instead of structure is caught.
"""

from __future__ import annotations

from rdkit import Chem

from chemgauge.chem.smiles import clear_atom_maps, parse_smiles, try_parse_smiles
from chemgauge.chem.stereo import flatten_mol_stereo

__all__ = ["Speller", "corrupt_smiles", "random_spellings", "stereo_free_spelling"]


def random_spellings(smiles: str, n: int, seed: int) -> list[str]:
    """``n`` random (non-canonical) SMILES of one molecule, reproducible from ``seed``.

    Atom maps are dropped; raises :class:`chemgauge.errors.SmilesError` if unparsable.
    """
    mol = clear_atom_maps(parse_smiles(smiles))
    return list(Chem.MolToRandomSmilesVect(mol, n, randomSeed=seed % (2**31)))


class Speller:
    """:func:`random_spellings` with parsed molecules memoized by input string."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._mols: dict[str, Chem.Mol] = {}
        self._max = max_entries

    def spell(self, smiles: str, seed: int) -> str:
        """One random SMILES of ``smiles`` (raises SmilesError if unparsable)."""
        mol = self._mols.get(smiles)
        if mol is None:
            mol = clear_atom_maps(parse_smiles(smiles))
            if len(self._mols) >= self._max:
                self._mols.clear()
            self._mols[smiles] = mol
        return str(Chem.MolToRandomSmilesVect(mol, 1, randomSeed=seed % (2**31))[0])


def stereo_free_spelling(smiles: str) -> str | None:
    """A SMILES of the structure with every stereo mark cleared; ``None`` if it had none."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    clear_atom_maps(mol)
    flat = Chem.MolToSmiles(flatten_mol_stereo(mol))
    return None if flat == Chem.MolToSmiles(mol) else str(flat)


_CORRUPTIONS = ("ring", "paren", "valence")


def corrupt_smiles(smiles: str, variant: int = 0) -> str:
    """A string RDKit rejects, made from ``smiles`` (an unclosed ring, bracket or bad valence).

    The result is checked: if a corruption happens to stay parsable the next one is tried.
    """
    for i in range(len(_CORRUPTIONS)):
        kind = _CORRUPTIONS[(variant + i) % len(_CORRUPTIONS)]
        if kind == "ring":
            candidate = smiles + "%99"
        elif kind == "paren":
            candidate = smiles + "("
        else:
            candidate = "C(C)(C)(C)(C)C." + smiles
        if try_parse_smiles(candidate) is None:
            return candidate
    return smiles + ")("  # pragma: no cover - ')(' after a molecule never parses
