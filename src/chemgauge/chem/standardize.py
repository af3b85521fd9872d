"""Standardization for the ``parity`` lens: stereo cleared, then fragment parent, normalize,
reionize, uncharge (the *neutral parent*), then canonical tautomer, keyed by the InChI
skeleton of the result.

The neutral parent is written as canonical SMILES and read back before the tautomer search:
a parent RDKit cannot read back (uncharging hexafluorophosphate puts an H on a six-valent P)
cannot be standardized, and the search always starts from the canonical spelling, so its
result depends on the molecule only, never on how it was written, even when it is capped.

The tautomer enumeration caps are recorded settings, because RDKit's worst case runs for
seconds on some molecules and for minutes on large ones. Each enumerated tautomer costs about
(atoms)^2, so besides the fixed cap on tautomers a work budget shrinks the cap on large
molecules: a 2,000-atom polyamide is capped at 2 tautomers instead of 1,000 (minutes). The
cap depends only on the heavy-atom count, so keys stay deterministic; a search that hits it
is reported (:class:`TautomerKey`), because a capped canonical form can prove that two
structures are tautomers but never that they are not.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

from rdkit import Chem
from rdkit.Chem.MolStandardize import rdMolStandardize

from chemgauge.chem.inchi import inchi_key_of
from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles
from chemgauge.chem.stereo import flatten_mol_stereo

__all__ = [
    "DEFAULT_SETTINGS",
    "ParityOutcome",
    "StandardizeSettings",
    "TautomerKey",
    "neutral_parent",
    "parity_outcome",
    "standardize_mol",
    "tautomer_cap",
    "tautomer_key",
    "try_neutral_parent",
    "try_parity_key",
    "try_parity_smiles",
]

COMPLETED = "Completed"
_SMILES_KEY_PREFIX = "smiles:"


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


def neutral_parent(mol: Chem.Mol, settings: StandardizeSettings = DEFAULT_SETTINGS) -> Chem.Mol:
    """Stereo cleared, then fragment parent, normalize, reionize, uncharge (may raise)."""
    uncharger, _ = _tools(settings)
    parent = rdMolStandardize.FragmentParent(flatten_mol_stereo(mol))
    normalized = rdMolStandardize.Normalize(parent)
    reionized = rdMolStandardize.Reionize(normalized)
    neutral: Chem.Mol = uncharger.uncharge(reionized)  # type: ignore[attr-defined]
    return neutral


def try_neutral_parent(
    smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS
) -> tuple[str, Chem.Mol] | None:
    """Canonical SMILES of the neutral parent and the molecule read back from it; ``None``
    when the structure cannot be standardized (unparsable, RDKit raises, or unreadable)."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    try:
        text = mol_to_canonical(neutral_parent(clear_atom_maps(mol), settings))
    except Exception:  # RDKit raises assorted errors on exotic input; never credit a match
        return None
    again = try_parse_smiles(text)
    return None if again is None else (text, again)


@dataclass(frozen=True, slots=True)
class TautomerKey:
    """The parity key of a neutral parent and how its tautomer search ended."""

    key: str | None  # InChIKey first block of the canonical tautomer (or its SMILES)
    smiles: str | None  # canonical SMILES of the canonical tautomer
    status: str  # RDKit's: Completed, MaxTautomersReached, MaxTransformsReached; or "failed"
    cap: int

    @property
    def complete(self) -> bool:
        """True when the search enumerated every tautomer (the key is then exact)."""
        return self.status == COMPLETED


def _key_of_standardized(mol: Chem.Mol, smiles: str) -> str:
    """InChI skeleton of a standardized form; its SMILES when it has no InChI (``*``)."""
    full = inchi_key_of(mol)
    return full.split("-")[0] if full is not None else _SMILES_KEY_PREFIX + smiles


@functools.lru_cache(maxsize=8192)
def tautomer_key(neutral: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> TautomerKey:
    """Canonical tautomer of a neutral parent (given as its canonical SMILES) and its key.

    Memoized per process: a structure met again, in another pair or another lens, is
    searched once.
    """
    mol = Chem.MolFromSmiles(neutral)
    if mol is None:
        return TautomerKey(None, None, "failed", 0)
    _, enumerator = _tools(settings)
    cap = tautomer_cap(mol, settings)
    enumerator.SetMaxTautomers(cap)  # type: ignore[attr-defined]
    try:
        result = enumerator.Enumerate(mol)  # type: ignore[attr-defined]
        status = str(result.status)
        canonical = enumerator.PickCanonical(result) if len(result) else mol  # type: ignore[attr-defined]
        smiles = mol_to_canonical(canonical)
        return TautomerKey(_key_of_standardized(canonical, smiles), smiles, status, cap)
    except Exception:
        return TautomerKey(None, None, "failed", cap)


def standardize_mol(mol: Chem.Mol, settings: StandardizeSettings = DEFAULT_SETTINGS) -> Chem.Mol:
    """The standardized form of a molecule (the pipeline in its documented order); raises
    ``ValueError`` when a step fails."""
    neutral = mol_to_canonical(neutral_parent(clear_atom_maps(Chem.Mol(mol)), settings))
    found = tautomer_key(neutral, settings)
    result = None if found.smiles is None else Chem.MolFromSmiles(found.smiles)
    if result is None:
        raise ValueError(f"parity standardization failed for {neutral!r}")
    return result


def _tautomer_key_of(smiles: str, settings: StandardizeSettings) -> TautomerKey | None:
    parent = try_neutral_parent(smiles, settings)
    return None if parent is None else tautomer_key(parent[0], settings)


def try_parity_smiles(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> str | None:
    """Canonical SMILES of the standardized form; ``None`` when it cannot be made."""
    found = _tautomer_key_of(smiles, settings)
    return None if found is None else found.smiles


def try_parity_key(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> str | None:
    """The ``parity`` matcher's key: InChI skeleton of the standardized form, or ``None``.

    A capped search still gives a key: equal capped keys prove two structures are
    tautomers; only a pairwise verdict (:mod:`chemgauge.chem.parity`) can say "undecided".
    """
    found = _tautomer_key_of(smiles, settings)
    return None if found is None else found.key


@dataclass(frozen=True, slots=True)
class ParityOutcome:
    """A parity key with how its tautomer search ended (for reports and diagnostics)."""

    key: str | None
    tautomer_cap: int
    search_status: str  # RDKit's status: Completed, MaxTautomersReached, ... or "not_run"


def parity_outcome(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> ParityOutcome:
    """The parity key plus the per-molecule tautomer cap and whether the search hit it."""
    if try_parse_smiles(smiles) is None:
        return ParityOutcome(None, 0, "not_run")
    found = _tautomer_key_of(smiles, settings)
    if found is None:
        return ParityOutcome(None, 0, "failed")
    return ParityOutcome(found.key, found.cap, found.status)
