"""Standardization for the ``parity`` lens: fragment parent, normalize, reionize, uncharge,
canonical tautomer. The tautomer enumeration caps are recorded settings, because RDKit's worst
case runs for seconds on some molecules and for minutes on large ones.

Each enumerated tautomer costs about (atoms)^2 (every transform is tried at every site and
each candidate is written as SMILES), so besides the fixed cap on tautomers a work budget
shrinks the cap on large molecules: a 2,000-atom polyamide is capped at 2 tautomers instead
of running 1,000 (minutes). The cap a molecule gets depends only on
its heavy-atom count, so keys stay deterministic; :func:`parity_outcome` reports it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rdkit import Chem
from rdkit.Chem.MolStandardize import rdMolStandardize

from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles

__all__ = [
    "ParityOutcome",
    "StandardizeSettings",
    "parity_outcome",
    "standardize_mol",
    "tautomer_cap",
    "try_parity_smiles",
]


@dataclass(frozen=True, slots=True)
class StandardizeSettings:
    """Caps on RDKit's tautomer search; recorded in every report that uses ``parity``."""

    max_tautomers: int = 1000
    max_transforms: int = 1000
    # tautomers x heavy atoms^2: 1,000 tautomers at 100 heavy atoms, drug-like sizes unchanged
    tautomer_work_budget: int = 10_000_000


def tautomer_cap(mol: Chem.Mol, settings: StandardizeSettings) -> int:
    """How many tautomers the search may enumerate for this molecule (deterministic)."""
    atoms = max(1, mol.GetNumHeavyAtoms())
    return max(1, min(settings.max_tautomers, settings.tautomer_work_budget // atoms**2))


DEFAULT_SETTINGS = StandardizeSettings()
_local = threading.local()


def _tools(settings: StandardizeSettings) -> tuple[object, object]:
    cache: dict[StandardizeSettings, tuple[object, object]] = getattr(_local, "tools", {})
    if settings not in cache:
        params = rdMolStandardize.CleanupParameters()
        # The stubs mistype these attributes; they are plain ints at runtime.
        setattr(params, "maxTautomers", settings.max_tautomers)  # noqa: B010
        setattr(params, "maxTransforms", settings.max_transforms)  # noqa: B010
        cache[settings] = (
            rdMolStandardize.Uncharger(),
            rdMolStandardize.TautomerEnumerator(params),
        )
        _local.tools = cache
    return cache[settings]


def _neutral_parent(mol: Chem.Mol, settings: StandardizeSettings) -> Chem.Mol:
    uncharger, _ = _tools(settings)
    parent = rdMolStandardize.FragmentParent(mol)
    normalized = rdMolStandardize.Normalize(parent)
    reionized = rdMolStandardize.Reionize(normalized)
    neutral: Chem.Mol = uncharger.uncharge(reionized)  # type: ignore[attr-defined]
    return neutral


def _enumerator(neutral: Chem.Mol, settings: StandardizeSettings) -> tuple[object, int]:
    """The thread's enumerator with its cap set for this molecule, and that cap."""
    _, enumerator = _tools(settings)
    cap = tautomer_cap(neutral, settings)
    enumerator.SetMaxTautomers(cap)  # type: ignore[attr-defined]
    return enumerator, cap


def standardize_mol(mol: Chem.Mol, settings: StandardizeSettings = DEFAULT_SETTINGS) -> Chem.Mol:
    """Apply the parity pipeline in its documented order and return the new molecule."""
    neutral = _neutral_parent(mol, settings)
    enumerator, _ = _enumerator(neutral, settings)
    result: Chem.Mol = enumerator.Canonicalize(neutral)  # type: ignore[attr-defined]
    return result


@dataclass(frozen=True, slots=True)
class ParityOutcome:
    """A parity key with how its tautomer search ended (for reports and diagnostics)."""

    key: str | None
    tautomer_cap: int
    search_status: str  # RDKit's status: Completed, MaxTautomersReached, ... or "not_run"


def parity_outcome(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> ParityOutcome:
    """The parity key plus the per-molecule tautomer cap and whether the search hit it.

    Runs the enumeration once more than :func:`try_parity_smiles`; meant for diagnostics.
    """
    mol = try_parse_smiles(smiles)
    if mol is None:
        return ParityOutcome(None, 0, "not_run")
    clear_atom_maps(mol)
    try:
        neutral = _neutral_parent(mol, settings)
        enumerator, cap = _enumerator(neutral, settings)
        status = str(enumerator.Enumerate(neutral).status)  # type: ignore[attr-defined]
    except Exception:
        return ParityOutcome(None, 0, "failed")
    return ParityOutcome(try_parity_smiles(smiles, settings), cap, status)


def try_parity_smiles(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> str | None:
    """Canonical SMILES after the parity pipeline; ``None`` when either step fails (fail closed)."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    clear_atom_maps(mol)
    try:
        return mol_to_canonical(standardize_mol(mol, settings))
    except Exception:  # RDKit raises assorted errors on exotic input; never credit a match
        return None
