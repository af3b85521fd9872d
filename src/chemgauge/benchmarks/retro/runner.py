"""Run a retro evaluation: targets -> model outputs -> rows -> report, resumable.

Files under ``results_dir``:

* ``predictions.jsonl``: append-only journal, one line per finished target (raw outputs,
  its row, timing), keyed by target identity and tied to the config hash. A restart drops a
  truncated last line and skips finished targets; a different configuration is refused.
* ``rows.jsonl``: one row per target in data order, no timing: byte-reproducible.
* ``report.json``: metrics, data accounting, model description, provenance and the
  ``reproducibility_sha256`` over rows. Only its ``run`` block (timing, resume counts,
  executor) may differ between runs on the same inputs.

Everything streams, so memory tracks the chunk size, not the data: targets are canonicalized
chunk by chunk into a spool file beside the journal (data order), scored from it, and the
rows file, its hash and the metrics come from one pass over the spool and the journal read
back by target (:func:`~chemgauge.eval.records.iter_journal_by_keys`). What stays per target
is one journal offset and key, plus the row of a target whose scoring failed (rare).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

import chemgauge
from chemgauge.benchmarks.retro.config import RetroEvalConfig
from chemgauge.benchmarks.retro.data import DataFile, find_fold_file, iter_targets
from chemgauge.benchmarks.retro.metrics import RetroTally
from chemgauge.benchmarks.retro.scoring import ScoreSettings, ScoreTask, score_chunk
from chemgauge.chem import RDKIT_VERSION
from chemgauge.engines.retro.base import RetroModel
from chemgauge.engines.retro.predictions import PredictionsFileModel
from chemgauge.engines.retro.registry import build_retro_model
from chemgauge.errors import DataQualityError
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    InputRecord,
    base_provenance,
    build_envelope,
    record_input,
    write_envelope,
)
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.provenance import RowsDigest, sha256_json
from chemgauge.eval.records import (
    RejectionStats,
    ResumableJsonlWriter,
    atomic_write_rows,
    iter_journal_by_keys,
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
REPORT_SCHEMA_VERSION = 1
#: Canonical targets of the running evaluation (a temporary file in ``results_dir``).
SPOOL_PREFIX = ".targets-"

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
    """What a run produced: the report mapping and where its files are (rows are read from
    ``rows.jsonl`` when asked for, so a large run is not held in memory)."""

    report: dict[str, Any]
    results_dir: Path

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row, in data order (read from ``rows.jsonl``)."""
        with open(self.results_dir / ROWS_JSONL, "rb") as handle:
            return [orjson.loads(line) for line in handle]


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


def _spooled(path: Path) -> Iterator[dict[str, Any]]:
    """Target mappings from the spool file, in data order."""
    with open(path, "rb") as handle:
        for line in handle:
            yield orjson.loads(line)


def _spool_targets(
    data_file: DataFile,
    config: RetroEvalConfig,
    executor: ExecutorConfig,
    model: RetroModel,
    spool: IO[bytes],
) -> tuple[RejectionStats, int]:
    """Canonicalize the fold into the spool (one target mapping a line), announcing each
    product to the model; returns the line accounting and the number of targets."""
    stats = RejectionStats(path=str(data_file.path), strict=config.strict)
    count = 0
    for target in iter_targets(data_file, stats, limit=config.limit, executor=executor):
        spool.write(orjson.dumps(target.to_dict()) + b"\n")
        model.expect_product(target.product)
        count += 1
    spool.flush()
    return stats, count


@dataclass
class _Progress:
    resumed: int = 0
    scored: int = 0


def _tasks(
    spool: Path,
    journal: ResumableJsonlWriter,
    model: RetroModel,
    config: RetroEvalConfig,
    settings: ScoreSettings,
    model_seconds: dict[str, float],
    counts: _Progress,
) -> Iterator[tuple[ScoreTask, ScoreSettings]]:
    """Model outputs batch by batch for targets not yet journaled (lazily, so the model
    runs while workers score)."""
    from_file = model if isinstance(model, PredictionsFileModel) else None
    batch: list[dict[str, Any]] = []
    targets = _spooled(spool)
    while True:
        for target in targets:
            if journal.done(target["target"]):
                counts.resumed += 1
                continue
            batch.append(target)
            if len(batch) >= config.batch_size:
                break
        if not batch:
            return
        results = model.predict([t["product"] for t in batch], config.num_top_results)
        for target, result in zip(batch, results, strict=True):
            status = None
            if from_file is not None and not from_file.has(target["product"]):
                status = "missing_from_predictions"
                if config.strict:
                    raise DataQualityError(
                        "target product has no line in the predictions file",
                        path=str(from_file.path),
                        value=target["product"],
                    )
            model_seconds[target["target"]] = result.seconds
            counts.scored += 1
            yield ScoreTask(target, result.outputs, result.returned, status), settings
        batch = []


def _final_rows(
    spool: Path, journal_path: Path, errors: dict[str, dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """Every target's row in data order: from the journal, or its error row."""
    keys = (t["target"] for t in _spooled(spool))
    entries = iter_journal_by_keys(journal_path, "target", (t["target"] for t in _spooled(spool)))
    for key, entry in zip(keys, entries, strict=True):
        yield entry["row"] if entry is not None else errors[key]


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
    data_input = record_input("data", data_file.path)
    file_sha = data_input.sha256
    config_sha = _config_sha256(config, file_sha, model)
    out_dir = Path(config.results_dir)
    settings = config.score_settings()

    journal = ResumableJsonlWriter(
        out_dir / PREDICTIONS_JSONL,
        config_sha256=config_sha,
        key_field="target",
        restart=config.restart,
        keep_rows=False,
    )
    errors: dict[str, dict[str, Any]] = {}
    model_seconds: dict[str, float] = {}
    counts = _Progress()
    for stale in out_dir.glob(f"{SPOOL_PREFIX}*.jsonl"):  # left by a killed run
        stale.unlink(missing_ok=True)
    spool_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - removed in the finally below
        dir=out_dir, prefix=SPOOL_PREFIX, suffix=".jsonl", delete=False
    )
    spool = Path(spool_file.name)
    runner = make_executor(executor_config)
    try:
        load_start = time.perf_counter()
        with spool_file:
            stats, n_targets = _spool_targets(data_file, config, executor_config, model, spool_file)
        model.prepare()
        load_seconds = time.perf_counter() - load_start

        score_start = time.perf_counter()
        try:
            tasks = _tasks(spool, journal, model, config, settings, model_seconds, counts)
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
                    entry = _journal_entry(task, result, model_seconds.pop(key, 0.0), now - last)
                    journal.write(entry)
                last = now
                if progress is not None:
                    progress(1)
        finally:
            runner.close()
            journal.close()
        score_seconds = time.perf_counter() - score_start

        tally = RetroTally(
            conventions=config.conventions,
            matchers=config.matchers,
            ks=config.k,
            max_k=config.num_top_results,
            round_trip_max_rank=config.round_trip_max_rank if config.round_trip else None,
        )
        digest = RowsDigest()
        status_counts = CountsTally("status")

        def observed() -> Iterator[dict[str, Any]]:
            for row in _final_rows(spool, journal.path, errors):
                tally.add(row)
                digest.update(row)
                status_counts.add(row)
                yield row

        atomic_write_rows(out_dir / ROWS_JSONL, observed())
    finally:
        spool.unlink(missing_ok=True)
        model.close()

    model_block: dict[str, Any] = {**model.describe()}
    inputs = [data_input]
    if isinstance(model, PredictionsFileModel):
        model_block["predictions_file"] = model.stats.to_dict()
        inputs.append(
            InputRecord(
                role="predictions",
                path=str(model.path),
                sha256=model.sha256,
                size=model.path.stat().st_size,
            )
        )
    public_config = config.to_dict()
    volatile = ("results_dir", "quiet", "restart", "executor", "jobs", "chunk_size", "ray_address")
    for key in volatile:
        public_config.pop(key, None)
    metrics: dict[str, Any] = {
        **tally.result(),
        "data": {
            "file": data_file.path.name,
            "format": data_file.format,
            "fold": data_file.fold,
            "sha256": file_sha,
            "limit": config.limit,
            "targets": n_targets,
            "lines": stats.to_dict(),
        },
        "model": model_block,
        "divergences_from_syntheseus": list(SYNTHESEUS_DIVERGENCES),
    }
    timing = {
        "executor": executor_config.describe(),
        "resumed_targets": counts.resumed,
        "journal_truncated_bytes": journal.truncated_bytes,
        "scored_now": counts.scored,
        "seconds": {
            "load_s": load_seconds,
            "score_s": score_seconds,
            "total_s": time.perf_counter() - started,
        },
        "model_calls": model.calls,
    }
    envelope = build_envelope(
        EnvelopeParts(
            family="retro",
            family_schema_version=REPORT_SCHEMA_VERSION,
            config=public_config,
            inputs=inputs,
            provenance=base_provenance({"model": model.describe()}),
            rows_path=out_dir / ROWS_JSONL,
            reproducibility_sha256=digest.hexdigest(),
            timing=timing,
            counts=status_counts.result(stats.counts),
            metrics=metrics,
        ),
        out_dir / REPORT_JSON,
    )
    write_envelope(out_dir / REPORT_JSON, envelope)
    return RetroRun(report=envelope.model_dump(mode="json"), results_dir=out_dir)
