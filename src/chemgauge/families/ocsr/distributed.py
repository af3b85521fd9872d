"""Attempts as Ray tasks: OSRA at about 5 s an image needs a cluster for a large collection.

The driver keeps the budgets: it admits each attempt (request count, overall time, image
limits, a back-end stop) before sending it, so ``--max-requests`` and ``--budget-seconds``
hold for the whole run, and the first admitted attempt runs alone as the probe. Each task
carries its image's bytes (or the path every node must see, checked against the manifest's
hash) and the wall-clock time at which the overall budget ends, so an attempt that waited in
Ray's queue past it is ``not_run`` rather than started late. A worker first checks that its
recognizer programs hash like the driver's. Tasks are never retried (a retry would be a
second request): a task that dies becomes a ``failure`` row saying so. Results come back in
plan order and are journaled like a local run's, so rows and their hash are the same.
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.eval.executors import ExecutorConfig, ItemFailure, RayExecutor
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.ocsr.admission import Admission
from chemgauge.families.ocsr.attempts import (
    PlannedAttempt,
    attempt_row,
    image_refusal,
    not_run_row,
    recognize_attempt,
)
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import FAILURE, Recognition, Recognizer, RecognizerOutput
from chemgauge.families.ocsr.manifest import Manifest

__all__ = ["AttemptTask", "RemoteAttempts", "run_on_ray"]


@dataclass(frozen=True, slots=True)
class AttemptTask:
    """One admitted attempt as shipped to a worker."""

    planned: PlannedAttempt
    timeout: float
    deadline: float | None  # time.time() at which the overall budget ends
    suffix: str
    sha256: str
    image: bytes | None  # the image's bytes, or None: read ``path`` on the worker
    path: str | None


#: Per worker process: the outcome of checking a recognizer's programs, by expected hashes.
_PROGRAM_CHECKS: dict[str, str] = {}


def _program_problem(recognizer: Recognizer, expected: Mapping[str, str]) -> str:
    key = sha256_json(dict(expected))
    if key not in _PROGRAM_CHECKS:
        here = recognizer.programs(fresh=True)
        differs = sorted(name for name in expected if here.get(name) != expected[name])
        _PROGRAM_CHECKS[key] = (
            f"recognizer differs on this worker node ({', '.join(differs)}: not the driver's "
            "program)"
            if differs
            else ""
        )
    return _PROGRAM_CHECKS[key]


class RemoteAttempts:
    """The chunk function Ray ships to workers: runs each task with the driver's recognizer."""

    def __init__(
        self, recognizer: Recognizer, programs: Mapping[str, str], budget_seconds: float | None
    ) -> None:
        self.recognizer = recognizer
        self.programs = dict(programs)
        self.budget_seconds = budget_seconds

    def __call__(self, tasks: list[AttemptTask]) -> list[dict[str, Any]]:
        problem = _program_problem(self.recognizer, self.programs)
        return [self._one(task, problem) for task in tasks]

    def _one(self, task: AttemptTask, problem: str) -> dict[str, Any]:
        if problem:
            return not_run_row(task.planned, problem)
        timeout = task.timeout
        if task.deadline is not None:
            left = task.deadline - time.time()
            if left <= 0:
                return not_run_row(
                    task.planned, f"overall budget ({self.budget_seconds:g} s) exhausted"
                )
            timeout = min(timeout, round(left, 3))
        try:
            data = task.image if task.image is not None else Path(str(task.path)).read_bytes()
        except OSError as exc:
            return not_run_row(task.planned, f"image unreadable on the worker ({exc.strerror})")
        actual = hashlib.sha256(data).hexdigest()
        if actual != task.sha256:
            return not_run_row(
                task.planned, f"image on the worker differs from the manifest (sha256 {actual})"
            )
        return recognize_attempt(self.recognizer, task.planned, data, task.suffix, timeout)


def _failure_row(recognizer: Recognizer, task: AttemptTask, failure: ItemFailure) -> dict[str, Any]:
    """The row of an attempt whose Ray task died: it was started, so it is a failure."""
    output = RecognizerOutput(FAILURE, message=f"{failure.reason}: {failure.detail}")
    recognition = Recognition(output, recognizer.name, recognizer.version(), 0.0)
    return attempt_row(task.planned, task.timeout, recognition)


def run_on_ray(
    manifest: Manifest,
    recognizer: Recognizer,
    config: RunConfig,
    todo: Iterator[PlannedAttempt],
    admission: Admission,
    record: Callable[[dict[str, Any]], None],
) -> None:
    """Admit attempts here and run them as Ray tasks (``config.jobs`` CPUs when this starts
    a local cluster); every row goes to ``record``."""
    executor = RayExecutor(
        ExecutorConfig(
            kind="ray",
            jobs=config.jobs,
            chunk_size=1,
            max_retries=0,
            ray_address=config.ray_address,
            ray_timeout_s=config.ray_timeout,
        )
    )
    function = RemoteAttempts(recognizer, recognizer.programs(), config.budget_seconds)
    sent: deque[AttemptTask] = deque()

    def feed(limit: int | None) -> Iterator[AttemptTask]:
        count = 0
        while limit is None or count < limit:
            planned = next(todo, None)
            if planned is None:
                return
            refusal = image_refusal(manifest, planned, config.image_limits)
            admitted = refusal or admission.admit()
            if isinstance(admitted, str):
                record(not_run_row(planned, admitted))
                continue
            case = manifest.by_id[planned.case_id]
            path = manifest.image_path(case)
            deadline = None if admitted.remaining is None else time.time() + admitted.remaining
            task = AttemptTask(
                planned,
                admitted.timeout,
                deadline,
                path.suffix.lower(),
                case.sha256,
                path.read_bytes() if config.ship_images else None,
                None if config.ship_images else str(path),
            )
            sent.append(task)
            count += 1
            yield task

    try:
        for limit in (1, None):  # the probe alone, then the rest
            for result in executor.map(function, feed(limit), chunk_size=1):
                task = sent.popleft()
                row = (
                    _failure_row(recognizer, task, result)
                    if isinstance(result, ItemFailure)
                    else result
                )
                recognition = row.get("recognition") or {}
                admission.finished(str(recognition.get("stop_reason") or ""))
                record(row)
    finally:
        executor.close()
