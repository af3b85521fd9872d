"""One finished run as read from disk: its run envelope and its rows.

A run folder holds ``report.json`` (the run envelope, :mod:`chemgauge.eval.envelope`) and the
rows file it names; explicit paths override either. Rows are kept in file order (the
reproducibility hash is over that order) and every line that is not a JSON object is recorded
with its line number instead of being skipped, so a truncated file is visible to ``verify``
and refused by ``report`` and ``compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import InputRecord, RunEnvelope
from chemgauge.eval.lines import read_document

__all__ = ["REPORT_NAME", "ROWS_NAME", "Run", "read_report"]

REPORT_NAME = "report.json"
ROWS_NAME = "rows.jsonl"


@dataclass(frozen=True)
class Run:
    """An envelope and its rows as read from disk; ``bad_lines`` lists unreadable row lines."""

    envelope: RunEnvelope
    rows: list[dict[str, Any]]
    report_path: Path
    rows_path: Path
    bad_lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def family(self) -> str:
        """The family that wrote the run."""
        return self.envelope.family

    @property
    def metrics(self) -> dict[str, Any]:
        """The family's results (the envelope's ``metrics``)."""
        return self.envelope.metrics

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration (the envelope's ``config``)."""
        return self.envelope.config

    @property
    def label(self) -> str:
        """A short human label: the run folder's name."""
        return self.report_path.parent.name or str(self.report_path)

    def input_candidates(self, record: InputRecord) -> list[Path]:
        """Existing files a recorded input may be: the path as given (from the current
        folder) and the same path beside the report; a ``run_folder`` input only beside it."""
        given = Path(record.path)
        beside = self.report_path.parent / given
        options = [beside] if record.base == "run_folder" else [given, beside]
        found: list[Path] = []
        for option in options:
            if option.is_file() and not any(option.samefile(f) for f in found):
                found.append(option)
        return found

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
    """A report file parsed as a JSON object; any other content is an error naming it."""
    data = read_document(path)  # exact causes (missing, a folder, a symlink loop); BOM dropped
    try:
        report = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputFileError(f"report is not valid JSON ({exc})", path=path) from None
    if not isinstance(report, dict):
        raise InputFileError("report is not a JSON object", path=path)
    return report
