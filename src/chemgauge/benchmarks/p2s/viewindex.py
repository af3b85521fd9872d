"""Checked p2s views that keep a few numbers per task, not the tasks (standard library only).

:func:`index_dataset` runs every check of :func:`~chemgauge.benchmarks.p2s.taskfile.load_dataset`
(the same errors, first problem first) while streaming the files, and keeps per task only its
line, candidate count and a 16-byte digest of what the cross-view checks compare, plus its
label: about 300 bytes a task, where a loaded task holds its whole mask, properties and
candidates. The tasks themselves are read again, one at a time, by :meth:`ViewIndex.iter_tasks`.

One difference from the loaded check, by design: masks and candidates are compared by their
JSON text, so ``1`` and ``1.0`` in a mask differ here where Python's ``==`` calls them equal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from chemgauge.benchmarks.p2s.spec import CONDITIONS, PROPERTY_DIRECTORIES
from chemgauge.benchmarks.p2s.taskfile import (
    Label,
    Task,
    iter_objects,
    label_problem,
    labels_path,
    parse_task,
    tasks_path,
)
from chemgauge.errors import InputFileError

__all__ = ["TaskFacts", "ViewIndex", "index_dataset", "index_directory", "index_view"]


class TaskFacts(NamedTuple):
    """What the checks need of a task once it has been read."""

    line: int
    candidates: int
    digest: bytes


def _digest(task: Task) -> bytes:
    """The masked graph and candidate list, compared across views by this hash."""
    text = json.dumps([task.masked_smiles, task.mask, list(task.candidates)], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass
class ViewIndex:
    """One checked view: task facts in file order and the labels, never the tasks."""

    directory: str
    condition: str
    task_path: Path
    label_path: Path
    tasks: dict[str, TaskFacts] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.tasks)

    def iter_tasks(self) -> Iterator[Task]:
        """The view's tasks, read again from the task file, in file order."""
        ids = iter(self.tasks)
        for number, _, obj in iter_objects(self.task_path):
            task, _ = parse_task(self.directory, obj, number)
            if task is None or next(ids, None) != task.record_id:
                raise InputFileError(
                    "task file changed since it was checked", path=self.task_path, line=number
                )
            yield task
        if next(ids, None) is not None:
            raise InputFileError("task file changed since it was checked", path=self.task_path)


def _index_tasks(view: ViewIndex) -> None:
    """Read the task file; the first malformed line wins over any task problem, as when the
    file is loaded whole."""
    problem: InputFileError | None = None
    for number, text, obj in iter_objects(view.task_path):
        if problem is not None:
            continue  # keep parsing: a later malformed line is reported first
        task, reason = parse_task(view.directory, obj, number)
        if task is None:
            problem = InputFileError(reason, path=view.task_path, line=number, value=text)
        elif task.record_id in view.tasks:
            problem = InputFileError(
                "duplicate record_id", path=view.task_path, line=number, value=task.record_id
            )
        else:
            view.tasks[task.record_id] = TaskFacts(number, len(task.candidates), _digest(task))
    if problem is not None:
        raise problem


def _index_labels(view: ViewIndex) -> None:
    problem: InputFileError | None = None
    for number, text, obj in iter_objects(view.label_path):
        if problem is not None:
            continue
        record_id = obj.get("record_id")
        facts = view.tasks.get(record_id) if isinstance(record_id, str) else None
        candidates = None if facts is None else facts.candidates
        reason, value, label = label_problem(
            view.condition, obj, number, text, view.labels, candidates
        )
        if label is None:
            problem = InputFileError(reason, path=view.label_path, line=number, value=value)
        else:
            view.labels[label.record_id] = label
    if problem is not None:
        raise problem
    for record_id, facts in view.tasks.items():
        if record_id not in view.labels:
            raise InputFileError(
                "task has no label", path=view.task_path, line=facts.line, value=record_id
            )


def index_view(data_dir: str | Path, directory: str, condition: str) -> ViewIndex:
    """Check one task file and its label file, keeping only the index."""
    if directory not in PROPERTY_DIRECTORIES:
        raise InputFileError(f"unknown property directory {directory!r}", value=directory)
    if condition not in CONDITIONS:
        raise InputFileError(f"unknown condition {condition!r}", value=condition)
    view = ViewIndex(
        directory,
        condition,
        tasks_path(data_dir, directory, condition),
        labels_path(data_dir, directory, condition),
    )
    _index_tasks(view)
    _index_labels(view)
    return view


def _check_pair(correct: ViewIndex, other: ViewIndex) -> None:
    if correct.tasks.keys() != other.tasks.keys():
        only = sorted(correct.tasks.keys() ^ other.tasks.keys())[0]
        raise InputFileError(
            f"{correct.condition} and {other.condition} views differ in record ids",
            path=other.task_path,
            value=only,
        )
    for record_id, facts in other.tasks.items():
        if facts.digest != correct.tasks[record_id].digest:
            raise InputFileError(
                f"masked graph or candidate list differs from the {correct.condition} view",
                path=other.task_path,
                line=facts.line,
                value=record_id,
            )
        if other.labels[record_id].label != correct.labels[record_id].label:
            raise InputFileError(
                f"answer index differs from the {correct.condition} view",
                path=other.label_path,
                line=other.labels[record_id].line,
                value=record_id,
            )


def _check_counterfactual(correct: ViewIndex, cf: ViewIndex) -> None:
    for record_id, facts in cf.tasks.items():
        label = cf.labels[record_id]
        base = correct.tasks.get(label.base_record_id or "")
        if base is None:
            raise InputFileError(
                "base_record_id is not a record of the correct view",
                path=cf.label_path,
                line=label.line,
                value=label.base_record_id,
            )
        if facts.digest != base.digest:
            raise InputFileError(
                "masked graph or candidate list differs from its base record",
                path=cf.task_path,
                line=facts.line,
                value=record_id,
            )
        if label.source_label != correct.labels[label.base_record_id or ""].label:
            raise InputFileError(
                "source_label is not the base record's answer",
                path=cf.label_path,
                line=label.line,
                value=str(label.source_label),
            )
        if label.label == label.source_label:
            raise InputFileError(
                "a counterfactual label must name a completion other than the source",
                path=cf.label_path,
                line=label.line,
                value=str(label.label),
            )


def index_directory(data_dir: str | Path, directory: str) -> dict[str, ViewIndex]:
    """Check the three views of one property directory against each other."""
    views = {c: index_view(data_dir, directory, c) for c in CONDITIONS}
    _check_pair(views["correct"], views["shuffled"])
    _check_counterfactual(views["correct"], views["counterfactual"])
    return views


def index_dataset(data_dir: str | Path) -> dict[str, dict[str, ViewIndex]]:
    """Every property directory present under ``data_dir``, checked, in the benchmark's order."""
    root = Path(data_dir)
    if not root.is_dir():
        raise InputFileError("data folder not found", path=root)
    present = [d for d in PROPERTY_DIRECTORIES if (root / d).is_dir()]
    if not present:
        raise InputFileError(
            f"no property directory found (expected some of {', '.join(PROPERTY_DIRECTORIES)})",
            path=root,
        )
    return {d: index_directory(root, d) for d in present}
