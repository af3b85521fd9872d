"""Image-to-structure (OCSR) benchmark: manifest, renderer cohort, runner, scorer and report.

The public API (what the ``chemgauge ocsr`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
