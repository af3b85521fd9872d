"""Image-to-structure (OCSR) benchmark: manifest, renderer cohort, runner, scorer and report.

The public API (what the ``chemgauge ocsr`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chemgauge.families.ocsr.api import RUN_FILES, Bars, rescore, run, run_recognizer, score
    from chemgauge.families.ocsr.config import RecognizerOptions, RunConfig

_HOMES = {
    "Bars": "api",
    "RUN_FILES": "api",
    "RecognizerOptions": "config",
    "RunConfig": "config",
    "rescore": "api",
    "run": "api",
    "run_recognizer": "api",
    "score": "api",
}

__all__ = [
    "RUN_FILES",
    "Bars",
    "RecognizerOptions",
    "RunConfig",
    "rescore",
    "run",
    "run_recognizer",
    "score",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
