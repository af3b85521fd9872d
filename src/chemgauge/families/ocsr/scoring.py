"""Identity of recognized graphs under named policies, side by side with one denominator.

The headline policy is ``exact`` (canonical isomeric SMILES: aromatic/Kekule spelling and
explicit/implicit hydrogens normalize; tautomers, protonation, isotopes, charges, radicals and
specified stereo stay strict). One charge normalization is deliberate and claimed: every graph
is sanitized by RDKit, which rewrites the hypervalent spellings of a few groups to their
charge-separated form (nitro ``N(=O)=O``, N-oxides, azide and diazo ``N#N``, perhalates), so
a recognizer that draws a nitro group the pentavalent way reads the same group as the
reference (:data:`HYPERVALENT_NORMALIZATION`); no other formal charge is touched.
``inchi`` and ``stereo_ignored`` are the usual lenient lenses, and ``legacy`` is standard
InChI computed straight from the graph as read, which is how the 2020 OCSR review scored.
A missing, empty or unreadable graph never matches anything, and a reference with a feature
no policy is certified for (R-groups, haptic bonds, ...) is ``unsupported``, never a match
of two identical placeholders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rdkit import Chem

from chemgauge.chem import get_matcher, mol_to_canonical
from chemgauge.chem.molfile import (
    GraphReading,
    abbreviation_groups,
    mol_inchi,
    read_graph,
    unsupported_features,
)

__all__ = [
    "HEADLINE_POLICY",
    "HYPERVALENT_NORMALIZATION",
    "POLICIES",
    "GraphKeys",
    "compare_keys",
    "graph_keys",
    "label_recall",
    "text_keys",
]

#: Policies reported for every attempt, headline first. Names of registered matchers apply
#: that matcher to the graph's canonical SMILES; ``legacy`` is InChI of the graph as read.
POLICIES: tuple[str, ...] = ("exact", "inchi", "stereo_ignored", "legacy")
HEADLINE_POLICY = "exact"

#: What RDKit's sanitization rewrites before any key is computed (part of every claim).
HYPERVALENT_NORMALIZATION = (
    "hypervalent nitro N(=O)=O, N-oxide, azide/diazo N#N and perhalate spellings are read as "
    "their charge-separated forms; every other formal charge stays strict"
)

POLICY_CLAIMS: Mapping[str, str] = {
    "exact": f"canonical isomeric SMILES (the seed's rules; {HYPERVALENT_NORMALIZATION})",
    "inchi": "standard InChI of the canonical SMILES (merges mobile-H tautomers)",
    "stereo_ignored": "canonical SMILES after structural stereo flattening",
    "legacy": "standard InChI of the graph as read (the 2020 OCSR review's rule)",
}

MATCH = "match"
MISMATCH = "mismatch"
UNSUPPORTED = "unsupported"
NO_CANDIDATE = "no_candidate"


@dataclass(frozen=True)
class GraphKeys:
    """A graph's canonical SMILES, its key under each policy and any unsupported features."""

    smiles: str | None
    keys: Mapping[str, str | None]
    unsupported: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """Plain mapping for rows."""
        return {
            "smiles": self.smiles,
            "keys": dict(self.keys),
            "unsupported": list(self.unsupported),
        }


def graph_keys(
    mol: Chem.Mol | None,
    policies: tuple[str, ...] = POLICIES,
    *,
    legacy_mol: Chem.Mol | None = None,
) -> GraphKeys:
    """Keys of one graph under every policy (``None`` for a missing graph or a failed key).

    ``legacy_mol`` is the graph the legacy rule reads (the first output record) when it
    differs from the whole graph; by default it is ``mol``.
    """
    if mol is None or mol.GetNumAtoms() == 0:
        keys: dict[str, str | None] = dict.fromkeys(policies)
        if "legacy" in policies and legacy_mol is not None:
            keys["legacy"] = mol_inchi(legacy_mol)
        return GraphKeys(None, keys)
    smiles = mol_to_canonical(mol)
    keys = {}
    for policy in policies:
        if policy == "legacy":
            keys[policy] = mol_inchi(mol if legacy_mol is None else legacy_mol)
        else:
            keys[policy] = get_matcher(policy).key(smiles)
    return GraphKeys(smiles, keys, tuple(unsupported_features(mol)))


def text_keys(
    text: str, fmt: str, policies: tuple[str, ...] = POLICIES
) -> tuple[GraphKeys, GraphReading]:
    """Keys of a graph given as text, plus the validation reading of the whole graph."""
    reading = read_graph(text, fmt)
    legacy_mol = None
    if "legacy" in policies and reading.records != 1:  # legacy reads the first record alone
        legacy_mol = read_graph(text, fmt, first_record_only=True).mol
    return graph_keys(reading.mol, policies, legacy_mol=legacy_mol), reading


def compare_keys(reference: GraphKeys, candidate: GraphKeys | None) -> dict[str, str]:
    """Verdict per policy: ``match``, ``mismatch``, ``unsupported`` or ``no_candidate``.

    ``legacy`` keeps the review's rule even for unsupported references (two identical
    non-empty InChIs match), so its counts stay comparable with the published ones.
    """
    verdicts: dict[str, str] = {}
    for policy, ref_key in reference.keys.items():
        if candidate is None or (candidate.smiles is None and candidate.keys.get(policy) is None):
            verdicts[policy] = NO_CANDIDATE
        elif reference.unsupported and policy != "legacy":
            verdicts[policy] = UNSUPPORTED
        else:
            pred_key = candidate.keys.get(policy)
            same = ref_key is not None and pred_key is not None and ref_key == pred_key
            verdicts[policy] = MATCH if same else MISMATCH
    return verdicts


def label_recall(reference: Chem.Mol, candidate: Chem.Mol | None) -> dict[str, Any] | None:
    """Abbreviation labels of the reference's superatom groups, the candidate's, and how many
    reference groups find their label in the candidate (one to one); ``None`` when the
    reference has no group."""
    labels = sorted(group.label for group in abbreviation_groups(reference))
    if not labels:
        return None
    found = [] if candidate is None else [g.label for g in abbreviation_groups(candidate)]
    recalled = sum((Counter(labels) & Counter(found)).values())
    return {"reference": labels, "candidate": sorted(found), "recalled": recalled}
