"""Reading one finished run from disk, with the family that wrote it and that family's rows file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.records import RejectionStats, read_jsonl
from chemgauge.report.registry import adapter_classes, get_adapter
from chemgauge.report.runs import REPORT_NAME, ROWS_NAME, Run, read_report

__all__ = ["family_of", "load_run"]


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
    report = read_report(report_file)
    name = family_of(report, report_file, family)
    if rows_path is not None:
        rows_file = Path(rows_path)
    else:
        folder = base if base is not None else report_file.parent
        names = dict.fromkeys((ROWS_NAME, *get_adapter(name).rows_file_names))
        rows_file = next((folder / n for n in names if (folder / n).is_file()), folder / ROWS_NAME)
    stats = RejectionStats(path=str(rows_file), max_diagnostics=1_000_000)
    if not rows_file.is_file():
        raise InputFileError("row file not found", path=rows_file)
    rows = [row for _, row in read_jsonl(rows_file, stats)]
    bad = [(d.line, f"{d.reason}: {d.detail}") for d in stats.diagnostics]
    return Run(report, rows, report_file, rows_file, bad, name)
