"""The small p2s release shipped inside the package (the default data of ``chemgauge p2s``).

Built by ``scripts/build_p2s_default.py`` with the xtb provider (dipole and gap), audited
like any build: the scaffolds come from the NCI set in the rdkit wheel, and each record's
source is drawn by the build secret among its candidate block, so knowing the public NCI
list does not single out the answer. What ships is the release alone (task and label files
and the build manifest); the sources, build records, journal and secret stay private.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from chemgauge.chem import try_canonical_smiles
from chemgauge.chem.properties import structure_counts
from chemgauge.errors import InputFileError

__all__ = [
    "DEFAULT_RELEASE",
    "DEFAULT_SOURCES",
    "default_data",
    "nci_molecules",
    "nci_sources",
]

DEFAULT_RELEASE = "data/default"
#: How the embedded release was built (``scripts/build_p2s_default.py`` reads these).
DEFAULT_SOURCES = 400
DEFAULT_RECORDS = 136
DEFAULT_DIRECTORIES = ("dipole", "gap")


def nci_molecules() -> list[str]:
    """The NCI molecules in the rdkit wheel that parse as one component, as canonical
    SMILES in file order."""
    import rdkit

    path = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    out = []
    for line in path.read_text().splitlines():
        smiles = line.split()[0] if line.strip() else ""
        key = try_canonical_smiles(smiles)
        if key is not None and "." not in key:
            out.append(key)
    return out


def nci_sources(limit: int, min_heavy_atoms: int = 6) -> list[str]:
    """The NCI molecules with at least ``min_heavy_atoms``, fewest heavy atoms first (ties
    in file order): the scaffolds of the embedded release, a list anyone can rebuild. The
    release's sources are drawn secretly from each one's candidate block (see
    ``scripts/build_p2s_default.py``), so this list does not say which candidate is the
    source."""
    rows = [(structure_counts(k).heavy_atoms, i, k) for i, k in enumerate(nci_molecules())]
    rows.sort()
    return [key for heavy, _, key in rows if heavy >= min_heavy_atoms][:limit]


def default_data() -> Path:
    """The folder of the embedded release; an error if the package was installed without it."""
    path = Path(str(resources.files("chemgauge.families.p2s").joinpath(DEFAULT_RELEASE)))
    if not path.is_dir():
        raise InputFileError("the embedded p2s release is missing from this install", path=path)
    return path
