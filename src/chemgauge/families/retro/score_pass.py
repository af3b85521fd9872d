"""The scoring pass of a retro run: model outputs batch by batch, scored on the executor,
journaled as each target finishes.

A model with a :class:`~chemgauge.families.retro.engine.replica.Replica` (one that predicts
in Python) predicts on the executor: each worker builds it once and predicts and scores whole
batches, the same batches whatever the executor. Any other model runs lazily in the main
process while workers score. A model call that raises is retried product by product
(:meth:`~chemgauge.families.retro.engine.base.RetroModel.predict_isolating`); a product that
still fails, or whose scoring fails, gets an error row kept in memory and never journaled, so
a resumed run asks again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemgauge.errors import BackendError
from chemgauge.eval.executors import Executor, ItemFailure, describe_failure
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.engine.base import ModelFailure, ModelOutput, RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.engine.replica import (
    Replica,
    forget_replicas,
    replica_model,
    seed_replica,
)
from chemgauge.families.retro.journal import journal_entry
from chemgauge.families.retro.scoring import ScoreSettings, ScoreTask, score_chunk
from chemgauge.families.retro.spool import iter_spooled

__all__ = [
    "BatchJob",
    "BatchOutcome",
    "ProgressCallback",
    "ScoreState",
    "TargetOutcome",
    "error_row",
    "predict_and_score",
    "score_targets",
]

ProgressCallback = Callable[[int], None]


def error_row(
    target: dict[str, Any], status: str, reason: str, detail: str, returned: int, n_outputs: int
) -> dict[str, Any]:
    """The row of a target that could not be scored (a miss, with why)."""
    return {
        **target,
        "status": status,
        "error": {"reason": reason, "detail": detail},
        "n_returned": returned,
        "n_outputs": n_outputs,
        "n_valid_unique": 0,
        "invalid_ranks": [],
        "invalid_reasons": [],
        "duplicate_ranks": [],
        "product_in_reactants_ranks": [],
        "hits": None,
        "unsupported": {},
        "truth_unsupported": [],
    }


@dataclass
class ScoreState:
    """What the scoring pass keeps besides journal rows."""

    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # target -> error row
    model_seconds: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: model-call and post-processing seconds of targets not journaled (their error rows)
    unjournaled_seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])
    progress: ProgressCallback | None = None
    resumed: int = 0
    scored: int = 0


def _predict(
    model: RetroModel, products: list[str], num_results: int, strict: bool
) -> list[ModelOutput | ModelFailure]:
    """Outputs per product; a product the model fails on is a :class:`ModelFailure`, or,
    under ``strict``, an error naming the batch."""
    if not strict:
        return model.predict_isolating(products, num_results)
    try:
        return list(model.predict(products, num_results))
    except Exception as exc:  # any back-end failure stops a strict run, named
        raise BackendError(
            f"model {model.name!r} failed on a batch of {len(products)} products "
            f"(first {products[0]!r}): {type(exc).__name__}: {exc}"
        ) from exc


def _pending_batches(
    spool: Path, journal: ResumableJsonlWriter, batch_size: int, state: ScoreState
) -> Iterator[list[dict[str, Any]]]:
    """Targets not yet journaled, in spool order, in model batches of ``batch_size``."""
    batch: list[dict[str, Any]] = []
    for target in iter_spooled(spool):
        if journal.done(target["target"]):
            state.resumed += 1
            continue
        batch.append(target)
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _tasks(
    spool: Path,
    journal: ResumableJsonlWriter,
    model: RetroModel,
    config: RetroEvalConfig,
    settings: ScoreSettings,
    state: ScoreState,
) -> Iterator[tuple[ScoreTask, ScoreSettings]]:
    """Model outputs batch by batch for targets not yet journaled (lazily, so the model
    runs while workers score)."""
    from_file = model if isinstance(model, PredictionsFileModel) else None
    for batch in _pending_batches(spool, journal, config.batch_size, state):
        products = [t["product"] for t in batch]
        results = _predict(model, products, config.num_top_results, config.strict)
        for target, result in zip(batch, results, strict=True):
            if isinstance(result, ModelFailure):
                state.errors[target["target"]] = error_row(
                    target, "model_error", result.reason, result.detail, 0, 0
                )
                if state.progress is not None:
                    state.progress(1)
                continue
            status = None
            if from_file is not None and not from_file.has(target["product"]):
                status = "missing_from_predictions"
            state.model_seconds[target["target"]] = (result.seconds, result.post_seconds)
            state.scored += 1
            yield ScoreTask(target, result.outputs, result.returned, status), settings


@dataclass(frozen=True, slots=True)
class BatchJob:
    """One model batch for a worker: the replica to predict with and how to score."""

    replica: Replica
    targets: list[dict[str, Any]]
    num_results: int
    strict: bool
    settings: ScoreSettings


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """What a worker made of one target: the model's answer, then its row or why none."""

    target: dict[str, Any]
    output: ModelOutput | ModelFailure
    row: dict[str, Any] | None = None
    failure: tuple[str, str] | None = None  # the scoring failure (reason, detail)
    score_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """A batch's outcomes in target order, the model calls it took, and, under ``strict``,
    the back-end failure that stops the run."""

    targets: list[TargetOutcome]
    calls: int
    stop: str | None = None


def predict_and_score(jobs: list[BatchJob]) -> list[BatchOutcome]:
    """Executor entry point: each batch predicted by this process's replica, then scored."""
    return [_run_batch(job) for job in jobs]


def _run_batch(job: BatchJob) -> BatchOutcome:
    model = replica_model(job.replica)
    calls = model.calls
    products = [t["product"] for t in job.targets]
    try:
        results = _predict(model, products, job.num_results, job.strict)
    except BackendError as exc:  # strict: the run stops, in the main process
        return BatchOutcome([], model.calls - calls, str(exc))
    outcomes: list[TargetOutcome] = []
    for target, result in zip(job.targets, results, strict=True):
        if isinstance(result, ModelFailure):
            outcomes.append(TargetOutcome(target, result))
            continue
        task = ScoreTask(target, result.outputs, result.returned)
        start = time.perf_counter()
        try:
            row = score_chunk([(task, job.settings)])[0]
        except Exception as exc:  # a scoring failure is this target's error row
            outcomes.append(TargetOutcome(target, result, failure=describe_failure(exc)))
            continue
        outcomes.append(TargetOutcome(target, result, row, None, time.perf_counter() - start))
    return BatchOutcome(outcomes, model.calls - calls)


def _score_replicated(
    spool: Path,
    journal: ResumableJsonlWriter,
    model: RetroModel,
    replica: Replica,
    config: RetroEvalConfig,
    runner: Executor,
    state: ScoreState,
) -> None:
    """Predict and score on ``runner``, a model batch per chunk, journaling in spool order."""
    settings = config.score_settings()
    jobs = (
        BatchJob(replica, batch, config.num_top_results, config.strict, settings)
        for batch in _pending_batches(spool, journal, config.batch_size, state)
    )
    in_flight: deque[BatchJob] = deque()

    def remember() -> Iterator[BatchJob]:
        for job in jobs:
            in_flight.append(job)
            yield job

    if runner.config.kind == "serial":  # in this process: predict with the model given
        seed_replica(replica, model)
    try:
        for outcome in runner.map(predict_and_score, remember(), chunk_size=1):
            job = in_flight.popleft()
            if isinstance(outcome, ItemFailure):  # the batch's worker died, every retry
                outcome = _failed_batch(job, outcome)
            if outcome.stop is not None:
                raise BackendError(outcome.stop)
            model.calls += outcome.calls
            for each in outcome.targets:
                _record(each, journal, state)
    finally:
        forget_replicas()


def _failed_batch(job: BatchJob, failure: ItemFailure) -> BatchOutcome:
    """Every target of a batch whose worker failed on every attempt: a model error each."""
    missing = ModelFailure(failure.reason, failure.detail)
    return BatchOutcome([TargetOutcome(t, missing) for t in job.targets], 0)


def _record(outcome: TargetOutcome, journal: ResumableJsonlWriter, state: ScoreState) -> None:
    """Journal a scored target, or keep its error row (never journaled: a resume asks again)."""
    target, output = outcome.target, outcome.output
    if isinstance(output, ModelFailure):
        state.errors[target["target"]] = error_row(
            target, "model_error", output.reason, output.detail, 0, 0
        )
    elif outcome.row is None:
        state.scored += 1
        reason, detail = outcome.failure or ("exception", "")
        state.errors[target["target"]] = error_row(
            target, "error", reason, detail, output.returned, len(output.outputs)
        )
        state.unjournaled_seconds[0] += output.seconds
        state.unjournaled_seconds[1] += output.post_seconds
    else:
        state.scored += 1
        task = ScoreTask(target, output.outputs, output.returned)
        seconds = (output.seconds, output.post_seconds)
        journal.write(journal_entry(task, outcome.row, seconds, outcome.score_seconds))
    if state.progress is not None:
        state.progress(1)


def score_targets(
    spool: Path,
    journal: ResumableJsonlWriter,
    model: RetroModel,
    config: RetroEvalConfig,
    runner: Executor,
    state: ScoreState,
) -> None:
    """Score every spooled target not yet journaled on ``runner``, journaling each finished
    one (closes the runner and the journal)."""
    replica = model.replica()
    if replica is not None:
        try:
            _score_replicated(spool, journal, model, replica, config, runner, state)
        finally:
            runner.close()
            journal.close()
        return
    settings = config.score_settings()
    try:
        tasks = _tasks(spool, journal, model, config, settings, state)
        in_flight: deque[ScoreTask] = deque()

        def remember() -> Iterator[tuple[ScoreTask, ScoreSettings]]:
            for pair in tasks:
                in_flight.append(pair[0])
                yield pair

        last = time.perf_counter()
        for result in runner.map(score_chunk, remember()):
            task = in_flight.popleft()
            now = time.perf_counter()
            key = task.target["target"]
            seconds = state.model_seconds.pop(key, (0.0, 0.0))
            if isinstance(result, ItemFailure):
                state.errors[key] = error_row(
                    task.target,
                    "error",
                    result.reason,
                    result.detail,
                    task.returned,
                    len(task.outputs),
                )
                state.unjournaled_seconds[0] += seconds[0]
                state.unjournaled_seconds[1] += seconds[1]
            else:
                journal.write(journal_entry(task, result, seconds, now - last))
            last = now
            if state.progress is not None:
                state.progress(1)
    finally:
        runner.close()
        journal.close()
