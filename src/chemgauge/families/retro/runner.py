"""Run a retro evaluation: targets -> model outputs -> rows -> report, resumable.

Files in the run folder (``--out``; syntheseus's ``results_dir=``):

* ``journal.jsonl``: append-only journal, one line per finished target (raw outputs, its row,
  timing), keyed by target identity and tied to the config hash. A restart drops a truncated
  last line and skips finished targets; a different configuration is refused. (Named so it
  is never taken for syntheseus's ``predictions.jsonl``, which has another schema.)
* ``rows.jsonl``: one row per target in data order, no timing: byte-reproducible.
* ``report.json``: metrics, data accounting, what could not be scored (``unscored``), model
  description, provenance and the ``reproducibility_sha256`` over rows. Only its ``run``
  block (timing, resume counts, executor) may differ between runs on the same inputs.
* ``syntheseus_results[_<filestring>].json``: the same numbers in syntheseus's
  ``EvalResults`` shape (:mod:`chemgauge.families.retro.syntheseus_results`), exactly as
  syntheseus writes it (it is not a chemgauge report).

:func:`run_retro_eval` runs four steps: open the run (model, hashes, journal, spool), load
the targets (:mod:`~chemgauge.families.retro.spool`), score them
(:mod:`~chemgauge.families.retro.score_pass`), write the rows, then the report
(:mod:`~chemgauge.families.retro.reporting`). Loading and scoring run on the run's one
executor, so its workers start once.

A model call that raises is retried product by product; a product that still fails is a miss
with status ``model_error`` (not journaled, so a resumed run asks again).

Everything streams, so memory tracks the chunk size, not the data: targets are canonicalized
chunk by chunk into a spool file beside the journal (data order), scored from it, and the
rows file, its hash and the metrics come from one pass over the spool and the journal read
back by target (:func:`~chemgauge.eval.journal.iter_journal_by_keys`). What stays per target
is one journal offset and key, plus the row of a target whose scoring failed (rare).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

import chemgauge
from chemgauge.chem import RDKIT_VERSION
from chemgauge.errors import OutputFileError
from chemgauge.eval.atomic import atomic_write_rows
from chemgauge.eval.envelope import CountsTally, InputRecord, record_input
from chemgauge.eval.executors import Executor, ExecutorConfig, make_executor
from chemgauge.eval.journal import ResumableJsonlWriter, iter_journal_by_keys
from chemgauge.eval.provenance import RowsDigest, sha256_json
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.data import DataFile, find_fold_file
from chemgauge.families.retro.divergences import DivergenceTally
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.engine.registry import build_retro_model
from chemgauge.families.retro.in_sample import InSample, check_in_sample
from chemgauge.families.retro.journal import JOURNAL_JSONL
from chemgauge.families.retro.metrics import RetroTally
from chemgauge.families.retro.reporting import (
    REPORT_JSON,
    ROWS_JSONL,
    Accounting,
    RowTallies,
    write_run_report,
)
from chemgauge.families.retro.score_pass import ProgressCallback, ScoreState, score_targets
from chemgauge.families.retro.spool import (
    iter_spooled,
    open_spool,
    refuse_missing,
    spool_targets,
)
from chemgauge.families.retro.syntheseus_results import SYNTHESEUS_DIVERGENCES, SyntheseusTally
from chemgauge.families.retro.syntheseus_verdict import syntheseus_predictions
from chemgauge.families.retro.unscored import Unscored

__all__ = [
    "JOURNAL_JSONL",
    "OUTPUT_FILES",
    "REPORT_JSON",
    "ROWS_JSONL",
    "SYNTHESEUS_DIVERGENCES",
    "RetroRun",
    "run_retro_eval",
]

log = logging.getLogger(__name__)

#: Every file a run writes in its folder; the CLI checks them against the inputs first.
OUTPUT_FILES = (JOURNAL_JSONL, ROWS_JSONL, REPORT_JSON)


@dataclass
class RetroRun:
    """What a run produced: the report mapping and where its files are (rows are read from
    ``rows.jsonl`` when asked for, so a large run is not held in memory)."""

    report: dict[str, Any]
    out: Path
    unscored: Unscored

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row, in data order (read from ``rows.jsonl``)."""
        with open(self.out / ROWS_JSONL, "rb") as handle:
            return [orjson.loads(line) for line in handle]


@dataclass
class _OpenRun:
    """A run's parts once it is open: the model, its inputs hashed, journal, spool, executor."""

    config: RetroEvalConfig
    data_file: DataFile
    executor_config: ExecutorConfig
    model: RetroModel
    data_input: InputRecord
    out_dir: Path
    journal: ResumableJsonlWriter
    spool_file: IO[bytes]
    executor: Executor
    state: ScoreState
    started: float

    @property
    def spool(self) -> Path:
        return Path(self.spool_file.name)

    @property
    def from_file(self) -> PredictionsFileModel | None:
        return self.model if isinstance(self.model, PredictionsFileModel) else None


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


def _open_run(
    config: RetroEvalConfig, model: RetroModel | None, progress: ProgressCallback | None
) -> _OpenRun:
    """Step 1: find the fold, build the model (unless given), hash the data, open the
    journal (refusing one of another configuration), the spool and the executor."""
    started = time.perf_counter()
    data_file = find_fold_file(config.data_dir, config.fold)
    executor_config = ExecutorConfig(
        kind=config.executor,  # type: ignore[arg-type]
        jobs=config.jobs,
        chunk_size=config.chunk_size,
        ray_address=config.ray_address,
        ray_timeout_s=config.ray_timeout,
    )
    if model is None:
        model = build_retro_model(config.model_class, config.model_options())
    if config.strict and isinstance(model, PredictionsFileModel):
        model.make_strict()
    data_input = record_input("data", data_file.path)
    out_dir = Path(config.out)
    journal = ResumableJsonlWriter(
        out_dir / JOURNAL_JSONL,
        config_sha256=_config_sha256(config, data_input.sha256, model),
        key_field="target",
        restart=config.restart,
        keep_rows=False,
    )
    spool_file = open_spool(out_dir)
    return _OpenRun(
        config=config,
        data_file=data_file,
        executor_config=executor_config,
        model=model,
        data_input=data_input,
        out_dir=out_dir,
        journal=journal,
        spool_file=spool_file,
        executor=make_executor(executor_config),
        state=ScoreState(progress=progress),
        started=started,
    )


def _load_targets(run: _OpenRun) -> tuple[RejectionStats, int, InSample]:
    """Step 2: canonicalize the fold into the spool, check the model was not trained on it
    (:mod:`~chemgauge.families.retro.in_sample`) and get the model ready; the line
    accounting, the number of targets and the in-sample finding."""
    config = run.config
    stats = RejectionStats(path=str(run.data_file.path), strict=config.strict)
    try:
        with run.spool_file:
            n_targets = spool_targets(
                run.data_file,
                stats,
                config.limit,
                run.executor_config,
                run.model,
                run.spool_file,
                runner=run.executor,
            )
    except OSError as exc:  # a full disk while spooling the targets
        raise OutputFileError(run.spool, exc) from None
    in_sample = check_in_sample(
        run.model,
        run.data_input.sha256,
        run.data_file.path.name,
        iter_spooled(run.spool),
        allow=config.allow_in_sample,
    )
    run.model.prepare()
    if config.strict and run.from_file is not None:
        refuse_missing(run.spool, run.from_file, n_targets)
    return stats, n_targets, in_sample


def _final_rows(
    run: _OpenRun, model_seconds: list[float], predictions: list[Any] | None
) -> Iterator[dict[str, Any]]:
    """Every target's row in data order: from the journal, or its error row; adds each
    journaled target's model seconds (call, post-processing) to ``model_seconds`` and, with
    ``predictions``, syntheseus's predictions list of each target to it."""
    skip = run.config.skip_repeats
    keys = (t["target"] for t in iter_spooled(run.spool))
    entries = iter_journal_by_keys(
        run.journal.path, "target", (t["target"] for t in iter_spooled(run.spool))
    )
    for key, entry in zip(keys, entries, strict=True):
        if entry is None:
            if predictions is not None:
                predictions.append([])
            yield run.state.errors[key]
            continue
        if predictions is not None:
            row = entry["row"]
            predictions.append(
                syntheseus_predictions(
                    entry["outputs"],
                    row.get("syntheseus_reactants"),
                    row["product"],
                    skip_repeats=skip,
                )
            )
        timing = entry.get("timing") or {}
        model_seconds[0] += float(timing.get("model_s", 0.0))
        model_seconds[1] += float(timing.get("post_s", 0.0))
        yield entry["row"]


def _write_rows(
    run: _OpenRun, model_seconds: list[float], predictions: list[Any] | None
) -> RowTallies:
    """Step 4: write ``rows.jsonl`` in data order, folding the metrics, the row hash and the
    status counts as the rows go by."""
    config = run.config
    tallies = RowTallies(
        metrics=RetroTally(
            conventions=config.conventions,
            matchers=config.matchers,
            ks=config.k,
            max_k=config.num_top_results,
            round_trip_max_rank=config.round_trip_max_rank if config.round_trip else None,
        ),
        digest=RowsDigest(),
        status=CountsTally("status"),
        syntheseus=SyntheseusTally(),
        divergences=DivergenceTally(
            config.syntheseus_convention, config.include_results_modulo_stereo
        ),
    )

    def observed() -> Iterator[dict[str, Any]]:
        for row in _final_rows(run, model_seconds, predictions):
            tallies.add(row)
            yield row

    atomic_write_rows(run.out_dir / ROWS_JSONL, observed())
    return tallies


def _timing(run: _OpenRun, load_seconds: float, score_seconds: float) -> dict[str, Any]:
    return {
        "executor": run.executor_config.describe(),
        "resumed_targets": run.state.resumed,
        "journal_truncated_bytes": run.journal.truncated_bytes,
        "scored_now": run.state.scored,
        "seconds": {
            "load_s": load_seconds,
            "score_s": score_seconds,
            "total_s": time.perf_counter() - run.started,
        },
        "model_calls": run.model.calls,
    }


def run_retro_eval(
    config: RetroEvalConfig,
    *,
    model: RetroModel | None = None,
    progress: ProgressCallback | None = None,
) -> RetroRun:
    """Evaluate a model on one fold; ``model`` overrides ``model_class`` (the Python API)."""
    run = _open_run(config, model, progress)
    try:
        load_start = time.perf_counter()
        stats, n_targets, in_sample = _load_targets(run)
        load_seconds = time.perf_counter() - load_start
        score_start = time.perf_counter()
        score_targets(run.spool, run.journal, run.model, config, run.executor, run.state)
        score_seconds = time.perf_counter() - score_start
        model_seconds = list(run.state.unjournaled_seconds)
        predictions: list[Any] | None = [] if config.include_predictions else None
        tallies = _write_rows(run, model_seconds, predictions)
    finally:
        run.executor.close()  # scoring closes it; here too when loading the targets failed
        run.spool.unlink(missing_ok=True)
        run.model.close()
    facts = Accounting(
        config=config,
        data_file=run.data_file,
        data_input=run.data_input,
        lines=stats,
        n_targets=n_targets,
        timing=_timing(run, load_seconds, score_seconds),
        model_seconds=model_seconds,
        in_sample=in_sample,
        predictions=predictions,
    )
    envelope, unscored = write_run_report(run.out_dir, run.model, tallies, facts)
    return RetroRun(report=envelope.model_dump(mode="json"), out=run.out_dir, unscored=unscored)
