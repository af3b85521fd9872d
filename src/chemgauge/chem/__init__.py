"""chemgauge.chem: the only place that decides chemical identity."""

from chemgauge.chem.canonicalizer import Canonicalizer, canonicalize_many
from chemgauge.chem.keyfile import KeyFileSummary, canonicalize_file
from chemgauge.chem.matchers import (
    MATCHERS,
    Matcher,
    get_matcher,
    matcher_names,
    try_inchi,
    try_inchikey,
)
from chemgauge.chem.molecule import RDKIT_VERSION, Molecule, MoleculeBag
from chemgauge.chem.reactions import (
    CanonicalReaction,
    ReactionParts,
    canonicalize_reaction,
    split_reaction_smiles,
)
from chemgauge.chem.smiles import (
    canonical_multiset,
    canonical_smiles,
    clear_atom_maps,
    describe_parse_failure,
    mol_to_canonical,
    parse_smiles,
    strip_atom_maps,
    try_canonical_multiset,
    try_canonical_smiles,
    try_parse_smiles,
)
from chemgauge.chem.standardize import StandardizeSettings, standardize_mol, try_parity_smiles
from chemgauge.chem.stereo import flatten_mol_stereo, flatten_stereo, try_flatten_stereo
from chemgauge.errors import StereoFlattenError

__all__ = [
    "MATCHERS",
    "RDKIT_VERSION",
    "CanonicalReaction",
    "Canonicalizer",
    "KeyFileSummary",
    "Matcher",
    "Molecule",
    "MoleculeBag",
    "ReactionParts",
    "StandardizeSettings",
    "StereoFlattenError",
    "canonical_multiset",
    "canonical_smiles",
    "canonicalize_file",
    "canonicalize_many",
    "canonicalize_reaction",
    "clear_atom_maps",
    "describe_parse_failure",
    "flatten_mol_stereo",
    "flatten_stereo",
    "get_matcher",
    "matcher_names",
    "mol_to_canonical",
    "parse_smiles",
    "split_reaction_smiles",
    "standardize_mol",
    "strip_atom_maps",
    "try_canonical_multiset",
    "try_canonical_smiles",
    "try_flatten_stereo",
    "try_inchi",
    "try_inchikey",
    "try_parity_smiles",
    "try_parse_smiles",
]
