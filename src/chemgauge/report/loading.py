"""Reading any family's run folder into its run envelope and rows: the one loader.

``report``, ``compare``, ``verify`` and the HTML page read runs only through :func:`load_run`,
and then only the envelope plus the family adapter. A report written as a run envelope is
validated against the envelope model; an older report is read through the legacy mappings
(:mod:`chemgauge.report.legacy`) into the same envelope.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import is_envelope, parse_envelope
from chemgauge.eval.records import RejectionStats, read_jsonl
from chemgauge.report.legacy import LEGACY_DIALECTS, upgrade_report
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


def _read_rows(rows_file: Path) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    if not rows_file.is_file():
        raise InputFileError("row file not found", path=rows_file)
    stats = RejectionStats(path=str(rows_file), max_diagnostics=1_000_000)
    rows = [row for _, row in read_jsonl(rows_file, stats)]
    return rows, [(d.line, f"{d.reason}: {d.detail}") for d in stats.diagnostics]


def _relative(path: Path, folder: Path) -> str:
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(folder))).as_posix()
    except ValueError:  # another drive
        return str(path)


def _report_file(base: Path | None, report_path: str | Path | None) -> tuple[Path, Path | None]:
    if base is not None and base.is_file() and report_path is None:
        return base, None  # a report file given where a folder was expected
    if base is not None and not base.is_dir():
        hint = "not found" if not base.exists() else "not a folder"
        raise InputFileError(
            f"run folder {hint} (expected {REPORT_NAME} and {ROWS_NAME} inside)", path=base
        )
    if report_path is not None:
        return Path(report_path), base
    if base is not None:
        return base / REPORT_NAME, base
    raise InputFileError("give a run folder or --report")


def load_run(
    run_dir: str | Path | None = None,
    *,
    report_path: str | Path | None = None,
    rows_path: str | Path | None = None,
    family: str | None = None,
) -> Run:
    """Read a run from a folder (or a report file) and/or explicit report and row paths.

    Without ``rows_path`` the rows are the file the envelope names (``rows_file``, relative
    to the report); for an old report, ``rows.jsonl`` beside it, or the first file of the
    family adapter's ``rows_file_names`` that exists there. ``family`` names the family of an
    old report that names none; for an envelope it must agree with the recorded one.
    """
    report_file, base = _report_file(None if run_dir is None else Path(run_dir), report_path)
    report = read_report(report_file)
    folder = report_file.parent
    if is_envelope(report):
        envelope = parse_envelope(report, report_file)
        if family and family != envelope.family:
            raise InputFileError(
                f"--family {family} does not match the report's family {envelope.family!r}",
                path=report_file,
            )
        rows_file = Path(rows_path) if rows_path is not None else folder / envelope.rows_file
        rows, bad = _read_rows(rows_file)
        return Run(envelope, rows, report_file, rows_file, bad)

    name = family_of(report, report_file, family)
    if rows_path is not None:
        rows_file = Path(rows_path)
    else:
        where = base if base is not None else folder
        names = dict.fromkeys((ROWS_NAME, *get_adapter(name).rows_file_names))
        rows_file = next((where / n for n in names if (where / n).is_file()), where / ROWS_NAME)
    rows, bad = _read_rows(rows_file)
    if name not in LEGACY_DIALECTS:
        raise InputFileError(
            f"not a chemgauge run envelope, and {name!r} has no older report layout to read",
            path=report_file,
        )
    upgraded, dialect, derived = upgrade_report(name, report, rows, _relative(rows_file, folder))
    envelope = parse_envelope(upgraded, report_file)
    return Run(envelope, rows, report_file, rows_file, bad, legacy=dialect, derived=derived)
