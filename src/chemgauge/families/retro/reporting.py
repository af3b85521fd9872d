"""The files a finished retro run writes besides its rows: ``report.json`` and syntheseus's
results file.

The report's ``metrics`` block is built here from the rows' tallies and the run's accounting,
and validated against :class:`~chemgauge.families.retro.metrics_model.RetroMetrics` before
anything is written, so a report that would not load is never written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    InputRecord,
    RunEnvelope,
    base_provenance,
    build_envelope,
    write_envelope,
)
from chemgauge.eval.provenance import RowsDigest
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.data import DataFile
from chemgauge.families.retro.divergences import DivergenceTally
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.family import FAMILY
from chemgauge.families.retro.in_sample import InSample
from chemgauge.families.retro.metrics import RetroTally
from chemgauge.families.retro.metrics_model import RetroMetrics
from chemgauge.families.retro.syntheseus_results import (
    SyntheseusTally,
    syntheseus_results,
    syntheseus_results_name,
)
from chemgauge.families.retro.unscored import Unscored

__all__ = ["REPORT_JSON", "ROWS_JSONL", "Accounting", "RowTallies", "write_run_report"]

#: How the report's summary statistics are computed (stated in every report).
STATISTICS_NOTES = [
    "p50, p90, p95 of per-target output counts are nearest-rank percentiles: for an even "
    "count the p50 is the lower of the two middle values",
    "median_num_predictions in the syntheseus-shaped results file is syntheseus's: Python's "
    "statistics.median (the mean of the two middle values for an even count)",
]

ROWS_JSONL = "rows.jsonl"
REPORT_JSON = "report.json"

#: Options left out of the report's config: where files go, speed and exit-code settings
#: (none of them can change a row or a number).
_VOLATILE = (
    "out",
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


@dataclass
class RowTallies:
    """What the rows pass folded as the rows went to disk."""

    metrics: RetroTally
    digest: RowsDigest
    status: CountsTally
    syntheseus: SyntheseusTally
    divergences: DivergenceTally

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row into every tally."""
        self.metrics.add(row)
        self.digest.update(row)
        self.status.add(row)
        self.syntheseus.add(row)
        self.divergences.add(row)


@dataclass(frozen=True)
class Accounting:
    """The run's facts beside its rows: its inputs, line counts and timing block."""

    config: RetroEvalConfig
    data_file: DataFile
    data_input: InputRecord
    lines: RejectionStats
    n_targets: int
    timing: Mapping[str, Any]
    model_seconds: Sequence[float]
    in_sample: InSample
    predictions: list[Any] | None = None


def _model_block(
    model: RetroModel, data_input: InputRecord
) -> tuple[dict[str, Any], list[InputRecord]]:
    """The model's description (with a predictions file's reading stats) and the inputs."""
    block: dict[str, Any] = {**model.describe()}
    inputs = [data_input]
    if isinstance(model, PredictionsFileModel):
        block["predictions_file"] = model.stats.to_dict()
        inputs.append(
            InputRecord(
                role="predictions",
                path=str(model.path),
                sha256=model.sha256,
                size=model.path.stat().st_size,
            )
        )
    return block, inputs


def _public_config(config: RetroEvalConfig) -> dict[str, Any]:
    public = config.to_dict()
    for key in _VOLATILE:
        public.pop(key, None)
    return public


def _write_syntheseus_file(
    out_dir: Path, tallies: RowTallies, facts: Accounting, model: RetroModel
) -> tuple[str, list[str]]:
    """Write syntheseus's ``EvalResults`` file (its own format, not a chemgauge report)."""
    name = syntheseus_results_name(facts.config.filestring)
    results, notes = syntheseus_results(
        tallies.metrics,
        tallies.syntheseus,
        facts.config,
        model,
        model_seconds=facts.model_seconds,
        predictions=facts.predictions,
    )
    atomic_write_bytes(out_dir / name, orjson.dumps(results) + b"\n")
    return name, notes


def write_run_report(
    out_dir: Path, model: RetroModel, tallies: RowTallies, facts: Accounting
) -> tuple[RunEnvelope, Unscored]:
    """Write syntheseus's results file and ``report.json``; the envelope and what could not
    be scored."""
    config, data_file = facts.config, facts.data_file
    model_block, inputs = _model_block(model, facts.data_input)
    accuracy = tallies.metrics.result()
    unscored = Unscored.from_counts(
        accuracy["status"],
        data_file=data_file.path.name,
        data_lines=facts.lines.to_dict(),
        predictions_file=model.path.name if isinstance(model, PredictionsFileModel) else None,
        prediction_lines=model_block.get("predictions_file"),
    )
    results_name, notes = _write_syntheseus_file(out_dir, tallies, facts, model)
    divergences, agreement = tallies.divergences.result(facts.lines.rejected)
    metrics: dict[str, Any] = {
        **accuracy,
        "data": {
            "file": data_file.path.name,
            "format": data_file.format,
            "fold": data_file.fold,
            "sha256": facts.data_input.sha256,
            "limit": config.limit,
            "targets": facts.n_targets,
            "lines": facts.lines.to_dict(),
        },
        "model": model_block,
        "unscored": unscored.to_dict(),
        "syntheseus_results": {
            "file": results_name,
            "convention": config.syntheseus_convention,
            "notes": notes,
        },
        "divergences_from_syntheseus": divergences,
        "syntheseus_agreement": agreement,
        "in_sample": facts.in_sample.to_dict(),
        "statistics_notes": STATISTICS_NOTES,
    }
    RetroMetrics.model_validate(metrics)  # a block that would not load is never written
    envelope = build_envelope(
        EnvelopeParts(
            family=FAMILY.name,
            family_schema_version=FAMILY.schema_version,
            config=_public_config(config),
            inputs=inputs,
            provenance=base_provenance({"model": model.describe()}),
            rows_path=out_dir / ROWS_JSONL,
            reproducibility_sha256=tallies.digest.hexdigest(),
            timing=facts.timing,
            counts=tallies.status.result(facts.lines.counts),
            metrics=metrics,
        ),
        out_dir / REPORT_JSON,
    )
    write_envelope(out_dir / REPORT_JSON, envelope)
    return envelope, unscored
