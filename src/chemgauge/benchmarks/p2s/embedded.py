"""The small p2s release shipped inside the package (the default data of ``chemgauge p2s``).

Built by ``scripts/build_p2s_default.py`` from the NCI set in the rdkit wheel with the xtb
provider (dipole and gap), audited like any build; its answers are in the label files, as in
every release, and its source list and build manifest ship beside them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from chemgauge.errors import InputFileError

__all__ = ["DEFAULT_RELEASE", "default_data"]

DEFAULT_RELEASE = "data/default"


def default_data() -> Path:
    """The folder of the embedded release; an error if the package was installed without it."""
    path = Path(str(resources.files("chemgauge.benchmarks.p2s").joinpath(DEFAULT_RELEASE)))
    if not path.is_dir():
        raise InputFileError("the embedded p2s release is missing from this install", path=path)
    return path
