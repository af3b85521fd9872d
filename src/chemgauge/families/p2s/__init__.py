"""Property-grounded masked completion: does a system use the property evidence?

The public API (what the ``chemgauge p2s`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
The exports load on first use, so the standard-library scorer and task loader
(``python -m chemgauge.families.p2s.scoring``) import nothing beyond the standard library.

"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

if TYPE_CHECKING:
    from chemgauge.families.p2s.api import CALCULATOR_SEED, combine, run, run_system, total
    from chemgauge.families.p2s.config import RunConfig

_HOMES = {
    "CALCULATOR_SEED": "api",
    "RunConfig": "config",
    "combine": "api",
    "run": "api",
    "run_system": "api",
    "total": "api",
}

__all__ = [
    "CALCULATOR_SEED",
    "RunConfig",
    "combine",
    "run",
    "run_system",
    "total",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
