"""Run one system over p2s views and write prediction files the scorer reads.

Layout: ``<out>/<model>/<property>/<condition>.jsonl`` (final, task-file order, written
atomically) beside ``<condition>.journal.jsonl`` (append-only rows keyed by record id and tied
to the run's config hash, so an interrupted run resumes where it stopped). With
``omit_properties`` the model sees every task with ``properties`` emptied (the structure-only
comparison) and the folder is ``<model>@no_property``. At the end the whole folder is scored
into ``rows.jsonl`` and ``report.json`` (see :mod:`chemgauge.benchmarks.p2s.report`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.benchmarks.p2s.report import write_run_report
from chemgauge.benchmarks.p2s.scoring import read_predictions, score_view
from chemgauge.benchmarks.p2s.spec import CONDITIONS
from chemgauge.benchmarks.p2s.taskfile import ViewData, load_dataset
from chemgauge.engines.p2s.models import P2SModel
from chemgauge.errors import ConfigError
from chemgauge.eval.provenance import run_provenance, sha256_file, sha256_json
from chemgauge.eval.records import (
    ResumableJsonlWriter,
    atomic_write_json,
    atomic_write_rows,
)

__all__ = ["RunConfig", "run_folder", "run_model", "total_tasks"]

RUN_SCHEME_VERSION = 1


@dataclass(frozen=True)
class RunConfig:
    """Which directories and views to run, in what batch size, with or without properties."""

    directories: tuple[str, ...] = ()
    conditions: tuple[str, ...] = CONDITIONS
    batch_size: int = 16
    omit_properties: bool = False
    restart: bool = False

    def __post_init__(self) -> None:
        bad = [c for c in self.conditions if c not in CONDITIONS]
        if bad:
            raise ConfigError(f"unknown condition {bad[0]!r}; choose from {', '.join(CONDITIONS)}")
        if self.batch_size < 1:
            raise ConfigError(f"batch size must be >= 1, got {self.batch_size}")


def run_folder(out_dir: str | Path, model_name: str, omit_properties: bool) -> Path:
    """Where a model's prediction files go."""
    return Path(out_dir) / (f"{model_name}@no_property" if omit_properties else model_name)


def _run_view(
    view: ViewData,
    model: P2SModel,
    folder: Path,
    config: RunConfig,
    progress: Callable[[int], None] | None,
) -> dict[str, Any]:
    target = folder / view.directory / f"{view.condition}.jsonl"
    journal_config = {
        "run_scheme_version": RUN_SCHEME_VERSION,
        "model": model.describe(),
        "property": view.directory,
        "condition": view.condition,
        "tasks_sha256": sha256_file(view.task_path),
        "omit_properties": config.omit_properties,
    }
    journal_path = target.with_name(f"{view.condition}.journal.jsonl")
    with ResumableJsonlWriter(
        journal_path,
        config_sha256=sha256_json(journal_config),
        key_field="record_id",
        restart=config.restart,
    ) as journal:
        resumed = sum(1 for t in view.tasks if journal.done(t.record_id))
        todo = [t for t in view.tasks if not journal.done(t.record_id)]
        if progress is not None and resumed:
            progress(resumed)
        for offset in range(0, len(todo), config.batch_size):
            batch = [t.to_json() for t in todo[offset : offset + config.batch_size]]
            if config.omit_properties:
                for task in batch:
                    task["properties"] = {}
            for row in model.predict(batch):
                journal.write(row)
            if progress is not None:
                progress(len(batch))
        rows = [journal.existing[t.record_id] for t in view.tasks]
    atomic_write_rows(target, rows)
    score = score_view(view, read_predictions(target))
    return {**score.to_dict(), "resumed": resumed, "predictions": str(target)}


def run_model(
    data_dir: str | Path,
    out_dir: str | Path,
    model_for: Callable[[str], P2SModel],
    config: RunConfig,
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run a model (built per directory by ``model_for``); write predictions and a manifest.

    Then score the whole run folder into ``rows.jsonl`` and ``report.json`` (see
    :mod:`chemgauge.benchmarks.p2s.report`). Returns the manifest plus ``folder`` and
    ``report``.
    """
    dataset = load_dataset(data_dir)
    directories: Sequence[str] = config.directories or tuple(dataset)
    missing = [d for d in directories if d not in dataset]
    if missing:
        raise ConfigError(f"property directory {missing[0]!r} is not in {data_dir}")
    results: dict[str, dict[str, Any]] = {}
    described: dict[str, Any] = {}
    folder: Path | None = None
    for directory in directories:
        model = model_for(directory)
        folder = run_folder(out_dir, model.name, config.omit_properties)
        described = model.describe()
        results[directory] = {
            c: _run_view(dataset[directory][c], model, folder, config, progress)
            for c in config.conditions
        }
    assert folder is not None
    run_config = {
        "model": described,
        "directories": list(directories),
        "conditions": list(config.conditions),
        "omit_properties": config.omit_properties,
        "run_scheme_version": RUN_SCHEME_VERSION,
    }
    inputs: dict[str, str | Path] = {
        f"{d}/{c}": dataset[d][c].task_path for d in directories for c in config.conditions
    }
    manifest = {
        "config": run_config,
        "provenance": run_provenance(run_config, inputs).to_dict(),
        "results": results,
    }
    atomic_write_json(folder / "run_manifest.json", manifest)
    written = write_run_report(data_dir, folder, model=described)
    return {**manifest, "folder": str(folder), "report": written.report}


def total_tasks(data_dir: str | Path, directories: Sequence[str], conditions: Sequence[str]) -> int:
    """How many tasks a run will answer (for a progress bar)."""
    dataset = load_dataset(data_dir)
    chosen = directories or tuple(dataset)
    return sum(len(dataset[d][c].tasks) for d in chosen if d in dataset for c in conditions)
