"""Score one prediction file against one property directory and view (standard library only).

Contract: every task counts once. A missing record, a line marked ``invalid`` (or one whose
index is not an integer), and an index outside the candidate list all count as incorrect and
are counted by kind; a duplicate ``record_id`` rejects the file. Prediction lines that cannot
be attributed to a record (not JSON, no ``record_id``) are counted and leave their record
missing; ids that are not in the task file are counted as unknown.

The ``invalid`` flag, as the seed defines it, is ``true`` when the submission did not parse.
``false``, ``null`` and ``0`` say nothing and score like a line without the flag. Any other
value (``1``, ``"true"``, ``"no"``, a list) is no boolean: it cannot vouch for the answer, so
the line counts as invalid, with a diagnostic naming the value.

Run without chemgauge's dependencies::

    python -m chemgauge.families.p2s.scoring --data DATA --property dipole \\
        --condition correct --predictions predictions.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.errors import ChemgaugeError, InputFileError
from chemgauge.eval.lines import read_lines
from chemgauge.eval.rates import rate
from chemgauge.families.p2s.spec import CONDITIONS, PROPERTY_DIRECTORIES
from chemgauge.families.p2s.taskfile import Task, ViewData, load_view, parse_json_line

__all__ = [
    "Outcome",
    "Prediction",
    "PredictionFile",
    "ScoreResult",
    "main",
    "outcome_of",
    "read_predictions",
    "score_files",
    "score_view",
]

MAX_DIAGNOSTICS = 20


@dataclass(frozen=True)
class Prediction:
    """One attributable prediction line; ``selected`` is ``None`` when the line is invalid."""

    record_id: str
    selected: int | None
    line: int


@dataclass(frozen=True)
class PredictionFile:
    """Predictions keyed by record id, plus the lines that could not be attributed."""

    path: str
    by_record: dict[str, Prediction]
    unattributable: int
    diagnostics: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """How one task was answered: ``hit``, ``miss``, ``missing``, ``invalid``, ``out_of_range``."""

    record_id: str
    status: str
    selected: int | None

    @property
    def correct(self) -> bool:
        """True only for a hit."""
        return self.status == "hit"


@dataclass(frozen=True)
class ScoreResult:
    """Counts for one prediction file over one view; ``outcomes`` follow task-file order."""

    directory: str
    condition: str
    outcomes: tuple[Outcome, ...]
    unknown_records: int
    unattributable_lines: int

    def count(self, status: str) -> int:
        """Number of tasks with this status."""
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def hits(self) -> int:
        """Tasks answered with the labelled index."""
        return self.count("hit")

    @property
    def tasks(self) -> int:
        """Tasks in the view (the denominator, whatever the prediction file holds)."""
        return len(self.outcomes)

    @property
    def accuracy(self) -> float | None:
        """hits / tasks, or ``None`` for an empty view."""
        return self.hits / self.tasks if self.tasks else None

    def to_dict(self) -> dict[str, Any]:
        """Counts for reports (outcomes left out); ``accuracy`` is the report's one rate shape
        (``count``, ``n``, ``value``, a Wilson 95% ``interval`` and its ``method``)."""
        return {
            "property": self.directory,
            "condition": self.condition,
            "hits": self.hits,
            "tasks": self.tasks,
            "accuracy": rate(self.hits, self.tasks),
            "missing": self.count("missing"),
            "invalid": self.count("invalid"),
            "out_of_range": self.count("out_of_range"),
            "unknown_records": self.unknown_records,
            "unattributable_lines": self.unattributable_lines,
        }

    def summary(self) -> str:
        """One human-readable line."""
        acc = "n/a" if self.accuracy is None else f"{self.accuracy:.4f}"
        return (
            f"{self.directory}/{self.condition}: {self.hits} hits / {self.tasks} tasks, "
            f"accuracy {acc}; missing {self.count('missing')}, invalid {self.count('invalid')}, "
            f"out of range {self.count('out_of_range')}; unknown records {self.unknown_records}, "
            f"unattributable lines {self.unattributable_lines}"
        )


def _unflagged(flag: Any) -> bool:
    """An ``invalid`` value that does not mark the line: absent, false, null or 0."""
    return flag is None or flag is False or (type(flag) in (int, float) and flag == 0)


def _index(obj: dict[str, Any]) -> int | None:
    """The selected index, or ``None`` when the line is marked or malformed as invalid."""
    if not _unflagged(obj.get("invalid")):
        return None  # true, or a non-boolean flag, which cannot vouch for an answer either
    value = obj.get("selected_candidate_index")
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value


def _attributed(text: str) -> dict[str, Any] | str:
    """The line's JSON object when it names a record (a non-empty string ``record_id``),
    otherwise why the line cannot be attributed."""
    try:
        obj = parse_json_line(text)
    except ValueError as exc:
        return f"malformed JSON ({exc})"
    rid = obj.get("record_id")
    if not isinstance(rid, str) or not rid:
        return "no string record_id"
    return obj


def read_predictions(path: str | Path, *, strict: bool = False) -> PredictionFile:
    """Read a prediction JSONL file; a duplicate record id is always an error.

    With ``strict``, an unattributable line is an error too instead of a counted one.
    """
    source = Path(path)
    by_record: dict[str, Prediction] = {}
    unattributable = 0
    diagnostics: list[str] = []
    # One reader for every text input (chemgauge.eval.lines, standard library only): a BOM
    # is stripped, a line that is not UTF-8 is counted as unattributable on its own line.
    for line in read_lines(source, keep_undecodable=True):
        number, text = line.number, line.text
        if line.problem is None and not text.strip():
            continue
        obj = line.problem or _attributed(text)
        if isinstance(obj, str):  # why the line names no record
            if strict:
                raise InputFileError(obj, path=source, line=number, value=text)
            unattributable += 1
            if len(diagnostics) < MAX_DIAGNOSTICS:
                diagnostics.append(f"{source}:{number}: {obj}")
            continue
        rid = obj["record_id"]
        if rid in by_record:
            raise InputFileError(
                f"duplicate record_id (first on line {by_record[rid].line})",
                path=source,
                line=number,
                value=rid,
            )
        flag = obj.get("invalid")
        if not (_unflagged(flag) or flag is True) and len(diagnostics) < MAX_DIAGNOSTICS:
            diagnostics.append(
                f"{source}:{number}: invalid flag {flag!r} is not a boolean; counted as invalid"
            )
        by_record[rid] = Prediction(rid, _index(obj), number)
    return PredictionFile(str(source), by_record, unattributable, tuple(diagnostics))


def outcome_of(task: Task, label: int, prediction: Prediction | None) -> Outcome:
    """How one task was answered, given its label and its prediction (if any)."""
    if prediction is None:
        return Outcome(task.record_id, "missing", None)
    if prediction.selected is None:
        return Outcome(task.record_id, "invalid", None)
    if not 0 <= prediction.selected < len(task.candidates):
        return Outcome(task.record_id, "out_of_range", prediction.selected)
    hit = prediction.selected == label
    return Outcome(task.record_id, "hit" if hit else "miss", prediction.selected)


def score_view(view: ViewData, predictions: PredictionFile) -> ScoreResult:
    """Score predictions against a loaded view; the task file fixes the denominator."""
    outcomes = [
        outcome_of(
            task, view.labels[task.record_id].label, predictions.by_record.get(task.record_id)
        )
        for task in view.tasks
    ]
    known = {t.record_id for t in view.tasks}
    unknown = sum(1 for rid in predictions.by_record if rid not in known)
    return ScoreResult(
        view.directory, view.condition, tuple(outcomes), unknown, predictions.unattributable
    )


def score_files(
    data_dir: str | Path,
    directory: str,
    condition: str,
    predictions_path: str | Path,
    *,
    strict: bool = False,
) -> ScoreResult:
    """Load one view and one prediction file and score them."""
    view = load_view(data_dir, directory, condition)
    return score_view(view, read_predictions(predictions_path, strict=strict))


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone scorer: prints the counts (or JSON with ``--json``); exit 2 on bad input."""
    parser = argparse.ArgumentParser(description="Score one p2s prediction file.")
    parser.add_argument("--data", default="data", help="benchmark data folder")
    parser.add_argument("--property", required=True, choices=PROPERTY_DIRECTORIES)
    parser.add_argument("--condition", required=True, choices=CONDITIONS)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        result = score_files(
            args.data, args.property, args.condition, args.predictions, strict=args.strict
        )
    except ChemgaugeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=True))
    else:
        print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
