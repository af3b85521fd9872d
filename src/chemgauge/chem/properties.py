"""Structure-level descriptors and 3D geometries that property calculators start from.

Geometries are deterministic for a given seed: ETKDGv3 embedding on one thread, then a force
field (MMFF94 where it has parameters, else UFF) so quantum-chemistry single points start from
a sensible structure. The method actually used is recorded with the geometry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rdkit import Chem
from rdkit.Chem import rdDistGeom, rdForceFieldHelpers

from chemgauge.chem.smiles import parse_smiles
from chemgauge.errors import SmilesError

__all__ = ["Geometry", "StructureCounts", "embed_geometry", "structure_counts"]


@dataclass(frozen=True, slots=True)
class StructureCounts:
    """Atom-level counts of a molecule (hydrogens implicit unless written)."""

    heavy_atoms: int
    heteroatoms: int
    charged_atoms: int


def structure_counts(smiles: str) -> StructureCounts:
    """Heavy atoms, heteroatoms (not C or H) and formally charged atoms of a SMILES."""
    mol = parse_smiles(smiles)
    atoms = list(mol.GetAtoms())
    return StructureCounts(
        heavy_atoms=sum(1 for a in atoms if a.GetAtomicNum() > 1),
        heteroatoms=sum(1 for a in atoms if a.GetAtomicNum() not in (1, 6)),
        charged_atoms=sum(1 for a in atoms if a.GetFormalCharge() != 0),
    )


@dataclass(frozen=True, slots=True)
class Geometry:
    """One 3D structure with explicit hydrogens; positions in angstrom."""

    atomic_numbers: tuple[int, ...]
    positions: tuple[tuple[float, float, float], ...]
    charge: int
    unpaired_electrons: int
    method: str


def embed_geometry(smiles: str, *, seed: int = 0xC0FFEE, max_iterations: int = 2000) -> Geometry:
    """Embed a molecule in 3D and relax it with a force field; raises :class:`SmilesError`."""
    mol = Chem.AddHs(parse_smiles(smiles))
    params: Any = rdDistGeom.ETKDGv3()
    params.randomSeed = seed
    params.numThreads = 1
    if rdDistGeom.EmbedMolecule(mol, params) != 0:
        params.useRandomCoords = True
        if rdDistGeom.EmbedMolecule(mol, params) != 0:
            raise SmilesError(smiles, "3D embedding failed")
    if rdForceFieldHelpers.MMFFHasAllMoleculeParams(mol):
        rdForceFieldHelpers.MMFFOptimizeMolecule(mol, maxIters=max_iterations)
        method = "MMFF94"
    elif rdForceFieldHelpers.UFFHasAllMoleculeParams(mol):
        rdForceFieldHelpers.UFFOptimizeMolecule(mol, maxIters=max_iterations)
        method = "UFF"
    else:
        method = "ETKDGv3"
    conf = mol.GetConformer()
    positions = tuple(
        (float(p.x), float(p.y), float(p.z))
        for p in (conf.GetAtomPosition(i) for i in range(mol.GetNumAtoms()))
    )
    return Geometry(
        atomic_numbers=tuple(a.GetAtomicNum() for a in mol.GetAtoms()),
        positions=positions,
        charge=Chem.GetFormalCharge(mol),
        unpaired_electrons=sum(a.GetNumRadicalElectrons() for a in mol.GetAtoms()),
        method=method,
    )
