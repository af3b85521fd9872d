"""Named identity policies. Each matcher turns a SMILES into a key; two structures match
under a policy iff both keys exist and are equal, so an empty or unparsable structure never
matches anything, not even another empty one. A policy may widen that relation with a
pairwise rule (``parity`` also accepts every pair ``strict_key`` accepts); its key alone is
then the finer relation that key-based uses (canonical keys, reactant multisets) rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from chemgauge.chem.inchi import inchi_key_of, inchi_keys, try_inchi, try_inchikey
from chemgauge.chem.parity import parity_match
from chemgauge.chem.smiles import try_canonical_smiles
from chemgauge.chem.standardize import DEFAULT_SETTINGS, try_parity_key
from chemgauge.chem.stereo import try_flatten_stereo
from chemgauge.registry import Registry

__all__ = [
    "MATCHERS",
    "Matcher",
    "get_matcher",
    "inchi_key_of",
    "matcher_names",
    "try_inchi",
    "try_inchikey",
]

KeyFunction = Callable[[str], "str | None"]
PairFunction = Callable[[str, str], bool]


@dataclass(frozen=True)
class Matcher:
    """An identity policy: a key function plus the one-line claim of what it forgives.

    ``pair_function``, when given, decides :meth:`match` instead of key equality; it must
    accept every pair whose keys are equal (it may accept more).
    """

    name: str
    claim: str
    forgives: tuple[str, ...]
    key_function: KeyFunction = field(repr=False)
    settings: Mapping[str, object] = field(default_factory=dict)
    pair_function: PairFunction | None = field(default=None, repr=False)

    def key(self, smiles: str) -> str | None:
        """The identity key of a structure under this policy; ``None`` if it has none."""
        if not smiles or smiles.isspace():
            return None
        return self.key_function(smiles)

    def match(self, a: str, b: str) -> bool:
        """True iff both structures are the same under this policy (never for empty input)."""
        if self.pair_function is not None:
            return bool(a.strip() and b.strip()) and self.pair_function(a, b)
        key_a = self.key(a)
        return key_a is not None and key_a == self.key(b)


def _exact_key(smiles: str) -> str | None:
    return try_canonical_smiles(smiles)


def _strict_key(smiles: str) -> str | None:
    return inchi_keys(smiles)[1]


def _parity_key(smiles: str) -> str | None:
    return try_parity_key(smiles, DEFAULT_SETTINGS)


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
        "Stereo cleared, then fragment parent, normalize, reionize, uncharge, canonical "
        "tautomer, compared by InChI skeleton: forgives salts, charge state, tautomers "
        "broadly (keto/enol included), resonance forms, stereo and isotopes; accepts every "
        "pair strict_key accepts. A capped tautomer search never proves a difference.",
        (
            "spelling",
            "atom maps",
            "counter-ions",
            "charge state",
            "tautomers",
            "resonance forms",
            "stereo",
            "isotopes",
        ),
        _parity_key,
        {
            "max_tautomers": DEFAULT_SETTINGS.max_tautomers,
            "max_transforms": DEFAULT_SETTINGS.max_transforms,
            "tautomer_work_budget": DEFAULT_SETTINGS.tautomer_work_budget,
        },
        parity_match,
    ),
):
    MATCHERS.register(_matcher.name, _matcher)


def get_matcher(name: str) -> Matcher:
    """Look a matcher up by name ("did you mean" on a typo)."""
    return MATCHERS.get(name)


def matcher_names() -> list[str]:
    """Every registered matcher name, built-ins first."""
    return MATCHERS.names()
