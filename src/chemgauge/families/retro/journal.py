"""The retro run's resume journal: its name and its entries.

One line per finished target: the raw outputs, the row and the timing, so a restarted run
skips finished targets and the report can draw the outputs. It is called ``journal.jsonl``
so it is never taken for syntheseus's ``predictions.jsonl`` (another schema).
"""

from __future__ import annotations

from typing import Any

from chemgauge.families.retro.scoring import ScoreTask

__all__ = ["JOURNAL_JSONL", "journal_entry"]

JOURNAL_JSONL = "journal.jsonl"


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
