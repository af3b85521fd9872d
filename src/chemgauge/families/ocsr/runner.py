"""Run recognizer attempts under explicit budgets; every planned attempt gets a row.

An attempt the budget cannot reach is recorded ``not_run`` with the reason; nothing planned
is dropped. Before an image reaches a back-end its header is checked against the run's image
limits (a decompression bomb, an absurd resolution, a file that is not an image): a refused
image is recorded ``not_run`` with the reason, costs no request, and is never decoded or
handed on. Images are handed to the back-end under a neutral file name, so a case id never
leaks the answer. Rows go to a resumable journal keyed by attempt id and the hash of what
decides an attempt's row (:func:`~chemgauge.families.ocsr.plan.attempts_config_sha256`):
the same command resumes it, and a larger ``max_requests`` or ``budget_seconds`` resumes it
too, running only the attempts recorded ``not_run`` (a newer row supersedes each).

Attempts run on threads in this process (each is an external program or a request), or as
Ray tasks over a cluster (:mod:`chemgauge.families.ocsr.distributed`); budgets are admitted
in this process either way, so they hold for the whole run.

Rows are never held: the journal keeps only finished keys (and the reasons of attempts
recorded ``not_run``), the plan is generated lazily, and rows are read back from the journal
in plan order (:func:`iter_attempt_rows`), holding one offset per attempt. The manifest
itself stays in memory (one :class:`Case`, about 3 KB, per image): it is one JSON document,
parsed and hashed whole, so a lazy manifest would need another file format.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from chemgauge.eval.journal import ResumableJsonlWriter, iter_journal_by_keys
from chemgauge.families.ocsr.admission import Admission
from chemgauge.families.ocsr.attempts import (
    ATTEMPT_STATUSES,
    JOURNAL_NAME,
    NOT_RUN,
    TIMING_FIELDS,
    PlannedAttempt,
    image_refusal,
    journal_state,
    not_run_row,
    read_attempts,
    recognize_attempt,
    scan_attempts,
)
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import Recognizer
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.plan import (
    attempts_config_sha256,
    describe_plan,
    iter_plan,
    plan_attempts,
    planned_count,
)

__all__ = [
    "ATTEMPT_STATUSES",
    "JOURNAL_NAME",
    "NOT_RUN",
    "TIMING_FIELDS",
    "PlannedAttempt",
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

Record = Callable[[dict[str, Any]], None]


def _local_attempt(
    manifest: Manifest,
    recognizer: Recognizer,
    config: RunConfig,
    planned: PlannedAttempt,
    admission: Admission,
) -> dict[str, Any]:
    refusal = image_refusal(manifest, planned, config.image_limits)
    if refusal:
        return not_run_row(planned, refusal)
    admitted = admission.admit()
    if isinstance(admitted, str):
        return not_run_row(planned, admitted)
    stop = ""
    try:
        source = manifest.image_path(manifest.by_id[planned.case_id])
        row = recognize_attempt(
            recognizer, planned, source, source.suffix.lower(), admitted.timeout
        )
        stop = row["recognition"]["stop_reason"] or ""
    finally:
        admission.finished(stop)
    return row


def _run_threads(
    manifest: Manifest,
    recognizer: Recognizer,
    config: RunConfig,
    todo: Iterator[PlannedAttempt],
    admission: Admission,
    record: Record,
) -> None:
    lock = threading.Lock()
    stop = threading.Event()  # set when the run fails or is interrupted: start nothing new

    def work() -> None:
        while not stop.is_set():
            with lock:
                planned = next(todo, None)
            if planned is None:
                return
            record(_local_attempt(manifest, recognizer, config, planned, admission))

    # The probe: attempts in plan order on this thread until one has run (or none can).
    while not admission.probed:
        planned = next(todo, None)
        if planned is None:
            return
        record(_local_attempt(manifest, recognizer, config, planned, admission))
    if config.jobs == 1:
        work()
        return
    with ThreadPoolExecutor(max_workers=config.jobs) as pool:
        try:
            for future in [pool.submit(work) for _ in range(config.jobs)]:
                future.result()
        except BaseException:
            stop.set()
            raise


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
    key = attempts_config_sha256(manifest, recognizer.describe(), config)
    journal_path = Path(out_dir) / JOURNAL_NAME
    with ResumableJsonlWriter(
        journal_path,
        config_sha256=key,
        key_field="attempt_id",
        restart=restart,
        keep_rows=False,
    ) as journal:
        state = journal_state(journal_path)
        admission = Admission(config, state.started, state.seconds)
        todo = (
            p
            for p in iter_plan(manifest, config)
            if p.attempt_id in state.not_run or not journal.done(p.attempt_id)
        )
        lock = threading.Lock()

        def record(row: dict[str, Any]) -> None:
            # A not_run row that repeats the recorded one verbatim is not written again.
            if row["status"] != NOT_RUN or state.not_run.get(row["attempt_id"]) != row.get(
                "not_run_reason"
            ):
                with lock:
                    journal.write(row)
            if progress is not None:
                progress(1)

        if config.executor == "ray":
            from chemgauge.families.ocsr.distributed import run_on_ray

            run_on_ray(manifest, recognizer, config, todo, admission, record)
        else:
            _run_threads(manifest, recognizer, config, todo, admission, record)
    return journal_path


def iter_attempt_rows(
    journal_path: str | Path, manifest: Manifest, config: RunConfig
) -> Iterator[dict[str, Any]]:
    """The journal's rows in plan order, one at a time (one offset per row is held; the
    newest row of an attempt wins)."""
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
        manifest,
        recognizer,
        config,
        out_dir,
        restart=restart,
        progress=progress,
    )
    return list(iter_attempt_rows(path, manifest, config))
