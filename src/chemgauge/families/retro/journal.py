"""The retro run's resume journal: its name, the older name it is adopted from, its entries.

One line per finished target: the raw outputs, the row and the timing, so a restarted run
skips finished targets and the report can draw the outputs. It is called ``journal.jsonl``
so it is never taken for syntheseus's ``predictions.jsonl`` (another schema); a chemgauge
journal left under that name by an earlier version is renamed and resumed, and a file of
that name that is not a chemgauge journal is never touched.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from chemgauge.chem.reactant_sets import ReactantSetScorer
from chemgauge.eval.records import is_journal
from chemgauge.families.retro.scoring import ScoreTask

__all__ = [
    "JOURNAL_JSONL",
    "LEGACY_JOURNAL_JSONL",
    "adopt_legacy_journal",
    "journal_entry",
    "journal_path",
    "upgraded_row",
]

log = logging.getLogger(__name__)

JOURNAL_JSONL = "journal.jsonl"
#: The journal's earlier name, which syntheseus's own resumable results also use.
LEGACY_JOURNAL_JSONL = "predictions.jsonl"


def adopt_legacy_journal(folder: Path) -> None:
    """Rename a chemgauge journal still called ``predictions.jsonl`` to ``journal.jsonl``, so
    it resumes; a syntheseus ``predictions.jsonl`` is left alone."""
    legacy, journal = folder / LEGACY_JOURNAL_JSONL, folder / JOURNAL_JSONL
    if not journal.exists() and legacy.is_file() and is_journal(legacy):
        legacy.replace(journal)
        log.info("resuming the journal %s, renamed to %s", legacy, journal.name)


def journal_path(folder: Path) -> Path:
    """A finished run's journal: ``journal.jsonl``, or a chemgauge journal under the older
    name in a run folder written before the rename."""
    legacy = folder / LEGACY_JOURNAL_JSONL
    if not (folder / JOURNAL_JSONL).is_file() and is_journal(legacy):
        return legacy
    return folder / JOURNAL_JSONL


def journal_entry(
    task: ScoreTask, row: dict[str, Any], model_seconds: tuple[float, float], score_seconds: float
) -> dict[str, Any]:
    """The journal line of one scored target (``model_seconds``: call, post-processing)."""
    return {
        "target": task.target["target"],
        "outputs": list(task.outputs),
        "row": row,
        "timing": {
            "model_s": model_seconds[0],
            "post_s": model_seconds[1],
            "score_s": score_seconds,
        },
    }


def upgraded_row(entry: dict[str, Any], scorer: ReactantSetScorer) -> dict[str, Any]:
    """A journaled row in today's shape: a row journaled before invalidity reasons were
    recorded gets them from its journaled outputs (only its invalid outputs are parsed)."""
    row: dict[str, Any] = entry["row"]
    if "invalid_reasons" not in row and row.get("hits"):
        outputs = entry["outputs"]
        comparison = scorer.compare((), [outputs[r] for r in row["invalid_ranks"]])
        row = {**row, "invalid_reasons": list(comparison.invalid_reasons)}
    return row
