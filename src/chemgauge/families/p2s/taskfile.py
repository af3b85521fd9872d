"""Loading and structural validation of p2s task and label files (standard library only).

Run without chemgauge's dependencies: ``python -m chemgauge.families.p2s.taskfile DATA``.

Layout: ``<data>/<property>/<condition>.jsonl`` holds tasks, ``<condition>.labels.jsonl`` the
answers. The first problem found is an :class:`InputFileError` naming file, line and value:
a benchmark file that is wrong in one place cannot be trusted anywhere. Chemical checks
(candidates parse, are distinct as structures, complete the scaffold) live in ``validate``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemgauge.errors import ChemgaugeError, InputFileError
from chemgauge.eval.lines import read_lines
from chemgauge.families.p2s.spec import (
    CONDITIONS,
    FORBIDDEN_TASK_KEYS,
    PROPERTY_DIRECTORIES,
    TASK_KEYS,
    components_of,
    validate_property_value,
)

__all__ = [
    "Label",
    "Task",
    "ViewData",
    "check_view_name",
    "find_base",
    "iter_objects",
    "label_problem",
    "labels_path",
    "load_dataset",
    "load_directory",
    "load_view",
    "main",
    "parse_json_line",
    "parse_task",
    "present_directories",
    "tasks_path",
]

MASK_KEYS = frozenset({"token", "masked_heavy_atoms", "attachment_points"})


@dataclass(frozen=True)
class Task:
    """One task line: everything a system sees, nothing of the answer."""

    record_id: str
    masked_smiles: str
    mask: dict[str, Any]
    properties: dict[str, Any]
    candidates: tuple[str, ...]
    line: int

    def to_json(self) -> dict[str, Any]:
        """The task object as written in the task file."""
        return {
            "record_id": self.record_id,
            "masked_smiles": self.masked_smiles,
            "mask": self.mask,
            "properties": self.properties,
            "candidate_completed_smiles": list(self.candidates),
        }


@dataclass(frozen=True)
class Label:
    """One label line; counterfactual labels also name their base record and its answer."""

    record_id: str
    label: int
    line: int
    base_record_id: str | None = None
    source_label: int | None = None


@dataclass
class ViewData:
    """The tasks (in file order) and labels of one property directory under one condition."""

    directory: str
    condition: str
    task_path: Path
    label_path: Path
    tasks: list[Task] = field(default_factory=list)
    labels: dict[str, Label] = field(default_factory=dict)

    def task_by_id(self) -> dict[str, Task]:
        """Tasks keyed by record id."""
        return {t.record_id: t for t in self.tasks}


def tasks_path(data_dir: str | Path, directory: str, condition: str) -> Path:
    """Where the task file of a directory and condition lives."""
    return Path(data_dir) / directory / f"{condition}.jsonl"


def labels_path(data_dir: str | Path, directory: str, condition: str) -> Path:
    """Where the label file of a directory and condition lives."""
    return Path(data_dir) / directory / f"{condition}.labels.jsonl"


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def parse_json_line(text: str) -> dict[str, Any]:
    """Parse one JSONL line as an object; NaN, Infinity and duplicate keys are errors."""
    try:
        obj = json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except RecursionError:  # hostile nesting ("[[[[...") exhausts the decoder's stack
        raise ValueError("JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise ValueError("line is not a JSON object")
    return obj


def iter_objects(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, text, object) for each non-blank line, streaming; the first line that is
    not UTF-8 or not a JSON object is an error naming file and line (a BOM is stripped)."""
    for line in read_lines(path, keep_undecodable=True):
        number, text = line.number, line.text
        if line.problem is not None:
            raise InputFileError(line.problem, path=path, line=number, value=text)
        if not text.strip():
            continue
        try:
            obj = parse_json_line(text)
        except ValueError as exc:
            raise InputFileError(
                f"malformed JSON ({exc})", path=path, line=number, value=text
            ) from None
        yield number, text, obj


def _read_objects(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    return list(iter_objects(path))


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_mask(mask: Any, masked_smiles: str) -> str | None:
    if not isinstance(mask, dict):
        return "mask must be an object"
    if set(mask) != MASK_KEYS:
        return f"mask needs exactly the keys {', '.join(sorted(MASK_KEYS))}"
    token = mask["token"]
    if not _nonempty_str(token) or masked_smiles.count(token) != 1:
        return "mask token must occur exactly once in masked_smiles"
    heavy = mask["masked_heavy_atoms"]
    if not isinstance(heavy, int) or isinstance(heavy, bool) or heavy < 1:
        return "mask.masked_heavy_atoms must be an integer >= 1"
    points = mask["attachment_points"]
    if not isinstance(points, list) or not points or not all(isinstance(p, dict) for p in points):
        return "mask.attachment_points must be a non-empty list of objects"
    return None


def parse_task(directory: str, obj: dict[str, Any], line: int) -> tuple[Task | None, str]:
    """The task of one parsed line, or ``None`` and why it is not a valid task."""
    leaked = sorted(set(obj) & FORBIDDEN_TASK_KEYS)
    if leaked:
        return None, f"the answer must not be in the task object (key {leaked[0]!r})"
    missing = sorted(TASK_KEYS - set(obj))
    if missing:
        return None, f"missing key {missing[0]!r}"
    extra = sorted(set(obj) - TASK_KEYS)
    if extra:
        return None, f"unexpected key {extra[0]!r} (a task holds exactly {sorted(TASK_KEYS)})"
    if not _nonempty_str(obj["record_id"]):
        return None, "record_id must be a non-empty string"
    if not _nonempty_str(obj["masked_smiles"]):
        return None, "masked_smiles must be a non-empty string"
    problem = _check_mask(obj["mask"], obj["masked_smiles"])
    if problem:
        return None, problem
    candidates = obj["candidate_completed_smiles"]
    if not isinstance(candidates, list) or len(candidates) < 2:
        return None, "candidate_completed_smiles must be a list of at least 2 SMILES"
    if not all(_nonempty_str(c) for c in candidates):
        return None, "every candidate must be a non-empty string"
    if len(set(candidates)) != len(candidates):
        return None, "candidates must be distinct"
    props = obj["properties"]
    expected = set(components_of(directory))
    if not isinstance(props, dict) or set(props) != expected:
        shown = sorted(props) if isinstance(props, dict) else type(props).__name__
        return None, f"properties must hold exactly {sorted(expected)}, got {shown}"
    for name in sorted(props):
        problem = validate_property_value(name, props[name])
        if problem:
            return None, problem
    task = Task(
        record_id=obj["record_id"],
        masked_smiles=obj["masked_smiles"],
        mask=obj["mask"],
        properties=props,
        candidates=tuple(candidates),
        line=line,
    )
    return task, ""


def _label_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def label_problem(
    condition: str,
    obj: dict[str, Any],
    number: int,
    text: str,
    seen: Container[str],
    candidates: int | None,
) -> tuple[str, str | None, Label | None]:
    """The label of one parsed label line, or why it is not one (and the value to show).

    ``seen`` holds the record ids of the labels read so far; ``candidates`` is the candidate
    count of the task the line names (``None`` when no task has that record id).
    """
    rid, label = obj.get("record_id"), obj.get("label")
    if (
        not isinstance(rid, str)
        or not rid.strip()
        or not isinstance(label, int)
        or (isinstance(label, bool))
    ):
        return "a label line needs a string record_id and an integer label", text, None
    if rid in seen:
        return "duplicate record_id", rid, None
    if candidates is None:
        return "label for a record not in the task file", rid, None
    if not 0 <= label < candidates:
        return f"label outside 0..{candidates - 1}", str(label), None
    # The seed's label line is record_id and label; a builder may add the base record and
    # its answer (otherwise the loader finds the base by masked graph and candidates).
    base, source = obj.get("base_record_id"), obj.get("source_label")
    if condition == "counterfactual" and base is not None and not _nonempty_str(base):
        return "base_record_id must be a non-empty string", text, None
    if condition == "counterfactual" and source is not None and not _label_int(source):
        return "source_label must be an integer", text, None
    found = Label(
        rid,
        label,
        number,
        base if isinstance(base, str) else None,
        source if isinstance(source, int) and not isinstance(source, bool) else None,
    )
    return "", None, found


def check_view_name(directory: str, condition: str) -> None:
    """A view is named by one of the benchmark's property directories and conditions."""
    if directory not in PROPERTY_DIRECTORIES:
        raise InputFileError(f"unknown property directory {directory!r}", value=directory)
    if condition not in CONDITIONS:
        raise InputFileError(f"unknown condition {condition!r}", value=condition)


def _check_inside(data_dir: str | Path, path: Path) -> None:
    """Refuse, unread, a task or label file whose real location (symbolic links followed) is
    outside the data folder: its contents are no input, and no diagnostic may quote them."""
    root = Path(os.path.realpath(data_dir))
    real = Path(os.path.realpath(path))
    if path.exists() and root != real and root not in real.parents:
        raise InputFileError(
            "a symbolic link to a file outside the data folder: refused unread", path=path
        )


def load_view(data_dir: str | Path, directory: str, condition: str) -> ViewData:
    """Load and check one task file and its label file."""
    check_view_name(directory, condition)
    view = ViewData(
        directory,
        condition,
        tasks_path(data_dir, directory, condition),
        labels_path(data_dir, directory, condition),
    )
    for path in (view.task_path, view.label_path):
        _check_inside(data_dir, path)
    seen: set[str] = set()
    for number, text, obj in _read_objects(view.task_path):
        task, problem = parse_task(directory, obj, number)
        if task is None:
            raise InputFileError(problem, path=view.task_path, line=number, value=text)
        if task.record_id in seen:
            raise InputFileError(
                "duplicate record_id", path=view.task_path, line=number, value=task.record_id
            )
        seen.add(task.record_id)
        view.tasks.append(task)
    by_id = view.task_by_id()
    for number, text, obj in _read_objects(view.label_path):
        rid = obj.get("record_id")
        task = by_id.get(rid) if isinstance(rid, str) else None
        candidates = None if task is None else len(task.candidates)
        problem, value, label = label_problem(condition, obj, number, text, view.labels, candidates)
        if label is None:
            raise InputFileError(problem, path=view.label_path, line=number, value=value)
        view.labels[label.record_id] = label
    unlabeled = [t for t in view.tasks if t.record_id not in view.labels]
    if unlabeled:
        raise InputFileError(
            "task has no label",
            path=view.task_path,
            line=unlabeled[0].line,
            value=unlabeled[0].record_id,
        )
    return view


def _check_pair(correct: ViewData, other: ViewData) -> None:
    """Correct and shuffled views share record ids, candidates, mask and answers."""
    base = correct.task_by_id()
    if set(base) != {t.record_id for t in other.tasks}:
        only = sorted(set(base) ^ {t.record_id for t in other.tasks})[0]
        raise InputFileError(
            f"{correct.condition} and {other.condition} views differ in record ids",
            path=other.task_path,
            value=only,
        )
    for task in other.tasks:
        ref = base[task.record_id]
        if (task.masked_smiles, task.mask, task.candidates) != (
            ref.masked_smiles,
            ref.mask,
            ref.candidates,
        ):
            raise InputFileError(
                f"masked graph or candidate list differs from the {correct.condition} view",
                path=other.task_path,
                line=task.line,
                value=task.record_id,
            )
        if other.labels[task.record_id].label != correct.labels[task.record_id].label:
            raise InputFileError(
                f"answer index differs from the {correct.condition} view",
                path=other.label_path,
                line=other.labels[task.record_id].line,
                value=task.record_id,
            )


def find_base(candidates: Sequence[str], where: tuple[Path, int], value: str) -> str:
    """The one correct-view record a counterfactual task shares its masked graph and
    candidates with (``candidates``: the matching record ids); an error otherwise."""
    if len(candidates) == 1:
        return candidates[0]
    problem = "matches no record" if not candidates else "matches several records"
    raise InputFileError(
        f"counterfactual task {problem} of the correct view by masked graph and candidates "
        "(give base_record_id in its label line)",
        path=where[0],
        line=where[1],
        value=value,
    )


def _infer_bases(correct: ViewData, cf: ViewData) -> None:
    """Fill in base_record_id and source_label where a seed-format label line left them out."""
    by_graph: dict[str, list[str]] = {}
    for task in correct.tasks:
        key = json.dumps([task.masked_smiles, task.mask, list(task.candidates)], sort_keys=True)
        by_graph.setdefault(key, []).append(task.record_id)
    for task in cf.tasks:
        label = cf.labels[task.record_id]
        base = label.base_record_id
        if base is None:
            key = json.dumps([task.masked_smiles, task.mask, list(task.candidates)], sort_keys=True)
            base = find_base(by_graph.get(key, []), (cf.task_path, task.line), task.record_id)
        source = label.source_label
        if source is None and base in correct.labels:
            source = correct.labels[base].label
        cf.labels[task.record_id] = Label(label.record_id, label.label, label.line, base, source)


def _check_counterfactual(correct: ViewData, cf: ViewData) -> None:
    _infer_bases(correct, cf)
    base = correct.task_by_id()
    for task in cf.tasks:
        label = cf.labels[task.record_id]
        ref = base.get(label.base_record_id or "")
        if ref is None:
            raise InputFileError(
                "base_record_id is not a record of the correct view",
                path=cf.label_path,
                line=label.line,
                value=label.base_record_id,
            )
        if (task.masked_smiles, task.mask, task.candidates) != (
            ref.masked_smiles,
            ref.mask,
            ref.candidates,
        ):
            raise InputFileError(
                "masked graph or candidate list differs from its base record",
                path=cf.task_path,
                line=task.line,
                value=task.record_id,
            )
        if label.source_label != correct.labels[ref.record_id].label:
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


def load_directory(data_dir: str | Path, directory: str) -> dict[str, ViewData]:
    """Load the three views of one property directory and check them against each other."""
    views = {c: load_view(data_dir, directory, c) for c in CONDITIONS}
    _check_pair(views["correct"], views["shuffled"])
    _check_counterfactual(views["correct"], views["counterfactual"])
    return views


def present_directories(data_dir: str | Path) -> tuple[Path, list[str]]:
    """The data folder and its property directories, in the benchmark's order; a missing
    folder or one without any is an error naming it."""
    root = Path(data_dir)
    if not root.is_dir():
        raise InputFileError("data folder not found", path=root)
    for name in PROPERTY_DIRECTORIES:  # a property name that is not a folder is never skipped
        entry = root / name
        if (entry.exists() or entry.is_symlink()) and not entry.is_dir():
            kind = "a file" if entry.exists() else "a broken symbolic link"
            raise InputFileError(f"property directory {name!r} is {kind}, not a folder", path=entry)
    present = [d for d in PROPERTY_DIRECTORIES if (root / d).is_dir()]
    if not present:
        raise InputFileError(
            f"no property directory found (expected some of {', '.join(PROPERTY_DIRECTORIES)})",
            path=root,
        )
    return root, present


def load_dataset(data_dir: str | Path) -> dict[str, dict[str, ViewData]]:
    """Every property directory present under ``data_dir``, in the benchmark's order."""
    root, present = present_directories(data_dir)
    return {d: load_directory(root, d) for d in present}


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone loader: validate every task file under a data folder and print the counts."""
    args = list(sys.argv[1:] if argv is None else argv)
    data = args[0] if args else "data"
    try:
        dataset = load_dataset(data)
    except ChemgaugeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for directory, views in dataset.items():
        print(f"{directory}: " + ", ".join(f"{c} {len(views[c].tasks)}" for c in CONDITIONS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
