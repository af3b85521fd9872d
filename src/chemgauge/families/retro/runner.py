"""Run a retro evaluation: targets -> model outputs -> rows -> report, resumable.

Files under ``results_dir``:

* ``journal.jsonl``: append-only journal, one line per finished target (raw outputs, its row,
  timing), keyed by target identity and tied to the config hash. A restart drops a truncated
  last line and skips finished targets; a different configuration is refused. (Named so it
  is never taken for syntheseus's ``predictions.jsonl``, which has another schema; a
  chemgauge journal left under that older name is adopted and resumed.)
* ``rows.jsonl``: one row per target in data order, no timing: byte-reproducible.
* ``report.json``: metrics, data accounting, what could not be scored (``unscored``), model
  description, provenance and the ``reproducibility_sha256`` over rows. Only its ``run``
  block (timing, resume counts, executor) may differ between runs on the same inputs.
* ``syntheseus_results[_<filestring>].json``: the same numbers in syntheseus's
  ``EvalResults`` shape (:mod:`chemgauge.families.retro.syntheseus_results`).

A model call that raises is retried product by product; a product that still fails is a miss
with status ``model_error`` (not journaled, so a resumed run asks again).

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
from chemgauge.chem import RDKIT_VERSION
from chemgauge.chem.reactant_sets import ReactantSetScorer
from chemgauge.errors import BackendError, DataQualityError, OutputFileError
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
    atomic_write_bytes,
    atomic_write_rows,
    iter_journal_by_keys,
)
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.data import DataFile, find_fold_file, iter_targets
from chemgauge.families.retro.engine.base import ModelFailure, ModelOutput, RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.engine.registry import build_retro_model
from chemgauge.families.retro.journal import (
    JOURNAL_JSONL,
    LEGACY_JOURNAL_JSONL,
    adopt_legacy_journal,
    journal_entry,
    upgraded_row,
)
from chemgauge.families.retro.metrics import RetroTally
from chemgauge.families.retro.scoring import ScoreSettings, ScoreTask, score_chunk
from chemgauge.families.retro.syntheseus_results import (
    SYNTHESEUS_DIVERGENCES,
    syntheseus_results,
    syntheseus_results_name,
)
from chemgauge.families.retro.unscored import Unscored

__all__ = [
    "JOURNAL_JSONL",
    "LEGACY_JOURNAL_JSONL",
    "OUTPUT_FILES",
    "REPORT_JSON",
    "ROWS_JSONL",
    "SYNTHESEUS_DIVERGENCES",
    "RetroRun",
    "run_retro_eval",
]

log = logging.getLogger(__name__)

ROWS_JSONL = "rows.jsonl"
REPORT_JSON = "report.json"
REPORT_SCHEMA_VERSION = 2
#: Every file a run writes (or renames: a journal an earlier version named) in
#: ``results_dir``; the CLI checks them against the inputs first.
OUTPUT_FILES = (JOURNAL_JSONL, LEGACY_JOURNAL_JSONL, ROWS_JSONL, REPORT_JSON)
#: Canonical targets of the running evaluation (a temporary file in ``results_dir``).
SPOOL_PREFIX = ".targets-"

ProgressCallback = Callable[[int], None]


@dataclass
class RetroRun:
    """What a run produced: the report mapping and where its files are (rows are read from
    ``rows.jsonl`` when asked for, so a large run is not held in memory)."""

    report: dict[str, Any]
    results_dir: Path
    unscored: Unscored

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row, in data order (read from ``rows.jsonl``)."""
        with open(self.results_dir / ROWS_JSONL, "rb") as handle:
            return [orjson.loads(line) for line in handle]


def _error_row(
    target: dict[str, Any], status: str, reason: str, detail: str, returned: int, n_outputs: int
) -> dict[str, Any]:
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
    """What the scoring loop keeps besides journal rows."""

    errors: dict[str, dict[str, Any]]  # target -> error row (not journaled: retried on resume)
    model_seconds: dict[str, tuple[float, float]]
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
    state: _Progress,
) -> Iterator[tuple[ScoreTask, ScoreSettings]]:
    """Model outputs batch by batch for targets not yet journaled (lazily, so the model
    runs while workers score)."""
    from_file = model if isinstance(model, PredictionsFileModel) else None
    batch: list[dict[str, Any]] = []
    targets = _spooled(spool)
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
                state.errors[target["target"]] = _error_row(
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


def _refuse_missing(spool: Path, model: PredictionsFileModel, n_targets: int) -> None:
    """``--strict``: every target needs a line in the predictions file (checked before any
    scoring, all counted)."""
    missing, first = 0, None
    for target in _spooled(spool):
        if not model.has(target["product"]):
            missing += 1
            first = first or target
    if first is not None:
        raise DataQualityError(
            f"{missing} of {n_targets} targets have no line in the predictions file (first: "
            f"data line {first['line']})",
            path=str(model.path),
            value=first["product"],
        )


def _final_rows(
    spool: Path,
    journal_path: Path,
    errors: dict[str, dict[str, Any]],
    model_seconds: list[float],
) -> Iterator[dict[str, Any]]:
    """Every target's row in data order: from the journal, or its error row; adds each
    journaled target's model seconds (call, post-processing) to ``model_seconds``."""
    keys = (t["target"] for t in _spooled(spool))
    entries = iter_journal_by_keys(journal_path, "target", (t["target"] for t in _spooled(spool)))
    scorer = ReactantSetScorer()
    for key, entry in zip(keys, entries, strict=True):
        if entry is None:
            yield errors[key]
            continue
        timing = entry.get("timing") or {}
        model_seconds[0] += float(timing.get("model_s", 0.0))
        model_seconds[1] += float(timing.get("post_s", 0.0))
        yield upgraded_row(entry, scorer)


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
        ray_timeout_s=config.ray_timeout,
    )
    if model is None:
        model = build_retro_model(
            config.model_class,
            config.model_dir,
            num_gpus=config.num_gpus,
            **dict(config.model_kwargs),
        )
    from_file = model if isinstance(model, PredictionsFileModel) else None
    if config.strict and from_file is not None:
        from_file.make_strict()
    data_input = record_input("data", data_file.path)
    file_sha = data_input.sha256
    config_sha = _config_sha256(config, file_sha, model)
    out_dir = Path(config.results_dir)
    settings = config.score_settings()

    adopt_legacy_journal(out_dir)
    journal = ResumableJsonlWriter(
        out_dir / JOURNAL_JSONL,
        config_sha256=config_sha,
        key_field="target",
        restart=config.restart,
        keep_rows=False,
    )
    state = _Progress(errors={}, model_seconds={}, progress=progress)
    for stale in out_dir.glob(f"{SPOOL_PREFIX}*.jsonl"):  # left by a killed run
        stale.unlink(missing_ok=True)
    try:
        spool_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - removed in the finally below
            dir=out_dir, prefix=SPOOL_PREFIX, suffix=".jsonl", delete=False
        )
    except OSError as exc:
        raise OutputFileError(out_dir / f"{SPOOL_PREFIX}*.jsonl", exc) from None
    spool = Path(spool_file.name)
    runner = make_executor(executor_config)
    total_model_seconds = [0.0, 0.0]
    try:
        load_start = time.perf_counter()
        try:
            with spool_file:
                stats, n_targets = _spool_targets(
                    data_file, config, executor_config, model, spool_file
                )
        except OSError as exc:  # a full disk while spooling the targets
            raise OutputFileError(spool, exc) from None
        model.prepare()
        if config.strict and from_file is not None:
            _refuse_missing(spool, from_file, n_targets)
        load_seconds = time.perf_counter() - load_start

        score_start = time.perf_counter()
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
                    state.errors[key] = _error_row(
                        task.target,
                        "error",
                        result.reason,
                        result.detail,
                        task.returned,
                        len(task.outputs),
                    )
                    total_model_seconds[0] += seconds[0]
                    total_model_seconds[1] += seconds[1]
                else:
                    journal.write(journal_entry(task, result, seconds, now - last))
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
            for row in _final_rows(spool, journal.path, state.errors, total_model_seconds):
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
    if from_file is not None:
        model_block["predictions_file"] = from_file.stats.to_dict()
        inputs.append(
            InputRecord(
                role="predictions",
                path=str(from_file.path),
                sha256=from_file.sha256,
                size=from_file.path.stat().st_size,
            )
        )
    accuracy = tally.result()
    unscored = Unscored.from_counts(
        accuracy["status"],
        data_file=data_file.path.name,
        data_lines=stats.to_dict(),
        predictions_file=None if from_file is None else from_file.path.name,
        prediction_lines=model_block.get("predictions_file"),
    )
    results_name = syntheseus_results_name(config.filestring)
    syntheseus, notes = syntheseus_results(tally, config, model, model_seconds=total_model_seconds)
    atomic_write_bytes(out_dir / results_name, orjson.dumps(syntheseus) + b"\n")
    public_config = config.to_dict()
    volatile = (
        "results_dir",
        "quiet",
        "restart",
        "executor",
        "jobs",
        "chunk_size",
        "ray_address",
        "ray_timeout",
        "allow_missing",
        "filestring",
        "num_gpus",
    )
    for key in volatile:
        public_config.pop(key, None)
    metrics: dict[str, Any] = {
        **accuracy,
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
        "unscored": unscored.to_dict(),
        "syntheseus_results": {
            "file": results_name,
            "convention": config.syntheseus_convention,
            "notes": notes,
        },
        "divergences_from_syntheseus": [
            {"id": key, "divergence": text} for key, text in SYNTHESEUS_DIVERGENCES.items()
        ],
    }
    timing = {
        "executor": executor_config.describe(),
        "resumed_targets": state.resumed,
        "journal_truncated_bytes": journal.truncated_bytes,
        "scored_now": state.scored,
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
    return RetroRun(report=envelope.model_dump(mode="json"), results_dir=out_dir, unscored=unscored)
