"""Run a retro evaluation: targets -> model outputs -> rows -> report, resumable.

Files under ``results_dir``:

* ``predictions.jsonl``: append-only journal, one line per finished target (raw outputs,
  its row, timing), keyed by target identity and tied to the config hash. A restart drops a
  truncated last line and skips finished targets; a different configuration is refused.
* ``rows.jsonl``: one row per target in data order, no timing: byte-reproducible.
* ``report.json``: metrics, data accounting, model description, provenance and the
  ``reproducibility_sha256`` over rows. Only its ``run`` block (timing, resume counts,
  executor) may differ between runs on the same inputs.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chemgauge
from chemgauge.benchmarks.retro.config import RetroEvalConfig
from chemgauge.benchmarks.retro.data import DataFile, TargetSet, find_fold_file, load_targets
from chemgauge.benchmarks.retro.metrics import aggregate
from chemgauge.benchmarks.retro.scoring import ScoreSettings, ScoreTask, score_chunk
from chemgauge.chem import RDKIT_VERSION
from chemgauge.engines.retro_models import PredictionsFileModel, RetroModel, build_retro_model
from chemgauge.errors import DataQualityError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.provenance import reproducibility_sha256, run_provenance, sha256_json
from chemgauge.eval.records import (
    ResumableJsonlWriter,
    atomic_write_json,
    atomic_write_rows,
)

__all__ = [
    "PREDICTIONS_JSONL",
    "REPORT_JSON",
    "ROWS_JSONL",
    "SYNTHESEUS_DIVERGENCES",
    "RetroRun",
    "run_retro_eval",
]

log = logging.getLogger(__name__)

PREDICTIONS_JSONL = "predictions.jsonl"
ROWS_JSONL = "rows.jsonl"
REPORT_JSON = "report.json"
REPORT_SCHEMA = "chemgauge-retro-report-v1"

#: Where the ``syntheseus`` convention deliberately differs from syntheseus's own code.
SYNTHESEUS_DIVERGENCES = (
    "an empty output or empty component ('A..B', 'A.') is invalid (syntheseus keeps an empty "
    "molecule, which holds a rank)",
    "atom-map numbers in outputs are ignored (syntheseus compares mapped SMILES as written)",
    "stereo_ignored keeps isotopes and flattens stereo structurally (syntheseus's relaxed mode "
    "writes non-isomeric SMILES, dropping isotopes too)",
    "outputs beyond num_top_results are cut and counted (syntheseus raises)",
)

ProgressCallback = Callable[[int], None]


@dataclass
class RetroRun:
    """What a run produced: the report mapping and where its files are."""

    report: dict[str, Any]
    rows: list[dict[str, Any]]
    results_dir: Path


def _journal_entry(
    task: ScoreTask, row: dict[str, Any], model_seconds: float, score_seconds: float
) -> dict[str, Any]:
    return {
        "target": task.target["target"],
        "outputs": list(task.outputs),
        "row": row,
        "timing": {"model_s": model_seconds, "score_s": score_seconds},
    }


def _error_row(task: ScoreTask, failure: ItemFailure) -> dict[str, Any]:
    return {
        **task.target,
        "status": "error",
        "error": {"reason": failure.reason, "detail": failure.detail},
        "n_returned": task.returned,
        "n_outputs": len(task.outputs),
        "n_valid_unique": 0,
        "invalid_ranks": [],
        "duplicate_ranks": [],
        "product_in_reactants_ranks": [],
        "hits": None,
        "unsupported": {},
        "truth_unsupported": [],
    }


def _tasks(
    targets: TargetSet,
    pending: list[int],
    model: RetroModel,
    config: RetroEvalConfig,
    settings: ScoreSettings,
    model_seconds: dict[str, float],
) -> Iterator[tuple[ScoreTask, ScoreSettings]]:
    """Model outputs batch by batch (lazily, so the model runs while workers score)."""
    for start in range(0, len(pending), config.batch_size):
        batch = [targets.targets[i] for i in pending[start : start + config.batch_size]]
        results = model.predict([t.product for t in batch], config.num_top_results)
        for target, result in zip(batch, results, strict=True):
            status = None
            if isinstance(model, PredictionsFileModel) and not model.has(target.product):
                status = "missing_from_predictions"
                if config.strict:
                    raise DataQualityError(
                        "target product has no line in the predictions file",
                        path=str(model.path),
                        value=target.product,
                    )
            model_seconds[target.target] = result.seconds
            yield (
                ScoreTask(target.to_dict(), result.outputs, result.returned, status),
                settings,
            )


def _config_sha256(config: RetroEvalConfig, file_sha: str, model: RetroModel) -> str:
    return sha256_json(
        {
            "scheme": "chemgauge-retro-config-v1",
            "options": config.row_affecting(),
            "data_sha256": file_sha,
            "model": model.describe(),
            "chemgauge_version": chemgauge.__version__,
            "rdkit_version": RDKIT_VERSION,
        }
    )


def run_retro_eval(
    config: RetroEvalConfig,
    *,
    model: RetroModel | None = None,
    progress: ProgressCallback | None = None,
) -> RetroRun:
    """Evaluate a model on one fold; ``model`` overrides ``model_class`` (the Python API)."""
    started = time.perf_counter()
    data_file: DataFile = find_fold_file(config.data_dir, config.fold)
    executor_config = ExecutorConfig(
        kind=config.executor,  # type: ignore[arg-type]
        jobs=config.jobs,
        chunk_size=config.chunk_size,
        ray_address=config.ray_address,
    )
    if model is None:
        model = build_retro_model(config.model_class, config.model_dir, **dict(config.model_kwargs))
    load_start = time.perf_counter()
    targets = load_targets(
        data_file, strict=config.strict, limit=config.limit, executor=executor_config
    )
    load_seconds = time.perf_counter() - load_start
    provenance = run_provenance(
        config.row_affecting(),
        inputs={"data": data_file.path},
        extra={"model": model.describe()},
    )
    file_sha = provenance.input_sha256["data"]
    config_sha = _config_sha256(config, file_sha, model)
    out_dir = Path(config.results_dir)
    settings = config.score_settings()

    journal = ResumableJsonlWriter(
        out_dir / PREDICTIONS_JSONL,
        config_sha256=config_sha,
        key_field="target",
        restart=config.restart,
    )
    resumed = sum(1 for t in targets.targets if journal.done(t.target))
    pending = [i for i, t in enumerate(targets.targets) if not journal.done(t.target)]
    errors: dict[str, dict[str, Any]] = {}
    model_seconds: dict[str, float] = {}
    score_start = time.perf_counter()
    runner = make_executor(executor_config)
    try:
        tasks = _tasks(targets, pending, model, config, settings, model_seconds)
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
            if isinstance(result, ItemFailure):
                errors[key] = _error_row(task, result)
            else:
                journal.write(_journal_entry(task, result, model_seconds.pop(key, 0.0), now - last))
            last = now
            if progress is not None:
                progress(1)
    finally:
        runner.close()
        journal.close()
    score_seconds = time.perf_counter() - score_start

    rows: list[dict[str, Any]] = []
    for target in targets.targets:
        entry = journal.existing.get(target.target)
        rows.append(entry["row"] if entry is not None else errors[target.target])
    atomic_write_rows(out_dir / ROWS_JSONL, rows)

    metrics = aggregate(
        rows,
        conventions=config.conventions,
        matchers=config.matchers,
        ks=config.k,
        max_k=config.num_top_results,
        round_trip_max_rank=config.round_trip_max_rank if config.round_trip else None,
    )
    model_block: dict[str, Any] = {**model.describe()}
    if isinstance(model, PredictionsFileModel):
        model_block["predictions_file"] = model.stats.to_dict()
    public_config = config.to_dict()
    volatile = ("results_dir", "quiet", "restart", "executor", "jobs", "chunk_size", "ray_address")
    for key in volatile:
        public_config.pop(key, None)
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "benchmark": "retro",
        "config": public_config,
        "config_sha256": config_sha,
        "data": {
            "file": data_file.path.name,
            "format": data_file.format,
            "fold": data_file.fold,
            "sha256": file_sha,
            "limit": targets.truncated_to,
            "targets": len(targets.targets),
            "lines": targets.stats.to_dict(),
        },
        "model": model_block,
        "metrics": metrics,
        "divergences_from_syntheseus": list(SYNTHESEUS_DIVERGENCES),
        "provenance": provenance.to_dict(),
        "reproducibility_sha256": reproducibility_sha256(rows, exclude=()),
        "run": {
            "executor": executor_config.describe(),
            "resumed_targets": resumed,
            "journal_truncated_bytes": journal.truncated_bytes,
            "scored_now": len(pending),
            "timing": {
                "load_s": load_seconds,
                "score_s": score_seconds,
                "total_s": time.perf_counter() - started,
                "model_calls": model.calls,
            },
        },
    }
    atomic_write_json(out_dir / REPORT_JSON, report)
    return RetroRun(report=report, rows=rows, results_dir=out_dir)
