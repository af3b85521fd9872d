"""The reference lenses: ``orthonym.metrics.coverage_metrics``'s two matchers as written.

``reference_parity``: canonical isomeric SMILES equality after RDKit's FragmentParent,
Normalize, Reionize, Uncharger and CanonicalTautomer, in that order; ``reference_strict``:
the InChIKey's first block plus the net formal charge of the parsed SMILES. Either side that
cannot be standardized or hashed makes the pair a mismatch (fail closed, as the module
does: ``confidently_wrong``, never ``unscorable``). They are reported beside ``parity``,
``strict`` and ``exact`` and never replace them; where ``parity`` and ``reference_parity``
differ, :func:`difference_class` names why.
"""

from __future__ import annotations

from functools import lru_cache

from rdkit import Chem, RDLogger
from rdkit.Chem import inchi
from rdkit.Chem.MolStandardize import rdMolStandardize

__all__ = [
    "DIFFERENCE_CLASSES",
    "difference_class",
    "reference_parity_key",
    "reference_parity_match",
    "reference_strict_key",
    "reference_strict_match",
]

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

#: Why ``parity`` and ``reference_parity`` disagree on a pair, one class each.
DIFFERENCE_CLASSES = (
    "input_has_no_key",  # chemgauge: unscorable under every lens; the reference: a mismatch
    "unscorable_in_parity",  # chemgauge cannot judge (not standardizable...); the reference
    # fails closed
    "spelling_dependent_key",  # one molecule (RDKit's canonical SMILES equal), two spellings
    # whose reference keys differ: the module's canonical tautomer depends on the spelling
    "stereo_omitted",  # one side has no stereo the other has; the reference compares stereo
    "stereo_differs",  # both have stereo, and it differs (an inversion)
    "isotope_differs",  # equal without isotopes: the reference compares isotopes
    "largest_fragment_only",  # one side is several fragments (an ionic form of a covalent
    # one, a salt), of which the reference keeps only the largest (FragmentParent)
    "same_standard_inchi",  # one standard InChI, two RDKit structures (a resonance form RDKit
    # does not call aromatic, or a mobile-H tautomer); the reference's keys differ
    "other",  # none of the above
)


@lru_cache(maxsize=65536)
def reference_parity_key(smiles: str) -> str | None:
    """The module's parity key of a structure, or ``None`` on any failure."""
    try:
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            return None
        mol = rdMolStandardize.FragmentParent(mol)
        mol = rdMolStandardize.Normalize(mol)
        mol = rdMolStandardize.Reionize(mol)
        mol = rdMolStandardize.Uncharger().uncharge(mol)
        mol = rdMolStandardize.CanonicalTautomer(mol)
        if mol is None:
            return None
        return str(Chem.MolToSmiles(mol, isomericSmiles=True, canonical=True))
    except Exception:  # the module fails closed on any error; so does this lens
        return None


@lru_cache(maxsize=65536)
def reference_strict_key(smiles: str) -> tuple[str, int] | None:
    """The module's strict key (InChIKey first block, net formal charge), or ``None``."""
    try:
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            return None
        key = inchi.MolToInchiKey(mol)  # type: ignore[no-untyped-call]
        if not key:
            return None
        return key.split("-")[0], sum(a.GetFormalCharge() for a in mol.GetAtoms())
    except Exception:
        return None


def reference_parity_match(input_smiles: str, opsin_smiles: str) -> bool:
    """True iff both parity keys exist and are equal."""
    a, b = reference_parity_key(input_smiles), reference_parity_key(opsin_smiles)
    return a is not None and b is not None and a == b


def reference_strict_match(input_smiles: str, opsin_smiles: str) -> bool:
    """True iff both strict keys exist and are equal."""
    a, b = reference_strict_key(input_smiles), reference_strict_key(opsin_smiles)
    return a is not None and b is not None and a == b


def _plain(smiles: str, *, isotopes: bool, stereo: bool = False) -> str | None:
    """Canonical SMILES without stereo (unless ``stereo``) and, with ``isotopes``, without
    isotopes."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    try:
        if isotopes:
            for atom in mol.GetAtoms():
                atom.SetIsotope(0)
            mol = Chem.RemoveHs(mol)
        if not stereo:
            Chem.RemoveStereochemistry(mol)
        return str(Chem.MolToSmiles(mol))
    except Exception:  # RDKit refuses the edited structure: no plain form
        return None


def _canonical(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else str(Chem.MolToSmiles(mol))


def _without_isotopes(smiles: str) -> str | None:
    """The structure with every isotope label dropped (explicit hydrogens folded in)."""
    return _plain(smiles, isotopes=True, stereo=True)


def _has_isotope(smiles: str) -> bool:
    mol = Chem.MolFromSmiles(smiles)
    return mol is not None and any(atom.GetIsotope() for atom in mol.GetAtoms())


def _standard_inchi(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    try:
        return str(inchi.MolToInchi(mol)) or None  # type: ignore[no-untyped-call]
    except Exception:
        return None


def _has_stereo(smiles: str) -> bool:
    mol = Chem.MolFromSmiles(smiles)
    return mol is not None and _plain(smiles, isotopes=False) != str(Chem.MolToSmiles(mol))


def difference_class(
    input_smiles: str, opsin_smiles: str, parity_class: str, parity_reason: str | None
) -> str:
    """Why ``parity`` (class ``parity_class``) and ``reference_parity`` disagree on a pair
    (one of :data:`DIFFERENCE_CLASSES`)."""
    if parity_reason == "input_has_no_key":
        return "input_has_no_key"
    if parity_class == "unscorable":
        return "unscorable_in_parity"
    canonical = _canonical(input_smiles)
    if canonical is not None and canonical == _canonical(opsin_smiles):
        return "spelling_dependent_key"
    a, b = reference_parity_key(input_smiles), reference_parity_key(opsin_smiles)
    if a is not None and b is not None and _plain(a, isotopes=False) is not None:
        if _plain(a, isotopes=False) == _plain(b, isotopes=False):
            return "stereo_differs" if _has_stereo(a) and _has_stereo(b) else "stereo_omitted"
        if _plain(a, isotopes=True) == _plain(b, isotopes=True):
            return "isotope_differs"
    # The keys of the structures without isotope labels: a label the reference keeps can
    # also block its tautomer search or leave a key RDKit cannot read back.
    plain_a, plain_b = _without_isotopes(input_smiles), _without_isotopes(opsin_smiles)
    labelled = _has_isotope(input_smiles) or _has_isotope(opsin_smiles)
    if labelled and plain_a is not None and plain_b is not None:
        key = reference_parity_key(plain_a)
        if key is not None and key == reference_parity_key(plain_b):
            return "isotope_differs"
    if "." in (canonical or "") or "." in (_canonical(opsin_smiles) or ""):
        return "largest_fragment_only"
    found = _standard_inchi(input_smiles)
    if found is not None and found == _standard_inchi(opsin_smiles):
        return "same_standard_inchi"
    return "other"
