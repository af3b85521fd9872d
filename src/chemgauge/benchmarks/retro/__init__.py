"""Single-step retrosynthesis evaluation (syntheseus-compatible, stricter and faster).

Library entry points: :class:`RetroEvalConfig` and :func:`run_retro_eval` (pass ``model=`` to
evaluate any :class:`chemgauge.engines.retro.base.RetroModel`, for example a
:class:`~chemgauge.engines.retro.base.CallableRetroModel` around a Python function).
"""

from chemgauge.benchmarks.retro.config import RetroEvalConfig
from chemgauge.benchmarks.retro.data import RetroTarget, find_fold_file, load_targets, scan_data_dir
from chemgauge.benchmarks.retro.runner import RetroRun, run_retro_eval

__all__ = [
    "RetroEvalConfig",
    "RetroRun",
    "RetroTarget",
    "find_fold_file",
    "load_targets",
    "run_retro_eval",
    "scan_data_dir",
]
