"""Plan and run recognizer attempts under explicit budgets; every planned attempt gets a row.

The plan is repeat-major (every case once, then every case again), so a budget that runs out
cuts repeats before first attempts. An attempt the budget cannot reach is recorded
``not_run`` with the reason; nothing planned is dropped. Before an image reaches a back-end
its header is checked against the run's image limits (a decompression bomb, an absurd
resolution, a file that is not an image): a refused image is recorded ``not_run`` with the
reason, costs no request, and is never decoded or handed on. Images are handed to the
back-end under a neutral file name, so a case id never leaks the answer. Rows go to a resumable
journal keyed by attempt id and the run's configuration hash.

Rows are never held: the journal keeps only finished keys, the plan is generated lazily, and
rows are read back from the journal in plan order (:func:`iter_attempt_rows`), holding one
offset per attempt. The manifest itself stays in memory (one :class:`Case`, about 3 KB, per
image): it is one JSON document, parsed and hashed whole, so a lazy manifest would need
another file format.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.ocsr.manifest import Manifest
from chemgauge.engines.ocsr.base import Recognizer
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.images import ImageLimits, ImageRefusedError, read_image_header
from chemgauge.eval.provenance import sha256_json
from chemgauge.eval.records import (
    ResumableJsonlWriter,
    index_journal,
    iter_journal_by_keys,
    iter_line_spans,
    read_span,
)

__all__ = [
    "ATTEMPT_STATUSES",
    "NOT_RUN",
    "TIMING_FIELDS",
    "PlannedAttempt",
    "RunConfig",
    "describe_plan",
    "iter_attempt_rows",
    "iter_plan",
    "journal_attempts",
    "plan_attempts",
    "planned_count",
    "read_attempts",
    "run_attempts",
    "scan_attempts",
]

NOT_RUN = "not_run"
ATTEMPT_STATUSES = ("completed", "provisional", "clarification", "failure", "timeout", NOT_RUN)
#: Row fields that measure time; excluded from the reproducibility hash.
TIMING_FIELDS = ("recognition.elapsed_seconds", "timeout_seconds")
JOURNAL_NAME = "attempts.jsonl"


@dataclass(frozen=True)
class RunConfig:
    """Run policy: repeats, budgets (``None`` means unbounded) and the largest image sent."""

    repeats: int = 1
    max_requests: int | None = None
    per_workflow_seconds: float = 60.0
    budget_seconds: float | None = None
    jobs: int = 1
    image_limits: ImageLimits = field(default_factory=ImageLimits)

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ConfigError(f"repeats must be at least 1, got {self.repeats}")
        if self.max_requests is not None and self.max_requests < 0:
            raise ConfigError(f"max_requests must be >= 0, got {self.max_requests}")
        if self.per_workflow_seconds <= 0:
            raise ConfigError(f"per-workflow seconds must be > 0, got {self.per_workflow_seconds}")
        if self.budget_seconds is not None and self.budget_seconds <= 0:
            raise ConfigError(f"budget seconds must be > 0, got {self.budget_seconds}")
        if self.jobs < 1:
            raise ConfigError(f"jobs must be at least 1, got {self.jobs}")

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping (jobs excluded: it never changes results, only their order of work)."""
        out = asdict(self)
        out.pop("jobs")
        return out


@dataclass(frozen=True)
class PlannedAttempt:
    """One planned image workflow."""

    index: int
    attempt_id: str
    case_id: str
    repeat: int


def iter_plan(manifest: Manifest, config: RunConfig) -> Iterator[PlannedAttempt]:
    """Every attempt the run intends, repeat-major, in manifest order (generated lazily)."""
    index = 0
    for repeat in range(1, config.repeats + 1):
        for case in manifest.cases:
            yield PlannedAttempt(index, f"{case.id}#r{repeat}", case.id, repeat)
            index += 1


def plan_attempts(manifest: Manifest, config: RunConfig) -> list[PlannedAttempt]:
    """The whole plan as a list (see :func:`iter_plan`)."""
    return list(iter_plan(manifest, config))


def planned_count(manifest: Manifest, config: RunConfig) -> int:
    """How many attempts the plan holds."""
    return len(manifest.cases) * config.repeats


def describe_plan(manifest: Manifest, config: RunConfig, backend: dict[str, Any]) -> str:
    """Human-readable dry-run plan."""
    planned = planned_count(manifest, config)
    with_reference = config.repeats * sum(1 for c in manifest.cases if c.reference is not None)
    reachable = planned if config.max_requests is None else min(planned, config.max_requests)
    lines = [
        f"manifest {manifest.name}: {len(manifest.cases)} images",
        f"backend: {backend}",
        f"planned attempts: {planned} ({config.repeats} repeat(s); {with_reference} with a "
        f"finite reference, {planned - with_reference} qualitative)",
        f"budgets: max requests "
        f"{'unbounded' if config.max_requests is None else config.max_requests}, "
        f"{config.per_workflow_seconds:g} s per workflow, overall "
        f"{config.budget_seconds if config.budget_seconds is not None else 'unbounded'} s",
        f"at most {reachable} attempt(s) can start; the rest would be recorded not_run",
        "dry run: nothing was sent to the back-end; add --run to execute",
    ]
    return "\n".join(lines)


class _Budget:
    """Thread-safe admission of attempts against the request and time budgets."""

    def __init__(self, config: RunConfig, used_requests: int, used_seconds: float) -> None:
        self.config = config
        self.requests = used_requests
        self.start = time.monotonic() - used_seconds
        self.lock = threading.Lock()

    def admit(self) -> tuple[float | None, str]:
        with self.lock:
            if self.config.max_requests is not None and self.requests >= self.config.max_requests:
                return None, f"max_requests ({self.config.max_requests}) reached"
            timeout = self.config.per_workflow_seconds
            if self.config.budget_seconds is not None:
                remaining = self.config.budget_seconds - (time.monotonic() - self.start)
                if remaining <= 0:
                    return None, f"overall budget ({self.config.budget_seconds:g} s) exhausted"
                timeout = min(timeout, remaining)
            self.requests += 1
            return round(timeout, 3), ""


def run_config_sha256(manifest: Manifest, recognizer: Recognizer, config: RunConfig) -> str:
    """Hash of everything that decides the rows: manifest content, back-end and budgets."""
    return sha256_json(
        {
            "manifest": manifest.model_dump(mode="json", exclude={"root"}),
            "backend": recognizer.describe(),
            "config": config.to_dict(),
        }
    )


def _not_run_row(planned: PlannedAttempt, reason: str) -> dict[str, Any]:
    return {
        "attempt_id": planned.attempt_id,
        "case_id": planned.case_id,
        "repeat": planned.repeat,
        "plan_index": planned.index,
        "status": NOT_RUN,
        "not_run_reason": reason,
        "timeout_seconds": None,
        "recognition": None,
    }


def _image_refusal(manifest: Manifest, planned: PlannedAttempt, limits: ImageLimits) -> str:
    """Why the case's image must not reach a back-end ("" when it may); never decodes it."""
    try:
        read_image_header(manifest.image_path(manifest.by_id[planned.case_id]), limits)
    except ImageRefusedError as exc:
        return f"image refused: {exc.reason}"  # no path: rows stay location-independent
    except InputFileError as exc:  # the path left the root since the manifest was loaded
        return f"image refused: {exc}"
    return ""


def _attempt(
    manifest: Manifest, recognizer: Recognizer, planned: PlannedAttempt, timeout: float
) -> dict[str, Any]:
    case = manifest.by_id[planned.case_id]
    source = manifest.image_path(case)
    with tempfile.TemporaryDirectory(prefix="chemgauge-ocsr-") as scratch:
        neutral = Path(scratch) / f"input{source.suffix.lower() or '.png'}"
        shutil.copyfile(source, neutral)
        recognition = recognizer.recognize(neutral, timeout)
    return {
        "attempt_id": planned.attempt_id,
        "case_id": planned.case_id,
        "repeat": planned.repeat,
        "plan_index": planned.index,
        "status": recognition.output.status,
        "not_run_reason": None,
        "timeout_seconds": timeout,
        "recognition": recognition.to_dict(),
    }


def _spent(journal_path: Path) -> tuple[int, float]:
    """Attempts started and recognition seconds spent by the rows already journaled (a resumed
    run draws on the same budget); read back in journal-key order, never held."""
    keys = index_journal(journal_path, "attempt_id")
    started = [0]

    def elapsed() -> Iterator[float]:
        for row in iter_journal_by_keys(journal_path, "attempt_id", keys):
            if row is not None and row["status"] != NOT_RUN:
                started[0] += 1
                yield float(row["recognition"]["elapsed_seconds"])

    seconds = sum(elapsed())
    return started[0], seconds


def journal_attempts(
    manifest: Manifest,
    recognizer: Recognizer,
    config: RunConfig,
    out_dir: str | Path,
    *,
    restart: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Run the plan, journaling each row as it finishes (in completion order); returns the
    journal's path. Nothing is held: read the rows back with :func:`iter_attempt_rows`."""
    recognizer.check()
    config_hash = run_config_sha256(manifest, recognizer, config)
    journal_path = Path(out_dir) / JOURNAL_NAME
    with ResumableJsonlWriter(
        journal_path,
        config_sha256=config_hash,
        key_field="attempt_id",
        restart=restart,
        keep_rows=False,
    ) as journal:
        started, used_seconds = _spent(journal_path)
        budget = _Budget(config, started, used_seconds)
        lock = threading.Lock()
        queue = (p for p in iter_plan(manifest, config) if not journal.done(p.attempt_id))

        def work() -> None:
            while True:
                with lock:
                    planned = next(queue, None)
                if planned is None:
                    return
                refusal = _image_refusal(manifest, planned, config.image_limits)
                timeout, reason = (None, refusal) if refusal else budget.admit()
                if timeout is None:
                    row = _not_run_row(planned, reason)
                else:
                    row = _attempt(manifest, recognizer, planned, timeout)
                with lock:
                    journal.write(row)
                if progress is not None:
                    progress(1)

        if config.jobs == 1:
            work()
        else:
            with ThreadPoolExecutor(max_workers=config.jobs) as pool:
                for future in [pool.submit(work) for _ in range(config.jobs)]:
                    future.result()
    return journal_path


def iter_attempt_rows(
    journal_path: str | Path, manifest: Manifest, config: RunConfig
) -> Iterator[dict[str, Any]]:
    """The journal's rows in plan order, one at a time (one offset per row is held)."""
    ids = (p.attempt_id for p in iter_plan(manifest, config))
    for planned, row in zip(
        iter_plan(manifest, config),
        iter_journal_by_keys(journal_path, "attempt_id", ids),
        strict=True,
    ):
        if row is None:
            raise RuntimeError(f"{journal_path}: attempt {planned.attempt_id} has no row")
        yield row


def run_attempts(
    manifest: Manifest,
    recognizer: Recognizer,
    config: RunConfig,
    out_dir: str | Path,
    *,
    restart: bool = False,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the plan and return every row in plan order (a list: for small runs and tests; the
    CLI streams with :func:`journal_attempts` and :func:`iter_attempt_rows`)."""
    path = journal_attempts(
        manifest, recognizer, config, out_dir, restart=restart, progress=progress
    )
    return list(iter_attempt_rows(path, manifest, config))


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


def scan_attempts(path: str | Path, manifest: Manifest) -> AttemptFile:
    """Check an attempts journal (``attempts.jsonl``) for re-scoring; rows stay on disk.

    The file is chemgauge's own output, so anything else in it (a line that is not a row of
    this manifest, a repeated attempt) is an :class:`~chemgauge.errors.InputFileError`
    naming the file and line, never a half-scored report. Holds a plan index, a position
    and the id of each attempt.
    """
    path = Path(path)
    found: list[tuple[int, tuple[int, int]]] = []
    lines: dict[str, int] = {}
    for span in iter_line_spans(path):
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
        if attempt_id in lines:
            raise InputFileError(
                f"attempt {attempt_id!r} is also on line {lines[attempt_id]}",
                path=path,
                line=number,
            )
        lines[attempt_id] = number
        found.append((int(row["plan_index"]), (span.offset, span.size)))
    found.sort(key=lambda item: item[0])  # stable: file order among equal plan indexes
    return AttemptFile(path, [where for _, where in found])


def read_attempts(path: str | Path, manifest: Manifest) -> list[dict[str, Any]]:
    """Attempt rows of a journal for re-scoring, in plan order, as a list (see
    :func:`scan_attempts`, which the CLI uses to stream them)."""
    return list(scan_attempts(path, manifest).rows())
