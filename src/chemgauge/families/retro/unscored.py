"""What a retro run could not score: counted, warned about, and failing the run past a share.

A target is *unscored* when no outputs could be obtained or judged for it: its product has
no line in the predictions file (status ``missing_from_predictions``), the model call failed
(``model_error``), or scoring its outputs failed (``error``). Each is still a miss in every
denominator; this block says how many there were, next to the data lines and prediction
lines that were rejected. The command line prints a warning line per kind; when more than
:data:`MAX_UNSCORED_SHARE` of the targets are unscored it exits non-zero (after writing every
result) unless ``--allow-missing``; ``--strict`` makes any of them an error before scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.errors import DataQualityError
from chemgauge.eval.metrics import rate

__all__ = ["MAX_UNSCORED_SHARE", "UNSCORED_STATUSES", "Unscored"]

#: Share of targets a run may leave unscored before the command line fails it.
MAX_UNSCORED_SHARE = 0.10

#: Row statuses of unscored targets, and what each means.
UNSCORED_STATUSES = {
    "missing_from_predictions": "no line in the predictions file",
    "model_error": "the model call failed",
    "error": "scoring failed",
}


def _reasons(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in sorted(counts.items()))


def _targets(count: int) -> str:
    return f"{count} target{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Unscored:
    """Targets that could not be scored and lines that were rejected, for one run."""

    targets: int
    by_status: dict[str, int]
    data_file: str
    data_rejections: dict[str, int] = field(default_factory=dict)
    predictions_file: str | None = None
    prediction_rejections: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_counts(
        cls,
        statuses: Mapping[str, int],
        *,
        data_file: str,
        data_lines: Mapping[str, Any],
        predictions_file: str | None = None,
        prediction_lines: Mapping[str, Any] | None = None,
    ) -> Unscored:
        """From a run's status counts and the line accounting of its data and predictions
        files (``RejectionStats.to_dict()`` mappings)."""
        return cls(
            targets=sum(statuses.values()),
            by_status={s: int(statuses.get(s, 0)) for s in UNSCORED_STATUSES},
            data_file=data_file,
            data_rejections=dict(data_lines.get("rejections_by_reason", {})),
            predictions_file=predictions_file,
            prediction_rejections=dict((prediction_lines or {}).get("rejections_by_reason", {})),
        )

    @property
    def count(self) -> int:
        """Targets not scored, over every status."""
        return sum(self.by_status.values())

    @property
    def share(self) -> float:
        """Unscored targets over all targets (0 for a run without targets)."""
        return self.count / self.targets if self.targets else 0.0

    @property
    def over_limit(self) -> bool:
        """More than :data:`MAX_UNSCORED_SHARE` of the targets are unscored."""
        return self.share > MAX_UNSCORED_SHARE

    def to_dict(self) -> dict[str, Any]:
        """The report's ``unscored`` block (``share``: unscored targets over all targets)."""
        return {
            "share": rate(self.count, self.targets),
            "max_share": MAX_UNSCORED_SHARE,
            "over_limit": self.over_limit,
            "by_status": dict(self.by_status),
            "data_lines_rejected": sum(self.data_rejections.values()),
            "prediction_lines_rejected": sum(self.prediction_rejections.values()),
        }

    def warnings(self) -> list[str]:
        """One line per kind of thing that could not be scored or read (empty when none)."""
        lines = []
        missing = self.by_status["missing_from_predictions"]
        if missing:
            share = 100 * missing / self.targets
            lines.append(
                f"warning: {missing} of {self.targets} targets ({share:.1f}%) have no line in "
                f"the predictions file {self.predictions_file}: scored as misses"
            )
        for status in ("model_error", "error"):
            count = self.by_status[status]
            if count:
                lines.append(
                    f"warning: {_targets(count)} of {self.targets}: {UNSCORED_STATUSES[status]}"
                    f" (scored as misses; rows.jsonl status {status!r} says why)"
                )
        if self.data_rejections:
            total = sum(self.data_rejections.values())
            lines.append(
                f"warning: {total} data line{'' if total == 1 else 's'} of {self.data_file} "
                f"rejected ({_reasons(self.data_rejections)}); report.json lists them"
            )
        if self.prediction_rejections:
            total = sum(self.prediction_rejections.values())
            lines.append(
                f"warning: {total} line{'' if total == 1 else 's'} of the predictions file "
                f"{self.predictions_file} rejected ({_reasons(self.prediction_rejections)}); "
                "report.json lists them"
            )
        return lines

    def check(self, *, allow_missing: bool, out: str) -> None:
        """Raise when more than the allowed share is unscored and that was not allowed."""
        if not self.over_limit or allow_missing:
            return
        raise DataQualityError(
            f"{self.count} of {self.targets} targets ({100 * self.share:.1f}%) could not be "
            f"scored, more than the {100 * MAX_UNSCORED_SHARE:.0f}% a run may leave unscored "
            f"(results are written to {out}); pass --allow-missing to accept them "
            "as misses"
        )
