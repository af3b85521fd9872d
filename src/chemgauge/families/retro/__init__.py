"""Single-step retrosynthesis evaluation (syntheseus-compatible, stricter and faster).

The public API (what the ``chemgauge retro`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

if TYPE_CHECKING:
    from chemgauge.families.retro.api import evaluate, run
    from chemgauge.families.retro.config import RetroEvalConfig
    from chemgauge.families.retro.data import (
        RetroTarget,
        find_fold_file,
        load_targets,
        scan_data_dir,
    )
    from chemgauge.families.retro.engine.base import RetroModel, RetroModelOptions
    from chemgauge.families.retro.runner import RetroRun, run_retro_eval

_HOMES = {
    "RetroEvalConfig": "config",
    "RetroModel": "engine.base",
    "RetroModelOptions": "engine.base",
    "RetroRun": "runner",
    "RetroTarget": "data",
    "evaluate": "api",
    "find_fold_file": "data",
    "load_targets": "data",
    "run": "api",
    "run_retro_eval": "runner",
    "scan_data_dir": "data",
}

__all__ = [
    "RetroEvalConfig",
    "RetroModel",
    "RetroModelOptions",
    "RetroRun",
    "RetroTarget",
    "evaluate",
    "find_fold_file",
    "load_targets",
    "run",
    "run_retro_eval",
    "scan_data_dir",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
