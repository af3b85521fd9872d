"""Counted rejections: every refused input line by reason, with a bounded list of diagnostics.

Nothing is silently dropped: ``strict`` turns the first rejection into an error naming file,
line and value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from chemgauge.errors import DataQualityError, excerpt

__all__ = ["MAX_DIAGNOSTICS", "Diagnostic", "RejectionStats"]

MAX_DIAGNOSTICS = 50


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One rejected input: where, why, and a short excerpt of the offending text."""

    line: int
    reason: str
    excerpt: str
    detail: str = ""


@dataclass
class RejectionStats:
    """Counts of rejected inputs by reason plus the first ``max_diagnostics`` diagnostics."""

    path: str | None = None
    strict: bool = False
    max_diagnostics: int = MAX_DIAGNOSTICS
    accepted: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def reject(self, line: int, reason: str, text: str, detail: str = "") -> None:
        """Count a rejection; in strict mode raise instead, naming file, line and value."""
        if self.strict:
            message = f"{reason}{': ' + detail if detail else ''}"
            raise DataQualityError(message, path=self.path, line=line, value=text)
        self.counts[reason] += 1
        if len(self.diagnostics) < self.max_diagnostics:
            self.diagnostics.append(Diagnostic(line, reason, excerpt(text), excerpt(detail)))

    @property
    def rejected(self) -> int:
        """Total rejected lines over all reasons."""
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for reports (reasons sorted for stable output)."""
        return {
            "accepted": self.accepted,
            "rejected": self.rejected,
            "rejections_by_reason": dict(sorted(self.counts.items())),
            "diagnostics": [
                {"line": d.line, "reason": d.reason, "excerpt": d.excerpt, "detail": d.detail}
                for d in self.diagnostics
            ],
            "diagnostics_truncated": self.rejected > len(self.diagnostics),
        }
