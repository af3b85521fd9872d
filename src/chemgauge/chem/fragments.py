"""Masking and re-attaching a terminal group: the chemistry behind masked-completion tasks.

A *masked* molecule is its scaffold with the removed group replaced by one dummy atom carrying
atom map 1 (``[*:1]``); a *group* is written the same way, with ``[*:1]`` where the scaffold
was. Re-attaching zips the two dummies into one single bond. Both strings are canonical RDKit
SMILES that keep the dummy's map number, so they are compared as text.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from rdkit import Chem

from chemgauge.chem.smiles import describe_parse_failure, mol_to_canonical, try_parse_smiles
from chemgauge.errors import SmilesError

__all__ = [
    "MASK_LABEL",
    "MASK_TOKEN",
    "MaskSite",
    "attach_group",
    "attachment_element",
    "canonical_fragment",
    "completes_scaffold",
    "find_mask_sites",
    "fragment_heavy_atoms",
    "scaffold_query",
]

MASK_LABEL = 1
MASK_TOKEN = "[*:1]"


@dataclass(frozen=True, slots=True)
class MaskSite:
    """One terminal group that can be masked, found in a source molecule.

    Attributes:
        masked_smiles: canonical scaffold SMILES with ``[*:1]`` where the group was.
        group: canonical group SMILES with ``[*:1]`` where the scaffold was.
        masked_atoms: indices of the group's atoms in the source molecule (as parsed).
        attachment_atom: index of the scaffold atom bonded to the group, in the source.
        group_attachment_element: element symbol of the group atom bonded to the scaffold.
        scaffold_attachment_element: element symbol of the scaffold atom bonded to the group.
        group_heavy_atoms: heavy atoms in the group.
        scaffold_heavy_atoms: heavy atoms in the scaffold (dummy excluded).
    """

    masked_smiles: str
    group: str
    masked_atoms: tuple[int, ...]
    attachment_atom: int
    group_attachment_element: str
    scaffold_attachment_element: str
    group_heavy_atoms: int
    scaffold_heavy_atoms: int


def _parse_fragment(smiles: str) -> Chem.Mol:
    """Parse a SMILES holding exactly one ``[*:1]`` dummy; raises :class:`SmilesError`."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        raise SmilesError(smiles, describe_parse_failure(smiles))
    dummies = [a for a in mol.GetAtoms() if a.GetAtomicNum() == 0]
    if len(dummies) != 1 or dummies[0].GetAtomMapNum() != MASK_LABEL:
        raise SmilesError(smiles, f"expected exactly one {MASK_TOKEN} attachment point")
    if dummies[0].GetDegree() != 1:
        raise SmilesError(smiles, f"{MASK_TOKEN} must have exactly one neighbour")
    return mol


def canonical_fragment(smiles: str) -> str:
    """Canonical SMILES of a scaffold or group with one ``[*:1]`` (map number kept)."""
    return mol_to_canonical(_parse_fragment(smiles))


def attachment_element(smiles: str) -> str:
    """Element symbol of the atom bonded to a fragment's ``[*:1]``."""
    dummy = next(a for a in _parse_fragment(smiles).GetAtoms() if a.GetAtomicNum() == 0)
    return str(dummy.GetNeighbors()[0].GetSymbol())


def fragment_heavy_atoms(smiles: str) -> int:
    """Heavy atoms of a fragment, not counting its ``[*:1]`` dummy."""
    mol = _parse_fragment(smiles)
    return sum(1 for a in mol.GetAtoms() if a.GetAtomicNum() > 1)


@functools.lru_cache(maxsize=1 << 16)
def attach_group(masked_smiles: str, group: str) -> str | None:
    """Canonical SMILES of the scaffold completed with the group; ``None`` if not valid.

    Valid means RDKit sanitizes the zipped molecule (valences, charges, aromaticity).
    Memoized per process (a pure function of two strings; a build completes each scaffold
    with its whole pool once per candidate it replays, so most calls repeat).
    """
    scaffold = _parse_fragment(masked_smiles)
    piece = _parse_fragment(group)
    try:
        zipped = Chem.molzip(scaffold, piece)
        Chem.SanitizeMol(zipped)
    except Exception:  # RDKit raises several unrelated types for an impossible valence
        return None
    atom = zipped.GetAtomWithIdx  # by index: cheaper than RDKit's atom sequence
    if any(atom(i).GetAtomicNum() == 0 for i in range(zipped.GetNumAtoms())):
        return None
    # Round-trip through text so the key matches what parsing the completed SMILES gives.
    mol = try_parse_smiles(mol_to_canonical(zipped))
    return None if mol is None else mol_to_canonical(mol)


def scaffold_query(masked_smiles: str) -> Chem.Mol:
    """The masked scaffold as a substructure query whose ``[*:1]`` matches any atom."""
    params: Any = Chem.AdjustQueryParameters.NoAdjustments()
    params.makeDummiesQueries = True
    return Chem.AdjustQueryProperties(_parse_fragment(masked_smiles), params)


def completes_scaffold(masked_smiles: str, smiles: str) -> bool:
    """True iff ``smiles`` parses and contains the scaffold with its dummy as any atom."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return False
    return bool(mol.HasSubstructMatch(scaffold_query(masked_smiles), useChirality=False))


def _heavy(mol: Chem.Mol) -> int:
    """Atoms heavier than hydrogen (the ``[*:1]`` dummy, atomic number 0, is not one)."""
    return int(mol.GetNumHeavyAtoms())


def find_mask_sites(
    smiles: str, groups: Collection[str], *, min_scaffold_heavy_atoms: int = 4
) -> list[MaskSite]:
    """Every acyclic single bond that splits off a group from ``groups`` (canonical fragments).

    The group is the side found in ``groups``; when both sides are, the smaller one. A site is
    kept only when re-attaching the group gives back the source exactly (so stereo survives)
    and the scaffold keeps at least ``min_scaffold_heavy_atoms`` heavy atoms.
    """
    mol = try_parse_smiles(smiles)
    if mol is None:
        raise SmilesError(smiles, describe_parse_failure(smiles))
    source_key = mol_to_canonical(mol)
    sites: list[MaskSite] = []
    for bond in mol.GetBonds():
        if bond.GetBondType() != Chem.BondType.SINGLE or bond.IsInRing():
            continue
        begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        cut = Chem.FragmentOnBonds(
            mol, [bond.GetIdx()], addDummies=True, dummyLabels=[(MASK_LABEL, MASK_LABEL)]
        )
        atom_at = cut.GetAtomWithIdx  # by index: cheaper than RDKit's atom sequence
        for index in range(cut.GetNumAtoms()):
            atom = atom_at(index)
            if atom.GetAtomicNum() == 0:
                atom.SetIsotope(0)
                atom.SetAtomMapNum(MASK_LABEL)
        atom_sets: list[tuple[int, ...]] = []
        pieces = Chem.GetMolFrags(
            cut, asMols=True, sanitizeFrags=False, fragsMolAtomMapping=atom_sets
        )
        if len(pieces) != 2:
            continue
        keys = [mol_to_canonical(p) for p in pieces]
        order = sorted(range(2), key=lambda i: (_heavy(pieces[i]), keys[i]))
        chosen = next((i for i in order if keys[i] in groups), None)
        if chosen is None:
            continue
        other = 1 - chosen
        group_atoms = tuple(sorted(i for i in atom_sets[chosen] if i < mol.GetNumAtoms()))
        scaffold_heavy = _heavy(pieces[other])
        if scaffold_heavy < min_scaffold_heavy_atoms or scaffold_heavy <= _heavy(pieces[chosen]):
            continue
        if attach_group(keys[other], keys[chosen]) != source_key:
            continue
        group_atom, scaffold_atom = (begin, end) if begin in group_atoms else (end, begin)
        sites.append(
            MaskSite(
                masked_smiles=keys[other],
                group=keys[chosen],
                masked_atoms=group_atoms,
                attachment_atom=scaffold_atom,
                group_attachment_element=mol.GetAtomWithIdx(group_atom).GetSymbol(),
                scaffold_attachment_element=mol.GetAtomWithIdx(scaffold_atom).GetSymbol(),
                group_heavy_atoms=_heavy(pieces[chosen]),
                scaffold_heavy_atoms=scaffold_heavy,
            )
        )
    return sites
