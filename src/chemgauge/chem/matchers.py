"""Named identity policies. Each matcher turns a SMILES into a key; two structures match
under a policy iff both keys exist and are equal, so an empty or unparsable structure never
matches anything, not even another empty one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rdkit import Chem

from chemgauge.chem.smiles import (
    clear_atom_maps,
    describe_parse_failure,
    try_canonical_smiles,
    try_parse_smiles,
)
from chemgauge.chem.standardize import DEFAULT_SETTINGS, try_parity_smiles
from chemgauge.chem.stereo import try_flatten_stereo
from chemgauge.registry import Registry

__all__ = [
    "INCHI_MAX_ATOMS",
    "MATCHERS",
    "Matcher",
    "describe_key_failure",
    "get_matcher",
    "inchi_key_of",
    "matcher_names",
    "try_inchi",
    "try_inchikey",
]

KeyFunction = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Matcher:
    """An identity policy: a key function plus the one-line claim of what it forgives."""

    name: str
    claim: str
    forgives: tuple[str, ...]
    key_function: KeyFunction = field(repr=False)
    settings: Mapping[str, object] = field(default_factory=dict)

    def key(self, smiles: str) -> str | None:
        """The identity key of a structure under this policy; ``None`` if it has none."""
        if not smiles or smiles.isspace():
            return None
        return self.key_function(smiles)

    def match(self, a: str, b: str) -> bool:
        """True iff both structures have a key under this policy and the keys are equal."""
        key_a = self.key(a)
        return key_a is not None and key_a == self.key(b)


def try_inchi(smiles: str) -> str | None:
    """Standard InChI of a structure (atom maps cleared); ``None`` if RDKit cannot make one."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    clear_atom_maps(mol)
    try:
        inchi = Chem.MolToInchi(mol)  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return inchi or None


def try_inchikey(smiles: str) -> str | None:
    """Full standard InChIKey (stereo, isotopes and protonation included), or ``None``."""
    inchi = try_inchi(smiles)
    if inchi is None:
        return None
    key = Chem.InchiToInchiKey(inchi)  # type: ignore[no-untyped-call]
    return key or None


def inchi_key_of(mol: Chem.Mol) -> str | None:
    """Full standard InChIKey of a molecule object, or ``None``."""
    try:
        key = Chem.MolToInchiKey(mol)  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return key or None


def _exact_key(smiles: str) -> str | None:
    return try_canonical_smiles(smiles)


def _strict_key(smiles: str) -> str | None:
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    clear_atom_maps(mol)
    key = inchi_key_of(mol)
    if key is None:
        return None
    charge = Chem.GetFormalCharge(mol)
    return f"{key.split('-')[0]}|{charge:+d}"


def _parity_key(smiles: str) -> str | None:
    return try_parity_smiles(smiles, DEFAULT_SETTINGS)


MATCHERS: Registry[Matcher] = Registry("matcher")

for _matcher in (
    Matcher(
        "exact",
        "Canonical isomeric SMILES: forgives only spelling (atom order, aromatic vs Kekule, "
        "explicit H, atom maps).",
        ("spelling", "atom maps"),
        _exact_key,
    ),
    Matcher(
        "stereo_ignored",
        "Canonical SMILES after structurally clearing tetrahedral and E/Z stereo: forgives "
        "stereo only; isotopes, charges and tautomers still count.",
        ("spelling", "atom maps", "tetrahedral stereo", "double-bond stereo"),
        try_flatten_stereo,
    ),
    Matcher(
        "inchi",
        "Standard InChI: forgives InChI mobile-H tautomers and zwitterion vs neutral form; "
        "stereo, isotopes and keto/enol still count.",
        ("spelling", "atom maps", "mobile-H tautomers", "zwitterion/neutral"),
        try_inchi,
    ),
    Matcher(
        "inchikey",
        "Full standard InChIKey: the InChI lens through a hash (stereo and isotopes count).",
        ("spelling", "atom maps", "mobile-H tautomers", "zwitterion/neutral"),
        try_inchikey,
    ),
    Matcher(
        "strict_key",
        "InChIKey first block plus net formal charge: forgives stereo, isotopes and "
        "protonation except net charge; tautomer-tolerant only to InChI mobile H.",
        (
            "spelling",
            "atom maps",
            "stereo",
            "isotopes",
            "mobile-H tautomers",
            "protonation (net charge kept)",
        ),
        _strict_key,
    ),
    Matcher(
        "parity",
        "Fragment parent, normalize, reionize, uncharge, canonical tautomer: forgives salts, "
        "charge state, tautomers broadly (keto/enol included) and stereo at atoms the "
        "tautomer search touches; isotopes and other stereo still count.",
        (
            "spelling",
            "atom maps",
            "counter-ions",
            "charge state",
            "tautomers",
            "stereo at tautomeric atoms",
        ),
        _parity_key,
        {
            "max_tautomers": DEFAULT_SETTINGS.max_tautomers,
            "max_transforms": DEFAULT_SETTINGS.max_transforms,
            "tautomer_work_budget": DEFAULT_SETTINGS.tautomer_work_budget,
        },
    ),
):
    MATCHERS.register(_matcher.name, _matcher)


def get_matcher(name: str) -> Matcher:
    """Look a matcher up by name ("did you mean" on a typo)."""
    return MATCHERS.get(name)


def matcher_names() -> list[str]:
    """Every registered matcher name, built-ins first."""
    return MATCHERS.names()


#: InChI gives no identifier for a structure with this many atoms or more.
INCHI_MAX_ATOMS = 1024
_INCHI_POLICIES = frozenset({"inchi", "inchikey", "strict_key"})


def describe_key_failure(smiles: str, policy: str) -> str:
    """Why a structure has no key under ``policy``: the parse failure, or the step after it
    that failed (InChI's atom limit, a key RDKit could not compute)."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return describe_parse_failure(smiles)
    atoms = mol.GetNumAtoms()
    if policy in _INCHI_POLICIES and atoms >= INCHI_MAX_ATOMS:
        return (
            f"InChI handles fewer than {INCHI_MAX_ATOMS:,} atoms (this molecule has {atoms:,}); "
            f"no {policy} key"
        )
    return f"no {policy} key (the structure parses; computing its key failed)"
