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
from chemgauge.eval.records import RejectionStats, read_jsonl

__all__ = ["REPORT_NAME", "ROWS_NAME", "Run", "family_of", "load_run"]

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


def _read_report(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputFileError("report file not found", path=path) from None
    except IsADirectoryError:
        raise InputFileError("expected a report JSON file, found a directory", path=path) from None
    except OSError as exc:
        raise InputFileError(f"cannot read report ({exc.strerror})", path=path) from None
    try:
        report = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputFileError(f"report is not valid JSON ({exc})", path=path) from None
    if not isinstance(report, dict):
        raise InputFileError("report is not a JSON object", path=path)
    return report


def family_of(report: dict[str, Any], path: Path, override: str | None = None) -> str:
    """The family that wrote a report: the caller's override, else ``family``, else
    ``benchmark`` (``chemgauge-`` prefix dropped), else the one adapter claiming its shape."""
    if override:
        return override
    family = report.get("family")
    if isinstance(family, str) and family:
        return family
    benchmark = report.get("benchmark")
    if isinstance(benchmark, str) and benchmark:
        return benchmark.removeprefix("chemgauge-")
    from chemgauge.report.families import adapter_classes

    claimed = [name for name, cls in adapter_classes().items() if cls.claims_report(report)]
    if len(claimed) == 1:
        return claimed[0]
    raise InputFileError(
        "report has no 'family' or 'benchmark' field naming the benchmark that wrote it "
        "(pass --family)",
        path=path,
    )


def load_run(
    run_dir: str | Path | None = None,
    *,
    report_path: str | Path | None = None,
    rows_path: str | Path | None = None,
    family: str | None = None,
) -> Run:
    """Read a run from a folder (or a report file) and/or explicit report and row paths.

    Without ``rows_path`` the rows are ``rows.jsonl`` beside the report, or the first file of
    the family adapter's ``rows_file_names`` that exists there.
    """
    base = None if run_dir is None else Path(run_dir)
    if base is not None and base.is_file() and report_path is None:
        report_path, base = base, None  # a report file given where a folder was expected
    if base is not None and not base.is_dir():
        hint = "not found" if not base.exists() else "not a folder"
        raise InputFileError(
            f"run folder {hint} (expected {REPORT_NAME} and {ROWS_NAME} inside)", path=base
        )
    if report_path is not None:
        report_file = Path(report_path)
    elif base is not None:
        report_file = base / REPORT_NAME
    else:
        raise InputFileError("give a run folder or --report")
    report = _read_report(report_file)
    name = family_of(report, report_file, family)
    if rows_path is not None:
        rows_file = Path(rows_path)
    else:
        from chemgauge.report.families import get_adapter

        folder = base if base is not None else report_file.parent
        names = dict.fromkeys((ROWS_NAME, *get_adapter(name).rows_file_names))
        rows_file = next((folder / n for n in names if (folder / n).is_file()), folder / ROWS_NAME)
    stats = RejectionStats(path=str(rows_file), max_diagnostics=1_000_000)
    if not rows_file.is_file():
        raise InputFileError("row file not found", path=rows_file)
    rows = [row for _, row in read_jsonl(rows_file, stats)]
    bad = [(d.line, f"{d.reason}: {d.detail}") for d in stats.diagnostics]
    return Run(report, rows, report_file, rows_file, bad, name)
