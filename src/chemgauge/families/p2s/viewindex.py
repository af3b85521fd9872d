"""Checked p2s views that hold no task, and next to nothing per task (standard library only).

:func:`index_dataset` runs every check of :func:`~chemgauge.families.p2s.taskfile.load_dataset`
(the same errors, first problem first) while streaming the files. While one property
directory is checked it holds, per task, its record id and one packed 37-byte record (lines,
candidate count, label, a 16-byte digest of what the cross-view checks compare): about 230
bytes a task, where a loaded task holds its whole mask, properties and candidates. Once
checked, a view keeps only its size when its label file lists the records in task-file order
(as the builder writes it): :meth:`ViewIndex.iter_pairs` then reads tasks and labels again
side by side, one at a time. A label file in another order keeps its labels by record id.

One difference from the loaded check, by design: masks and candidates are compared by their
JSON text, so ``1`` and ``1.0`` in a mask differ here where Python's ``==`` calls them equal.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chemgauge.errors import InputFileError
from chemgauge.families.p2s.spec import CONDITIONS
from chemgauge.families.p2s.taskfile import (
    Label,
    Task,
    check_view_name,
    find_base,
    iter_objects,
    label_problem,
    labels_path,
    parse_task,
    present_directories,
    tasks_path,
)

__all__ = ["ViewIndex", "index_dataset", "index_directory", "index_view"]

# Task line, label line, candidate count, label, source label, whether the labels are here
# (not in _Checking.odd_labels: an index or source label past 32 bits), digest.
_FACTS = struct.Struct("<IIIii?16s")
_CHANGED = "file changed since it was checked"
_INT32_MAX = 2**31 - 1
_NO_SOURCE = -(2**31)


def _digest(task: Task) -> bytes:
    """The masked graph and candidate list, compared across views by this hash."""
    text = json.dumps([task.masked_smiles, task.mask, list(task.candidates)], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass
class _Checking:
    """One view while it is checked: packed facts and labels by interned record id."""

    facts: dict[str, bytes]
    bases: dict[str, str]  # counterfactual record id -> base record id
    aligned: bool
    odd_labels: dict[str, tuple[int, int | None]] = field(default_factory=dict)

    def line(self, record_id: str) -> int:
        return int(_FACTS.unpack(self.facts[record_id])[0])

    def label_line(self, record_id: str) -> int:
        return int(_FACTS.unpack(self.facts[record_id])[1])

    def digest(self, record_id: str) -> bytes:
        return bytes(_FACTS.unpack(self.facts[record_id])[6])

    def label(self, record_id: str) -> tuple[int, int | None]:
        """(label, source label)."""
        _, _, _, label, source, here, _ = _FACTS.unpack(self.facts[record_id])
        if not here:
            return self.odd_labels[record_id]
        return int(label), None if source == _NO_SOURCE else int(source)

    def set_label(self, record_id: str, line: int, label: int, source: int | None) -> None:
        """Record a task's label (a value past 32 bits goes to :attr:`odd_labels`)."""
        task_line, _, count, _, _, _, digest = _FACTS.unpack(self.facts[record_id])
        fits = all(_NO_SOURCE < v <= _INT32_MAX for v in (label, source) if v is not None)
        packed = (label, _NO_SOURCE if source is None else source) if fits else (0, 0)
        if not fits:
            self.odd_labels[record_id] = (label, source)
        self.facts[record_id] = _FACTS.pack(task_line, line, count, *packed, fits, digest)

    def __contains__(self, record_id: object) -> bool:
        """Whether a label was read for this record (what ``label_problem`` asks)."""
        packed = self.facts.get(record_id) if isinstance(record_id, str) else None
        return packed is not None and _FACTS.unpack(packed)[1] != 0


@dataclass
class ViewIndex:
    """One checked view: its size and, when the label file is in another order, its labels."""

    directory: str
    condition: str
    task_path: Path
    label_path: Path
    size: int = 0
    labels: dict[str, Label] | None = None  # None: the label file follows the task file

    def __len__(self) -> int:
        return self.size

    def iter_tasks(self) -> Iterator[Task]:
        """The view's tasks, read again from the task file, in file order."""
        for task, _ in self.iter_pairs():
            yield task

    def iter_pairs(self) -> Iterator[tuple[Task, Label]]:
        """Each task with its label, in task-file order, read again one at a time."""
        beside = self._label_lines()
        count = 0
        for number, _, obj in iter_objects(self.task_path):
            task, _ = parse_task(self.directory, obj, number)
            if task is None:
                raise InputFileError(_CHANGED, path=self.task_path, line=number)
            label = next(beside) if self.labels is None else self.labels.get(task.record_id)
            if label is None or label.record_id != task.record_id:
                raise InputFileError(_CHANGED, path=self.label_path, value=task.record_id)
            count += 1
            yield task, label
        if count != self.size:
            raise InputFileError(_CHANGED, path=self.task_path)

    def _label_lines(self) -> Iterator[Label | None]:
        """The label file's labels in file order (only read when it follows the task file)."""
        for number, text, obj in iter_objects(self.label_path):
            _, _, label = label_problem(self.condition, obj, number, text, {}, sys.maxsize)
            yield label
        while True:
            yield None


def _index_tasks(view: ViewIndex) -> dict[str, bytes]:
    """Read the task file; the first malformed line wins over any task problem, as when the
    file is loaded whole."""
    facts: dict[str, bytes] = {}
    problem: InputFileError | None = None
    for number, text, obj in iter_objects(view.task_path):
        if problem is not None:
            continue  # keep parsing: a later malformed line is reported first
        task, reason = parse_task(view.directory, obj, number)
        if task is None:
            problem = InputFileError(reason, path=view.task_path, line=number, value=text)
        elif task.record_id in facts:
            problem = InputFileError(
                "duplicate record_id", path=view.task_path, line=number, value=task.record_id
            )
        else:
            packed = _FACTS.pack(number, 0, len(task.candidates), 0, 0, True, _digest(task))
            facts[task.record_id] = packed
    if problem is not None:
        raise problem
    return facts


def _candidates(facts: dict[str, bytes], record_id: object) -> int | None:
    packed = facts.get(record_id) if isinstance(record_id, str) else None
    return None if packed is None else int(_FACTS.unpack(packed)[2])


def _index_labels(view: ViewIndex, facts: dict[str, bytes]) -> _Checking:
    checking = _Checking(facts, {}, aligned=True)
    order = iter(facts)
    problem: InputFileError | None = None
    for number, text, obj in iter_objects(view.label_path):
        if problem is not None:
            continue
        candidates = _candidates(facts, obj.get("record_id"))
        reason, value, label = label_problem(
            view.condition, obj, number, text, checking, candidates
        )
        if label is None:
            problem = InputFileError(reason, path=view.label_path, line=number, value=value)
            continue
        record_id = label.record_id
        checking.aligned = checking.aligned and next(order, None) == record_id
        checking.set_label(record_id, number, label.label, label.source_label)
        if label.base_record_id is not None:
            checking.bases[record_id] = label.base_record_id
    if problem is not None:
        raise problem
    for record_id in facts:
        if record_id not in checking:
            raise InputFileError(
                "task has no label",
                path=view.task_path,
                line=checking.line(record_id),
                value=record_id,
            )
    checking.aligned = checking.aligned and next(order, None) is None
    return checking


def _index_view(
    data_dir: str | Path, directory: str, condition: str
) -> tuple[ViewIndex, _Checking]:
    check_view_name(directory, condition)
    view = ViewIndex(
        directory,
        condition,
        tasks_path(data_dir, directory, condition),
        labels_path(data_dir, directory, condition),
    )
    checking = _index_labels(view, _index_tasks(view))
    view.size = len(checking.facts)
    return view, checking


def _finish(view: ViewIndex, checking: _Checking) -> ViewIndex:
    """Keep the labels only when they cannot be read again beside the tasks."""
    if not checking.aligned:
        view.labels = {}
        for record_id in checking.facts:
            label, source = checking.label(record_id)
            base = checking.bases.get(record_id)
            line = checking.label_line(record_id)
            view.labels[record_id] = Label(record_id, label, line, base, source)
    return view


def index_view(data_dir: str | Path, directory: str, condition: str) -> ViewIndex:
    """Check one task file and its label file, keeping only the index."""
    return _finish(*_index_view(data_dir, directory, condition))


def _check_pair(correct: _Checking, other: _Checking, names: tuple[ViewIndex, ViewIndex]) -> None:
    base, view = names
    if correct.facts.keys() != other.facts.keys():
        only = sorted(correct.facts.keys() ^ other.facts.keys())[0]
        raise InputFileError(
            f"{base.condition} and {view.condition} views differ in record ids",
            path=view.task_path,
            value=only,
        )
    for record_id in other.facts:
        if other.digest(record_id) != correct.digest(record_id):
            raise InputFileError(
                f"masked graph or candidate list differs from the {base.condition} view",
                path=view.task_path,
                line=other.line(record_id),
                value=record_id,
            )
        if other.label(record_id)[0] != correct.label(record_id)[0]:
            raise InputFileError(
                f"answer index differs from the {base.condition} view",
                path=view.label_path,
                line=other.label_line(record_id),
                value=record_id,
            )


def _infer_bases(correct: _Checking, cf: _Checking, view: ViewIndex) -> None:
    """Fill in the base record and its answer where a seed-format label line left them out
    (the base is the one correct-view record with the same masked graph and candidates)."""
    by_digest: dict[bytes, list[str]] | None = None
    for record_id in cf.facts:
        label, source = cf.label(record_id)
        base = cf.bases.get(record_id)
        if base is not None and source is not None:
            continue
        if base is None:
            if by_digest is None:
                by_digest = {}
                for rid in correct.facts:
                    by_digest.setdefault(correct.digest(rid), []).append(rid)
            where = (view.task_path, cf.line(record_id))
            base = find_base(by_digest.get(cf.digest(record_id), []), where, record_id)
            cf.bases[record_id] = base
        if source is None and base in correct.facts:
            source = correct.label(base)[0]
        cf.set_label(record_id, cf.label_line(record_id), label, source)
        cf.aligned = False  # the label file alone no longer says all: keep the labels


def _check_counterfactual(correct: _Checking, cf: _Checking, view: ViewIndex) -> None:
    _infer_bases(correct, cf, view)
    for record_id in cf.facts:
        label, source = cf.label(record_id)
        base = cf.bases.get(record_id)
        if base is None or base not in correct.facts:
            raise InputFileError(
                "base_record_id is not a record of the correct view",
                path=view.label_path,
                line=cf.label_line(record_id),
                value=base,
            )
        if cf.digest(record_id) != correct.digest(base):
            raise InputFileError(
                "masked graph or candidate list differs from its base record",
                path=view.task_path,
                line=cf.line(record_id),
                value=record_id,
            )
        if source != correct.label(base)[0]:
            raise InputFileError(
                "source_label is not the base record's answer",
                path=view.label_path,
                line=cf.label_line(record_id),
                value=str(source),
            )
        if label == source:
            raise InputFileError(
                "a counterfactual label must name a completion other than the source",
                path=view.label_path,
                line=cf.label_line(record_id),
                value=str(label),
            )


def index_directory(data_dir: str | Path, directory: str) -> dict[str, ViewIndex]:
    """Check the three views of one property directory against each other."""
    checked = {c: _index_view(data_dir, directory, c) for c in CONDITIONS}
    (correct, c_facts), (shuffled, s_facts) = checked["correct"], checked["shuffled"]
    _check_pair(c_facts, s_facts, (correct, shuffled))
    cf, cf_facts = checked["counterfactual"]
    _check_counterfactual(c_facts, cf_facts, cf)
    return {c: _finish(view, checking) for c, (view, checking) in checked.items()}


def index_dataset(data_dir: str | Path) -> dict[str, dict[str, ViewIndex]]:
    """Every property directory present under ``data_dir``, checked, in the benchmark's order."""
    root, present = present_directories(data_dir)
    return {d: index_directory(root, d) for d in present}
