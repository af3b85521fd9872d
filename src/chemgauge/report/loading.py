"""Reading any family's run folder into its run envelope and rows: the one loader.

``report``, ``compare``, ``verify`` and the HTML page read runs only through :func:`load_run`,
and then only the envelope plus the family adapter. The report must be a run envelope; it is
validated against the envelope model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import ENVELOPE_FORMAT, is_envelope, parse_envelope
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.paths import confined_path
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families import get_family
from chemgauge.report.adapter import rank_problem
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import REPORT_NAME, ROWS_NAME, Run, read_report

__all__ = ["check_family_report", "load_run"]


def check_family_report(name: str, version: int, metrics: dict[str, Any], path: Path) -> None:
    """The report's family is registered (else "did you mean"), was written at the schema
    version that family writes now, and its ``metrics`` validate against the family's model."""
    family = get_family(name)
    if version != family.schema_version:
        raise InputFileError(
            f"{name} report of family schema version {version}; this chemgauge reads version "
            f"{family.schema_version} (run the benchmark again to get a current report)",
            path=path,
        )
    if not family.metrics:
        return
    try:
        family.metrics_model().model_validate(metrics)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "metrics"
        raise InputFileError(
            f"metrics.{where}: {first['msg']} ({exc.error_count()} problem(s) against the "
            f"{name} metrics schema)",
            path=path,
        ) from None


def _recorded_rows(report_file: Path, recorded: str) -> Path:
    """The rows file a report names, which must lie inside the report's folder (symlinks
    resolved): a hand-edited ``rows_file`` cannot make ``report``/``verify`` read elsewhere;
    rows kept elsewhere are given explicitly (``--rows``)."""
    try:
        confined_path(report_file.parent, recorded)
    except InputFileError as exc:
        raise InputFileError(
            f"the recorded rows_file {recorded!r} lies outside the run folder "
            f"{report_file.parent} ({exc}); give the rows explicitly (--rows) to read them",
            path=report_file,
        ) from None
    return report_file.parent / recorded


def _read_rows(rows_file: Path, family: str) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """The usable rows, and every line that is not: unreadable, or holding a rank that is not
    a non-negative integer or null (a hand-edited -2 would otherwise count as a hit)."""
    if not rows_file.is_file():
        raise InputFileError("row file not found", path=rows_file)
    stats = RejectionStats(path=str(rows_file), max_diagnostics=1_000_000)
    adapter = get_adapter(family)
    rows: list[dict[str, Any]] = []
    bad_ranks: list[tuple[int, str]] = []
    for line, row in read_jsonl(rows_file, stats):
        problems = [p for f, v in adapter.ranks(row) if (p := rank_problem(f, v)) is not None]
        if problems:  # left out of the rows like an unreadable line, and named
            bad_ranks.append((line, f"bad rank: {'; '.join(problems)}"))
        else:
            rows.append(row)
    unreadable = [(d.line, f"{d.reason}: {d.detail}") for d in stats.diagnostics]
    return rows, sorted(unreadable + bad_ranks)


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
    to the report). ``family``, when given, must agree with the recorded family.
    """
    report_file, _ = _report_file(None if run_dir is None else Path(run_dir), report_path)
    report = read_report(report_file)
    if not is_envelope(report):
        raise InputFileError(
            f'not a chemgauge run envelope (no "format": "{ENVELOPE_FORMAT}"); '
            "reports are read only as run envelopes",
            path=report_file,
        )
    envelope = parse_envelope(report, report_file)
    check_family_report(
        envelope.family, envelope.family_schema_version, envelope.metrics, report_file
    )
    if family and family != envelope.family:
        raise InputFileError(
            f"--family {family} does not match the report's family {envelope.family!r}",
            path=report_file,
        )
    recorded = envelope.rows_file
    rows_file = Path(rows_path) if rows_path is not None else _recorded_rows(report_file, recorded)
    rows, bad = _read_rows(rows_file, envelope.family)
    return Run(envelope, rows, report_file, rows_file, bad)
