"""Structural stereo flattening: clear stereo on the graph, then re-canonicalize.

Deleting '@', '/' and '\\' from text leaves non-canonical spellings behind (for example a
bracket atom that no longer needs its brackets), so flattening always works on the molecule.
"""

from __future__ import annotations

from rdkit import Chem

from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles
from chemgauge.errors import StereoFlattenError

__all__ = [
    "StereoFlattenError",
    "flat_key_of_mol",
    "flatten_mol_stereo",
    "flatten_stereo",
    "try_flatten_stereo",
]

_DIRECTIONAL = (Chem.BondDir.ENDUPRIGHT, Chem.BondDir.ENDDOWNRIGHT)


def flatten_mol_stereo(mol: Chem.Mol) -> Chem.Mol:
    """Return a copy with every chirality tag, E/Z bond and stereo group cleared."""
    flat = Chem.Mol(mol)
    for atom in flat.GetAtoms():
        atom.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
        if atom.HasProp("_CIPCode"):
            atom.ClearProp("_CIPCode")
    for bond in flat.GetBonds():
        if bond.GetBondDir() in _DIRECTIONAL:
            bond.SetBondDir(Chem.BondDir.NONE)
        if bond.GetStereo() != Chem.BondStereo.STEREONONE:
            bond.SetStereo(Chem.BondStereo.STEREONONE)
    if flat.GetStereoGroups():
        flat = Chem.RWMol(flat)
        flat.SetStereoGroups([])
        flat = flat.GetMol()
    return flat


def try_flatten_stereo(smiles: str) -> str | None:
    """Canonical SMILES with all stereo removed structurally; ``None`` means unsupported.

    The flattened string is re-parsed as a check: if that fails the result is ``None``
    rather than the stereo-aware string, which would fabricate a match never computed.
    """
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    return flat_key_of_mol(clear_atom_maps(mol))


def flat_key_of_mol(mol: Chem.Mol) -> str | None:
    """Flattened canonical SMILES of an unmapped molecule; ``None`` means unsupported."""
    try:
        flat = mol_to_canonical(flatten_mol_stereo(mol))
    except Exception:  # RDKit may raise on exotic stereo; that is "unsupported"
        return None
    check = try_parse_smiles(flat)
    if check is None or mol_to_canonical(check) != flat:
        return None
    return flat


def flatten_stereo(smiles: str) -> str:
    """Like :func:`try_flatten_stereo` but raises :class:`StereoFlattenError`."""
    flat = try_flatten_stereo(smiles)
    if flat is None:
        raise StereoFlattenError(smiles, "stereo flattening unsupported")
    return flat
