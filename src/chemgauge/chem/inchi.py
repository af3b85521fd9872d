"""Standard InChI and InChIKey keys, computed from one parse and one InChI per structure."""

from __future__ import annotations

from rdkit import Chem

from chemgauge.chem.smiles import clear_atom_maps, try_parse_smiles

__all__ = ["inchi_key_of", "inchi_keys", "strict_key_of", "try_inchi", "try_inchikey"]


def _inchi_of(mol: Chem.Mol) -> str | None:
    try:
        inchi = Chem.MolToInchi(mol)  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return inchi or None


def _key_of_inchi(inchi: str | None) -> str | None:
    if inchi is None:
        return None
    key = Chem.InchiToInchiKey(inchi)  # type: ignore[no-untyped-call]
    return key or None


def try_inchi(smiles: str) -> str | None:
    """Standard InChI of a structure (atom maps cleared); ``None`` if RDKit cannot make one."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None
    return _inchi_of(clear_atom_maps(mol))


def try_inchikey(smiles: str) -> str | None:
    """Full standard InChIKey (stereo, isotopes and protonation included), or ``None``."""
    return _key_of_inchi(try_inchi(smiles))


def inchi_key_of(mol: Chem.Mol) -> str | None:
    """Full standard InChIKey of a molecule object, or ``None``."""
    return _key_of_inchi(_inchi_of(mol))


def strict_key_of(mol: Chem.Mol, full_key: str | None) -> str | None:
    """The ``strict_key`` policy's key: InChIKey first block plus the net formal charge."""
    if full_key is None:
        return None
    return f"{full_key.split('-')[0]}|{Chem.GetFormalCharge(mol):+d}"


def inchi_keys(smiles: str) -> tuple[str | None, str | None]:
    """(full InChIKey, strict key) of a structure from a single parse and a single InChI."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return None, None
    full = inchi_key_of(clear_atom_maps(mol))
    return full, strict_key_of(mol, full)
