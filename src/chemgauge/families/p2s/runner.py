"""Run one system over p2s views and write prediction files the scorer reads.

Layout: ``<out>/<model>/<property>/<condition>.jsonl`` (final, task-file order, written
atomically) beside ``<condition>.journal.jsonl`` (append-only rows keyed by record id and tied
to the run's config hash, so an interrupted run resumes where it stopped). With
``omit_properties`` the model sees every task with ``properties`` emptied (the structure-only
comparison) and the folder is ``<model>@no_property``. At the end the whole folder is scored
into ``rows.jsonl`` and ``report.json`` (see :mod:`chemgauge.families.p2s.report`).

Nothing grows with the data but a compact index: the data folder is checked into a
:mod:`~chemgauge.families.p2s.viewindex` (a few numbers and the label per task), tasks are
read again one batch at a time, the journal keeps only finished ids, and the prediction file
is streamed back from the journal in task-file order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from chemgauge.errors import ConfigError
from chemgauge.eval.atomic import atomic_write_json, atomic_write_rows
from chemgauge.eval.journal import ResumableJsonlWriter, iter_journal_by_keys
from chemgauge.eval.metrics import rate
from chemgauge.eval.provenance import run_provenance, sha256_file, sha256_json
from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.engine.models import P2SModel
from chemgauge.families.p2s.report import write_run_report
from chemgauge.families.p2s.scoring import outcome_of, read_predictions
from chemgauge.families.p2s.taskfile import Task
from chemgauge.families.p2s.viewindex import ViewIndex, index_dataset

__all__ = ["run_folder", "run_model", "total_tasks"]

RUN_SCHEME_VERSION = 1


def run_folder(out_dir: str | Path, model_name: str, omit_properties: bool) -> Path:
    """Where a model's prediction files go."""
    return Path(out_dir) / (f"{model_name}@no_property" if omit_properties else model_name)


def _batches(tasks: Iterator[Task], size: int) -> Iterator[list[Task]]:
    batch: list[Task] = []
    for task in tasks:
        batch.append(task)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _view_counts(view: ViewIndex, target: Path) -> dict[str, Any]:
    """The scorer's counts for one prediction file (tasks read again one at a time)."""
    predictions = read_predictions(target)
    statuses = dict.fromkeys(("hit", "miss", "missing", "invalid", "out_of_range"), 0)
    answered = 0
    for task, label in view.iter_pairs():
        prediction = predictions.by_record.get(task.record_id)
        answered += prediction is not None
        statuses[outcome_of(task, label.label, prediction).status] += 1
    tasks = len(view)
    return {
        "property": view.directory,
        "condition": view.condition,
        "hits": statuses["hit"],
        "tasks": tasks,
        "accuracy": rate(statuses["hit"], tasks),
        "missing": statuses["missing"],
        "invalid": statuses["invalid"],
        "out_of_range": statuses["out_of_range"],
        "unknown_records": len(predictions.by_record) - answered,
        "unattributable_lines": predictions.unattributable,
    }


def _in_task_order(view: ViewIndex, journal_path: Path) -> Iterator[dict[str, Any]]:
    """The journal's rows in task-file order (one offset per row is held)."""
    current = [""]

    def ids() -> Iterator[str]:
        for task in view.iter_tasks():
            current[0] = task.record_id
            yield task.record_id

    for row in iter_journal_by_keys(journal_path, "record_id", ids()):
        if row is None:
            raise KeyError(current[0])
        yield row


def _run_view(
    view: ViewIndex,
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
    resumed = 0
    with ResumableJsonlWriter(
        journal_path,
        config_sha256=sha256_json(journal_config),
        key_field="record_id",
        restart=config.restart,
        keep_rows=False,
    ) as journal:

        def todo() -> Iterator[Task]:
            nonlocal resumed
            for task in view.iter_tasks():
                if not journal.done(task.record_id):
                    yield task
                    continue
                resumed += 1
                if progress is not None:
                    progress(1)

        for tasks in _batches(todo(), config.batch_size):
            batch = [t.to_json() for t in tasks]
            if config.omit_properties:
                for task in batch:
                    task["properties"] = {}
            for row in model.predict(batch):
                journal.write(row)
            if progress is not None:
                progress(len(batch))
    atomic_write_rows(target, _in_task_order(view, journal_path))
    return {**_view_counts(view, target), "resumed": resumed, "predictions": str(target)}


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
    :mod:`chemgauge.families.p2s.report`). Returns the manifest plus ``folder`` and
    ``report``.
    """
    dataset = index_dataset(data_dir)
    directories: Sequence[str] = config.property or tuple(dataset)
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
            for c in config.condition
        }
    assert folder is not None
    run_config = {
        "model": described,
        "directories": list(directories),
        "conditions": list(config.condition),
        "omit_properties": config.omit_properties,
        "run_scheme_version": RUN_SCHEME_VERSION,
    }
    inputs: dict[str, str | Path] = {
        f"{d}/{c}": dataset[d][c].task_path for d in directories for c in config.condition
    }
    manifest = {
        "config": run_config,
        "provenance": run_provenance(run_config, inputs).to_dict(),
        "results": results,
    }
    atomic_write_json(folder / "run_manifest.json", manifest)
    written = write_run_report(
        data_dir, folder, model=described, checked=dataset, omit_properties=config.omit_properties
    )
    return {**manifest, "folder": str(folder), "report": written.report}


def total_tasks(data_dir: str | Path, directories: Sequence[str], conditions: Sequence[str]) -> int:
    """How many tasks a run will answer (for a progress bar)."""
    dataset = index_dataset(data_dir)
    chosen = directories or tuple(dataset)
    return sum(len(dataset[d][c]) for d in chosen if d in dataset for c in conditions)
