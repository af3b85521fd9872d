"""Attempt rows: how one planned image workflow is recorded, and how a journal is read back.

Every planned attempt ends as one row: what the recognizer answered, or ``not_run`` with the
reason. A journal is append-only, so a resumed run that reaches an attempt an earlier budget
could not (or records a new reason for it) appends a newer row for it; the newer row wins
and nothing else may be written twice. :func:`scan_attempts` checks a journal line by line
for re-scoring, holding only where each row is.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import ImageRefusedError, InputFileError
from chemgauge.eval.images import ImageLimits, read_image_header
from chemgauge.eval.journal import index_journal, iter_journal_by_keys
from chemgauge.eval.lines import read_lines, read_span
from chemgauge.families.ocsr.engine.base import Recognition, Recognizer
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.pixels import pixels_only

__all__ = [
    "ATTEMPT_STATUSES",
    "JOURNAL_NAME",
    "NOT_RUN",
    "TIMING_FIELDS",
    "AttemptFile",
    "JournalState",
    "PlannedAttempt",
    "attempt_row",
    "image_refusal",
    "journal_state",
    "not_run_row",
    "read_attempts",
    "recognize_attempt",
    "scan_attempts",
]

NOT_RUN = "not_run"
ATTEMPT_STATUSES = ("completed", "provisional", "clarification", "failure", "timeout", NOT_RUN)
#: Row fields that measure time; excluded from the reproducibility hash.
TIMING_FIELDS = ("recognition.elapsed_seconds", "timeout_seconds")
JOURNAL_NAME = "attempts.jsonl"


@dataclass(frozen=True)
class PlannedAttempt:
    """One planned image workflow."""

    index: int
    attempt_id: str
    case_id: str
    repeat: int


def not_run_row(planned: PlannedAttempt, reason: str) -> dict[str, Any]:
    """The row of an attempt that never reached the recognizer, with why."""
    return {
        "attempt_id": planned.attempt_id,
        "case_id": planned.case_id,
        "repeat": planned.repeat,
        "plan_index": planned.index,
        "status": NOT_RUN,
        "not_run_reason": reason,
        "timeout_seconds": None,
        "image_input": None,
        "recognition": None,
    }


def image_refusal(manifest: Manifest, planned: PlannedAttempt, limits: ImageLimits) -> str:
    """Why the case's image must not reach a back-end ("" when it may); never decodes it."""
    try:
        read_image_header(manifest.image_path(manifest.by_id[planned.case_id]), limits)
    except ImageRefusedError as exc:
        return f"image refused: {exc.reason}"  # no path: rows stay location-independent
    except InputFileError as exc:  # the path left the root since the manifest was loaded
        return f"image refused: {exc}"
    return ""


def attempt_row(
    planned: PlannedAttempt,
    timeout: float,
    recognition: Recognition,
    image_input: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The row of an attempt that reached the recognizer (``image_input``: what it was
    sent, :meth:`~chemgauge.families.ocsr.pixels.PixelCopy.record`)."""
    return {
        "attempt_id": planned.attempt_id,
        "case_id": planned.case_id,
        "repeat": planned.repeat,
        "plan_index": planned.index,
        "status": recognition.output.status,
        "not_run_reason": None,
        "timeout_seconds": timeout,
        "image_input": image_input,
        "recognition": recognition.to_dict(),
    }


def recognize_attempt(
    recognizer: Recognizer,
    planned: PlannedAttempt,
    image: Path | bytes,
    suffix: str,
    timeout: float,
) -> dict[str, Any]:
    """Run one attempt on a pixels-only copy of the image under a neutral name (a case id
    never leaks the answer, nor does metadata: :func:`~chemgauge.families.ocsr.pixels.
    pixels_only`); ``image`` is the file, or its bytes when they were shipped to a worker.
    An image whose chunk structure cannot be read is recorded ``not_run``, never sent."""
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    try:
        copy = pixels_only(data, suffix)
    except ImageRefusedError as exc:
        return not_run_row(planned, f"image refused: {exc.reason}")
    with tempfile.TemporaryDirectory(prefix="chemgauge-ocsr-") as scratch:
        neutral = Path(scratch) / f"input{copy.suffix}"
        neutral.write_bytes(copy.data)
        recognition = recognizer.recognize(neutral, timeout)
    return attempt_row(planned, timeout, recognition, copy.record())


@dataclass
class JournalState:
    """What a journal already holds: attempts started, their recognition seconds, and the
    reason of each attempt recorded ``not_run`` (those are planned again on resume)."""

    started: int = 0
    seconds: float = 0.0
    not_run: dict[str, str] = field(default_factory=dict)


def journal_state(journal_path: Path) -> JournalState:
    """Read a journal's state (newest row per attempt), one row at a time."""
    keys = index_journal(journal_path, "attempt_id")
    state = JournalState()
    for row in iter_journal_by_keys(journal_path, "attempt_id", keys):
        if row is None:
            continue
        if row["status"] == NOT_RUN:
            state.not_run[str(row["attempt_id"])] = str(row.get("not_run_reason"))
        else:
            state.started += 1
            state.seconds += float(row["recognition"]["elapsed_seconds"])
    return state


def _attempt_problem(row: Any, manifest: Manifest) -> str | None:
    """Why a journal line is not an attempt row this chemgauge wrote (``None`` when it is)."""
    if not isinstance(row, dict):
        return "line is not a JSON object"
    attempt_id, case_id = row.get("attempt_id"), row.get("case_id")
    if not isinstance(attempt_id, str) or not attempt_id:
        return "attempt_id must be a non-empty string"
    if not isinstance(case_id, str) or case_id not in manifest.by_id:
        return f"case_id {case_id!r} is not a case of manifest {manifest.name!r}"
    for name, least in (("plan_index", 0), ("repeat", 1)):
        value = row.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            return f"{name} must be an integer >= {least}, got {value!r}"
    if row.get("status") not in ATTEMPT_STATUSES:
        return f"status must be one of {', '.join(ATTEMPT_STATUSES)}, got {row.get('status')!r}"
    recognition = row.get("recognition")
    if recognition is None:
        return None if row["status"] == NOT_RUN else "recognition missing for an attempt that ran"
    if not isinstance(recognition, dict):
        return "recognition must be an object or null"
    elapsed = recognition.get("elapsed_seconds")
    if not isinstance(elapsed, int | float) or isinstance(elapsed, bool) or elapsed != elapsed:
        return f"recognition.elapsed_seconds must be a number, got {elapsed!r}"
    if recognition.get("candidate_format", "smiles") not in ("smiles", "molfile"):
        return "recognition.candidate_format must be 'smiles' or 'molfile'"
    return None


@dataclass(frozen=True)
class AttemptFile:
    """A checked attempts file: where each row is, in plan order (never the rows)."""

    path: Path
    spans: list[tuple[int, int]]  # (byte offset, byte size) of each row's line

    def __len__(self) -> int:
        return len(self.spans)

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows in plan order, read back one at a time."""
        with open(self.path, "rb") as handle:
            for span in self.spans:
                yield orjson.loads(read_span(handle, span))


@dataclass(slots=True)
class _Seen:
    line: int
    plan_index: int
    span: tuple[int, int]
    not_run: bool
    text: str


def scan_attempts(
    path: str | Path, manifest: Manifest, plan: Iterable[PlannedAttempt] | None = None
) -> AttemptFile:
    """Check an attempts journal (``attempts.jsonl``) for re-scoring; rows stay on disk.

    The file is chemgauge's own output, so anything else in it (a line that is not a row of
    this manifest, an attempt written twice other than a newer row for one recorded
    ``not_run``) is an :class:`~chemgauge.errors.InputFileError` naming the file and line,
    never a half-scored report. With ``plan`` every planned attempt must have a row, at its
    planned position, and no other attempt may. Holds a position and the id of each attempt.
    """
    path = Path(path)
    seen: dict[str, _Seen] = {}
    for span in read_lines(path):
        number, text = span.number, span.text
        if not text.strip():
            continue
        try:
            row = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise InputFileError(f"not valid JSON ({exc})", path=path, line=number) from None
        if number == 1 and isinstance(row, dict) and "chemgauge_rows_journal" in row:
            continue
        problem = _attempt_problem(row, manifest)
        if problem is not None:
            raise InputFileError(problem, path=path, line=number, value=text[:120])
        attempt_id = row["attempt_id"]
        earlier = seen.get(attempt_id)
        if earlier is not None and (not earlier.not_run or earlier.text == text):
            raise InputFileError(
                f"attempt {attempt_id!r} is also on line {earlier.line}", path=path, line=number
            )
        seen[attempt_id] = _Seen(
            number, int(row["plan_index"]), (span.offset, span.size), row["status"] == NOT_RUN, text
        )
    if plan is not None:
        _check_plan(path, seen, plan)
    found = sorted(seen.values(), key=lambda item: (item.plan_index, item.line))
    return AttemptFile(path, [item.span for item in found])


def _check_plan(path: Path, seen: dict[str, _Seen], plan: Iterable[PlannedAttempt]) -> None:
    planned = 0
    for attempt in plan:
        planned += 1
        item = seen.get(attempt.attempt_id)
        if item is None:
            raise InputFileError(
                f"planned attempt {attempt.attempt_id!r} has no row (an unfinished run: "
                "finish it with `chemgauge ocsr run --run` and the same options)",
                path=path,
            )
        if item.plan_index != attempt.index:
            raise InputFileError(
                f"attempt {attempt.attempt_id!r} has plan_index {item.plan_index}, the plan "
                f"puts it at {attempt.index}",
                path=path,
                line=item.line,
            )
    if len(seen) != planned:
        raise InputFileError(
            f"{len(seen) - planned} row(s) for attempts the run did not plan", path=path
        )


def read_attempts(path: str | Path, manifest: Manifest) -> list[dict[str, Any]]:
    """Attempt rows of a journal for re-scoring, in plan order, as a list (see
    :func:`scan_attempts`, which the CLI uses to stream them)."""
    return list(scan_attempts(path, manifest).rows())
