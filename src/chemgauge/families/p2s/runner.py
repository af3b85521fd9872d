"""Run one system over p2s views and write prediction files the scorer reads.

Layout: ``<out>/<model>/<property>/<condition>.jsonl`` (final, task-file order, written
atomically) beside ``<condition>.journal.jsonl`` (append-only rows keyed by record id and tied
to the run's config hash, so an interrupted run resumes where it stopped). A run is *blind*
unless told otherwise: the model gets the tasks of all views of a directory interleaved in a
random order, each under an opaque id, and ``blind_key.json`` (the run's private key, in the
run folder, never sent) maps them back. With
``omit_properties`` the model sees every task with ``properties`` emptied (the structure-only
comparison) and the folder is ``<model>@no_property``. At the end the whole folder is scored
into ``rows.jsonl`` and ``report.json`` (see :mod:`chemgauge.families.p2s.report`).

Nothing grows with the data but a compact index (a blind run also holds one directory's
tasks, to present them in its random order): the data folder is checked into a
:mod:`~chemgauge.families.p2s.viewindex` (a few numbers and the label per task), tasks are
read again one batch at a time, the journal keeps only finished ids, and the prediction file
is streamed back from the journal in task-file order.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

import orjson

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

__all__ = ["BLIND_KEY", "blind_key", "run_folder", "run_model", "total_tasks"]

RUN_SCHEME_VERSION = 2  # 2: blind presentation (the default)
BLIND_KEY = "blind_key.json"
_T = TypeVar("_T")


def run_folder(out_dir: str | Path, model_name: str, omit_properties: bool) -> Path:
    """Where a model's prediction files go."""
    return Path(out_dir) / (f"{model_name}@no_property" if omit_properties else model_name)


def _batches(tasks: Iterator[_T], size: int) -> Iterator[list[_T]]:
    batch: list[_T] = []
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


def _opaque_id(key: str, condition: str, record_id: str) -> str:
    """A task's id in a blind run: the record ids' format, from the run's private key."""
    return "p2s-" + hashlib.sha256(f"{key}\x1f{condition}\x1f{record_id}".encode()).hexdigest()[:16]


def blind_key(directory_folder: Path, restart: bool) -> str:
    """The run's private key for one directory (kept in the run folder, never shown to the
    system; a resumed run reuses it, ``restart`` draws a new one)."""
    path = directory_folder / BLIND_KEY
    if path.is_file() and not restart:
        key = orjson.loads(path.read_bytes()).get("key")
        if isinstance(key, str) and key:
            return key
    key = secrets.token_hex(16)
    atomic_write_json(path, {"key": key, "note": "private: maps blind ids to views"})
    return key


def _blind_stream(views: Mapping[str, ViewIndex], key: str) -> list[tuple[str, Task]]:
    """Every task of the directory's views, interleaved in the key's random order."""
    tasks = [(c, t) for c, view in views.items() for t in view.iter_tasks()]
    return sorted(
        tasks,
        key=lambda ct: hashlib.sha256(
            f"{key}\x1forder\x1f{ct[0]}\x1f{ct[1].record_id}".encode()
        ).digest(),
    )


def _run_directory(
    views: Mapping[str, ViewIndex],
    model: P2SModel,
    folder: Path,
    config: RunConfig,
    progress: Callable[[int], None] | None,
) -> dict[str, dict[str, Any]]:
    """Answer every task of one directory's views; per-view prediction files and counts.

    Blind (the default): the tasks of all views go to the model interleaved in a random
    order drawn from the run's private key, each with an opaque id of the record ids'
    format, so nothing in a request names or betrays its view; answers are mapped back to
    their view and record. Per view: each view's tasks in file order with their own ids.
    """
    presentation = "per_view" if config.per_view else "blind"
    directory = next(iter(views.values())).directory
    base = folder / directory
    key = None if config.per_view else blind_key(base, config.restart)
    resumed: Counter[str] = Counter()
    with ExitStack() as stack:
        journals = {}
        for condition, view in views.items():
            journal_config = {
                "run_scheme_version": RUN_SCHEME_VERSION,
                "model": model.describe(),
                "property": view.directory,
                "condition": view.condition,
                "tasks_sha256": sha256_file(view.task_path),
                "omit_properties": config.omit_properties,
                "presentation": presentation,
                "blind_key_sha256": None if key is None else sha256_json({"key": key}),
            }
            journals[condition] = stack.enter_context(
                ResumableJsonlWriter(
                    base / f"{condition}.journal.jsonl",
                    config_sha256=sha256_json(journal_config),
                    key_field="record_id",
                    restart=config.restart,
                    keep_rows=False,
                )
            )

        def todo(pairs: Iterable[tuple[str, Task]]) -> Iterator[tuple[str, Task]]:
            for condition, task in pairs:
                if not journals[condition].done(task.record_id):
                    yield condition, task
                    continue
                resumed[condition] += 1
                if progress is not None:
                    progress(1)

        def answer(pairs: Iterable[tuple[str, Task]]) -> None:
            for chunk in _batches(todo(pairs), config.batch_size):
                batch = []
                for condition, task in chunk:
                    shown = task.to_json()
                    if key is not None:
                        shown["record_id"] = _opaque_id(key, condition, task.record_id)
                    if config.omit_properties:
                        shown["properties"] = {}
                    batch.append(shown)
                # predict() checks each answer's id against its task, so position maps back
                for (condition, task), row in zip(chunk, model.predict(batch), strict=True):
                    journals[condition].write({**row, "record_id": task.record_id})
                if progress is not None:
                    progress(len(batch))

        if key is not None:
            answer(_blind_stream(views, key))
        else:
            for condition, view in views.items():
                answer((condition, t) for t in view.iter_tasks())
    out = {}
    for condition, view in views.items():
        target = base / f"{condition}.jsonl"
        atomic_write_rows(target, _in_task_order(view, base / f"{condition}.journal.jsonl"))
        out[condition] = {
            **_view_counts(view, target),
            "resumed": resumed[condition],
            "predictions": str(target),
        }
    return out


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
        chosen = {c: dataset[directory][c] for c in config.condition}
        results[directory] = _run_directory(chosen, model, folder, config, progress)
    assert folder is not None
    run_config = {
        "model": described,
        "directories": list(directories),
        "conditions": list(config.condition),
        "omit_properties": config.omit_properties,
        "presentation": "per_view" if config.per_view else "blind",
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
