"""The run's target spool: the fold's canonical targets, one JSON line each, in data order.

Loading canonicalizes the fold once into a temporary file beside the journal; scoring and the
rows pass read it back, so memory tracks the chunk size, not the data.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from chemgauge.errors import DataQualityError, OutputFileError
from chemgauge.eval.executors import Executor, ExecutorConfig
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.retro.data import DataFile, iter_targets
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.predictions import PredictionsFileModel

__all__ = ["SPOOL_PREFIX", "iter_spooled", "open_spool", "refuse_missing", "spool_targets"]

#: Canonical targets of the running evaluation (a temporary file in the run folder).
SPOOL_PREFIX = ".targets-"


def open_spool(out_dir: Path) -> IO[bytes]:
    """A new spool file in ``out_dir`` (kept on close: the caller removes it), after removing
    any a killed run left there."""
    for stale in out_dir.glob(f"{SPOOL_PREFIX}*.jsonl"):
        stale.unlink(missing_ok=True)
    try:
        return tempfile.NamedTemporaryFile(
            dir=out_dir, prefix=SPOOL_PREFIX, suffix=".jsonl", delete=False
        )
    except OSError as exc:
        raise OutputFileError(out_dir / f"{SPOOL_PREFIX}*.jsonl", exc) from None


def iter_spooled(path: Path) -> Iterator[dict[str, Any]]:
    """Target mappings from the spool file, in data order."""
    with open(path, "rb") as handle:
        for line in handle:
            yield orjson.loads(line)


def spool_targets(
    data_file: DataFile,
    stats: RejectionStats,
    limit: int | None,
    executor: ExecutorConfig,
    model: RetroModel,
    spool: IO[bytes],
    runner: Executor | None = None,
) -> int:
    """Canonicalize the fold into the spool (one target mapping a line), announcing each
    product to the model and counting lines in ``stats``; returns the number of targets.
    ``runner``: the run's open executor, so scoring reuses the same workers."""
    count = 0
    for target in iter_targets(data_file, stats, limit=limit, executor=executor, runner=runner):
        spool.write(orjson.dumps(target.to_dict()) + b"\n")
        model.expect_product(target.product)
        count += 1
    spool.flush()
    return count


def refuse_missing(spool: Path, model: PredictionsFileModel, n_targets: int) -> None:
    """``--strict``: every target needs a line in the predictions file (checked before any
    scoring, all counted)."""
    missing, first = 0, None
    for target in iter_spooled(spool):
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
