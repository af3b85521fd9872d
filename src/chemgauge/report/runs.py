"""Loading one finished run: its report JSON and its row file, with the family named by the report.

A run folder holds ``report.json`` and ``rows.jsonl``; explicit paths override either. Rows are
kept in file order (the reproducibility hash is over that order) and every line that is not a
JSON object is recorded with its line number instead of being skipped, so a truncated file is
visible to ``verify`` and refused by ``report`` and ``compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import InputFileError
from chemgauge.eval.lines import read_document

__all__ = ["REPORT_NAME", "ROWS_NAME", "Run", "read_report"]

REPORT_NAME = "report.json"
ROWS_NAME = "rows.jsonl"


@dataclass(frozen=True)
class Run:
    """A report and its rows as read from disk; ``bad_lines`` lists unreadable row lines."""

    report: dict[str, Any]
    rows: list[dict[str, Any]]
    report_path: Path
    rows_path: Path
    bad_lines: list[tuple[int, str]] = field(default_factory=list)

    family: str = ""

    @property
    def label(self) -> str:
        """A short human label: the run folder's name."""
        return self.report_path.parent.name or str(self.report_path)

    def require_clean_rows(self) -> None:
        """Raise, naming file and line, if any row line could not be read."""
        if self.bad_lines:
            line, reason = self.bad_lines[0]
            more = f" (and {len(self.bad_lines) - 1} more)" if len(self.bad_lines) > 1 else ""
            raise InputFileError(
                f"unreadable row: {reason}{more}; run `chemgauge verify` for details",
                path=self.rows_path,
                line=line,
            )


def read_report(path: Path) -> dict[str, Any]:
    data = read_document(path)  # exact causes (missing, a folder, a symlink loop); BOM dropped
    try:
        report = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputFileError(f"report is not valid JSON ({exc})", path=path) from None
    if not isinstance(report, dict):
        raise InputFileError("report is not a JSON object", path=path)
    return report
