"""Property-grounded masked completion: does a system use the property evidence?

The public API (what the ``chemgauge p2s`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
The exports load on first use, so the standard-library scorer and task loader
(``python -m chemgauge.families.p2s.scoring``) import nothing beyond the standard library.

"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
