"""Name round-trip coverage: a name counts only if OPSIN parses it back to the input structure.

The public API (what the ``chemgauge names`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

if TYPE_CHECKING:
    from chemgauge.families.names.api import (
        check_opsin_errors,
        check_source,
        coverage,
        journal_path,
        run_outputs,
        score_coverage,
    )
    from chemgauge.families.names.config import DEFAULT_MAX_OPSIN_ERRORS, CoverageConfig
    from chemgauge.families.names.systems import NAMES_SYSTEMS, Namer

_HOMES = {
    "CoverageConfig": "config",
    "DEFAULT_MAX_OPSIN_ERRORS": "config",
    "NAMES_SYSTEMS": "systems",
    "Namer": "systems",
    "check_opsin_errors": "api",
    "check_source": "api",
    "coverage": "api",
    "journal_path": "api",
    "run_outputs": "api",
    "score_coverage": "api",
}

__all__ = [
    "DEFAULT_MAX_OPSIN_ERRORS",
    "NAMES_SYSTEMS",
    "CoverageConfig",
    "Namer",
    "check_opsin_errors",
    "check_source",
    "coverage",
    "journal_path",
    "run_outputs",
    "score_coverage",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
