"""The small p2s release shipped inside the package (the default data of ``chemgauge p2s``).

Built by ``scripts/build_p2s_default.py`` from the NCI set in the rdkit wheel with the xtb
provider (dipole and gap), audited like any build; its answers are in the label files, as in
every release, and its source list and build manifest ship beside them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from chemgauge.chem import try_canonical_smiles
from chemgauge.chem.properties import structure_counts
from chemgauge.errors import InputFileError

__all__ = ["DEFAULT_RELEASE", "DEFAULT_SOURCES", "default_data", "nci_sources"]

DEFAULT_RELEASE = "data/default"
#: How the embedded release was built (``scripts/build_p2s_default.py`` reads these).
DEFAULT_SOURCES = 400
DEFAULT_RECORDS = 136
DEFAULT_DIRECTORIES = ("dipole", "gap")


def nci_sources(limit: int, min_heavy_atoms: int = 6) -> list[str]:
    """The NCI molecules in the rdkit wheel that parse as one component, fewest heavy atoms
    first (ties in file order), as canonical SMILES: a source list anyone can rebuild."""
    import rdkit

    path = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    rows = []
    for number, line in enumerate(path.read_text().splitlines()):
        smiles = line.split()[0] if line.strip() else ""
        key = try_canonical_smiles(smiles)
        if key is None or "." in key:
            continue
        rows.append((structure_counts(key).heavy_atoms, number, key))
    rows.sort()
    return [key for heavy, _, key in rows if heavy >= min_heavy_atoms][:limit]


def default_data() -> Path:
    """The folder of the embedded release; an error if the package was installed without it."""
    path = Path(str(resources.files("chemgauge.families.p2s").joinpath(DEFAULT_RELEASE)))
    if not path.is_dir():
        raise InputFileError("the embedded p2s release is missing from this install", path=path)
    return path
