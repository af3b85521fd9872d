"""The scoring pass of a retro run: model outputs batch by batch, scored on the executor,
journaled as each target finishes.

The model runs lazily while workers score. A model call that raises is retried product by
product (:meth:`~chemgauge.families.retro.engine.base.RetroModel.predict_isolating`); a
product that still fails, or whose scoring fails, gets an error row kept in memory and never
journaled, so a resumed run asks again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemgauge.errors import BackendError
from chemgauge.eval.executors import Executor, ItemFailure
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.engine.base import ModelFailure, ModelOutput, RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.journal import journal_entry
from chemgauge.families.retro.scoring import ScoreSettings, ScoreTask, score_chunk
from chemgauge.families.retro.spool import iter_spooled

__all__ = ["ProgressCallback", "ScoreState", "error_row", "score_targets"]

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
    batch: list[dict[str, Any]] = []
    targets = iter_spooled(spool)
    while True:
        for target in targets:
            if journal.done(target["target"]):
                state.resumed += 1
                continue
            batch.append(target)
            if len(batch) >= config.batch_size:
                break
        if not batch:
            return
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
        batch = []


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
