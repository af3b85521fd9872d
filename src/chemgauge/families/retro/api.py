"""Python API of single-step retrosynthesis evaluation: ``chemgauge retro eval`` as a call.

>>> import chemgauge.families.retro
>>> report = chemgauge.families.retro.evaluate("retro/data", "predictions",
...                                   model_dir="retro/predictions.jsonl", out="runs/retro")
>>> report["metrics"]

Options are the command's, under the same names (``model``, ``out``, ``fold``...), or
syntheseus's eval-single-step keys (``model_class``, ``results_dir``...), as on the command
line (``chemgauge retro eval -h`` lists them); the run folder gets ``rows.jsonl``,
``report.json`` and ``syntheseus_results.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from chemgauge.eval.outputs import Output, claim_outputs
from chemgauge.families.retro import RetroEvalConfig, RetroRun, run_retro_eval
from chemgauge.families.retro.data import find_fold_file
from chemgauge.families.retro.engine.registry import build_retro_model
from chemgauge.families.retro.runner import OUTPUT_FILES

__all__ = ["evaluate", "run"]

#: The model ``evaluate`` scores when neither ``model`` nor ``model_class`` names one.
DEFAULT_MODEL = "predictions"


def run(
    config: RetroEvalConfig,
    progress: Callable[[int], None] | None = None,
    *,
    command: str | None = None,
) -> RetroRun:
    """Evaluate the model ``config`` names on its fold: outputs checked against the inputs
    and locked (``command`` names the run in the lock; default: the command line), the
    model built, every target scored (the unscored ones counted, not checked: :func:`evaluate`
    and the command check them)."""
    data_file = find_fold_file(config.data_dir, config.fold)
    results = Output("--out", Path(config.out), files=OUTPUT_FILES)
    inputs = [
        ("data_dir", data_file.path),
        ("model_dir", None if config.model_dir is None else Path(config.model_dir)),
    ]
    with claim_outputs([results], inputs, command=command):
        model = build_retro_model(config.model_class, config.model_options())
        return run_retro_eval(config, model=model, progress=progress)


def evaluate(
    data_dir: str | Path,
    model: str | None = None,
    *,
    out: str | Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Evaluate a retro model and return the report (what ``report.json`` holds).

    ``model`` is ``--model`` (syntheseus's ``model_class=`` means the same; default
    ``predictions``), ``out`` the run folder (``--out``; syntheseus's ``results_dir=`` means
    the same; default ``runs/retro``). ``options`` are any further keys of the command
    (``model_dir``, ``fold``, ``num_top_results``, ``allow_missing``, syntheseus's
    ``skip_repeats``...). More than the allowed share of unscored targets raises
    :class:`~chemgauge.errors.DataQualityError` unless ``allow_missing=True``, as the command
    exits non-zero.
    """
    values: dict[str, Any] = {"data_dir": str(data_dir), "quiet": True, **options}
    if model is not None:
        values["model"] = model
    elif "model_class" not in options:
        values["model_class"] = DEFAULT_MODEL
    if out is not None:
        values["out"] = str(out)
    config = RetroEvalConfig.from_options(values)
    done = run(config, command="chemgauge.families.retro.evaluate")
    done.unscored.check(allow_missing=config.allow_missing, out=str(done.out))
    return done.report
