"""Python API of property-grounded completion: ``chemgauge p2s run`` as a call.

>>> import chemgauge.families.p2s
>>> report = chemgauge.families.p2s.run(model="structure_only", out="runs/p2s")  # embedded release
>>> report["metrics"]

The run folder ``out/<model>`` gets the prediction files of every view, ``rows.jsonl`` and
``report.json``; an interrupted call resumes when made again. The command line runs the same
:func:`run_system`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from chemgauge.errors import ConfigError
from chemgauge.eval.outputs import Output, claim_outputs
from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.embedded import default_data
from chemgauge.families.p2s.engine.composite import combine_providers
from chemgauge.families.p2s.engine.models import ModelOptions, P2SModel
from chemgauge.families.p2s.engine.properties import PropertyProvider, ProviderOptions
from chemgauge.families.p2s.engine.registry import get_model, get_provider

__all__ = ["CALCULATOR_SEED", "RunConfig", "combine", "run", "run_system", "total"]

#: The calculators' seed in a build and for the property oracle (fixed: part of their answers).
CALCULATOR_SEED = 0xC0FFEE


def combine(
    names: tuple[str, ...] | list[str],
    table: Path | None,
    seed: int,
    infrared: bool,
    raman: bool = False,
) -> PropertyProvider:
    """The property providers ``names`` name, combined (each property from the first)."""
    options = ProviderOptions(table=table, seed=seed, infrared=infrared, raman=raman)
    return combine_providers([get_provider(name, options) for name in names])


def total(data: Path | None, config: RunConfig) -> int:
    """How many tasks a run of ``config`` answers (a progress bar's total)."""
    from chemgauge.families.p2s.runner import total_tasks

    folder = default_data() if data is None else data
    return total_tasks(folder, config.property, config.condition)


def run_system(
    data: Path | None,
    model: str,
    out: Path,
    config: RunConfig,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run ``model`` over the views of ``data`` (default: the embedded release) into ``out``;
    return the run's manifest (with ``folder`` and ``report``). The caller checks the
    outputs and takes the run lock."""
    from chemgauge.families.p2s.prompts import renderer
    from chemgauge.families.p2s.runner import run_model

    chat = config.chat() if model == "chat" else None
    if model == "chat" and chat is None:
        raise ConfigError("the chat model needs --base-url and --chat-model")
    calculator = (
        combine(config.provider, config.table, CALCULATOR_SEED, config.infrared, config.raman)
        if model == "property_oracle"
        else None
    )

    def model_for(directory: str) -> P2SModel:
        built = ModelOptions(
            seed=config.seed, provider=calculator, chat=chat, render=renderer(directory)
        )
        return get_model(model, built)

    folder = default_data() if data is None else data
    return run_model(folder, out, model_for, config, progress=progress)


def run(
    data: str | Path | None = None,
    model: str = "structure_only",
    out: str | Path = "runs/p2s",
    *,
    config: RunConfig | None = None,
) -> dict[str, Any]:
    """Run a system (``structure_only``, ``random``, ``property_oracle``, ``chat`` or a
    plugin) over a release (default: the embedded one) into ``out/<model>``; return the run's
    report. ``config`` holds the other flags of ``p2s run`` by the same names."""
    chosen = config or RunConfig()
    data_path = None if data is None else Path(data)
    inputs = [("data", data_path), ("table", chosen.table)]
    with claim_outputs(
        [Output("out", Path(out), folder=True)], inputs, command="chemgauge.families.p2s"
    ):
        manifest = run_system(data_path, model, Path(out), chosen)
    report: dict[str, Any] = manifest["report"]
    return report
