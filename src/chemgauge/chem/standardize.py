"""Standardization for the ``parity`` lens: fragment parent, normalize, reionize, uncharge,
canonical tautomer. The tautomer enumeration cap is a recorded setting, because RDKit's worst
case runs for seconds on some molecules.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rdkit import Chem
from rdkit.Chem.MolStandardize import rdMolStandardize

from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles

__all__ = ["StandardizeSettings", "standardize_mol", "try_parity_smiles"]


@dataclass(frozen=True, slots=True)
class StandardizeSettings:
    """Caps on RDKit's tautomer search; recorded in every report that uses ``parity``."""

    max_tautomers: int = 1000
    max_transforms: int = 1000


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


def standardize_mol(mol: Chem.Mol, settings: StandardizeSettings = DEFAULT_SETTINGS) -> Chem.Mol:
    """Apply the parity pipeline in its documented order and return the new molecule."""
    uncharger, enumerator = _tools(settings)
    parent = rdMolStandardize.FragmentParent(mol)
    normalized = rdMolStandardize.Normalize(parent)
    reionized = rdMolStandardize.Reionize(normalized)
    neutral = uncharger.uncharge(reionized)  # type: ignore[attr-defined]
    result: Chem.Mol = enumerator.Canonicalize(neutral)  # type: ignore[attr-defined]
    return result


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
