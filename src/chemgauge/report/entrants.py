"""The runs a board is made of: found under the paths given, each read once and verified, then
entered under a label no other run has, or refused with its reason.

A path is a run folder (holding ``report.json``), a report file, or a folder searched for run
folders (every ``report.json`` below it, hidden folders skipped). A run that cannot be read,
whose rows are not readable, or that fails ``verify`` (its report disagrees with its rows, its
inputs or itself) is refused, never ranked; a run whose recorded input files are not found is
entered, with that said. ``verify=False`` (``--no-verify``) enters readable runs unchecked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from chemgauge.errors import ChemgaugeError, InputFileError, RunRefused
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import REPORT_NAME, Run
from chemgauge.report.verify import Verification, verify_run

__all__ = [
    "Entrant",
    "Entry",
    "Refusal",
    "enter_runs",
    "find_reports",
    "relative_link",
    "report_page",
    "unique_labels",
]

#: What a board says about each run's verification.
VERIFIED = "verified"
NOT_VERIFIED = "not verified (--no-verify)"


@dataclass(frozen=True)
class Entrant:
    """A run on a board: its unique label, the system it measured, how it was checked."""

    run: Run
    label: str
    system: str
    check: str
    verification: Verification | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """A run left off a board, and why (``path``: its report, or the folder given)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """Plain mapping for JSON output."""
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class Entry:
    """The runs entered and the runs refused."""

    entrants: tuple[Entrant, ...]
    refusals: tuple[Refusal, ...]


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts[:-1])


def find_reports(paths: Sequence[str | Path]) -> list[Path]:
    """The report files the paths name, in order, each once (see the module doc)."""
    found: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_file():
            reports = [path]
        elif (path / REPORT_NAME).is_file():
            reports = [path / REPORT_NAME]
        elif path.is_dir():
            reports = sorted(p for p in path.rglob(REPORT_NAME) if not _hidden(p, path))
            if not reports:
                raise InputFileError(f"no run folder (with a {REPORT_NAME}) under it", path=path)
        else:
            raise InputFileError("no such run folder or report file", path=path)
        for report in reports:
            key = report.resolve()
            if key not in seen:
                seen.add(key)
                found.append(report)
    return found


def unique_labels(reports: Sequence[Path]) -> list[str]:
    """A short label per run: its folder's name, with as many parent folders as it takes for
    no two runs to share one (the report's file name for a report that is not ``report.json``)."""
    parts = []
    for report in reports:
        folder = Path(os.path.abspath(report)).parent
        tail = () if report.name == REPORT_NAME else (report.stem,)
        parts.append((*folder.parts, *tail))
    depth = {i: 1 for i in range(len(parts))}
    while True:
        labels = ["/".join(p[-depth[i] :]) for i, p in enumerate(parts)]
        clashing = {i for i, label in enumerate(labels) if labels.count(label) > 1}
        growable = {i for i in clashing if depth[i] < len(parts[i])}
        if not growable:
            return labels
        for i in growable:
            depth[i] += 1


def _first_difference(verification: Verification) -> str:
    if verification.differences:
        return verification.differences[0].describe()
    failed = next((c for c in verification.checks if c.ok is False), None)
    return "" if failed is None else f"{failed.name}: {failed.detail}"


def _check(run: Run, verify: bool) -> tuple[str, Verification | None]:
    """How the run checks out; raises with the reason a run is refused."""
    if not verify:
        run.require_clean_rows()
        return NOT_VERIFIED, None
    verification = verify_run(run)
    if not verification.ok:
        count = len(verification.differences)
        raise RunRefused(
            f"fails verify ({count} difference{'s' if count != 1 else ''}; first: "
            f"{_first_difference(verification)})"
        )
    if verification.missing_inputs:
        missing = ", ".join(verification.missing_inputs)
        return f"{VERIFIED} except the inputs not found ({missing})", verification
    return VERIFIED, verification


def enter_runs(
    paths: Sequence[str | Path],
    *,
    verify: bool = True,
    progress: Callable[[int], None] | None = None,
) -> Entry:
    """Find, read and check every run the paths name (``progress`` gets 1 per run)."""
    reports = find_reports(paths)
    labels = unique_labels(reports)
    entrants: list[Entrant] = []
    refusals: list[Refusal] = []
    for report, label in zip(reports, labels, strict=True):
        try:
            run = load_run(report)
            check, verification = _check(run, verify)
            system = get_adapter(run.family).system_name(run)
        except (ChemgaugeError, RunRefused) as exc:
            refusals.append(Refusal(str(report), str(exc).removeprefix(f"{report}: ")))
        else:
            entrants.append(Entrant(run, label, system, check, verification))
        if progress is not None:
            progress(1)
    return Entry(tuple(entrants), tuple(refusals))


def report_page(entrant: Entrant, written: Mapping[str, Path] | None = None) -> Path:
    """The run's own report page: one written for this board (by label), else
    ``report.html`` beside its report, else the report file itself."""
    if written and entrant.label in written:
        return written[entrant.label]
    page = entrant.run.report_path.parent / "report.html"
    return page if page.is_file() else entrant.run.report_path


def relative_link(target: Path, base: Path) -> str:
    """``target`` as a link from a page in folder ``base`` (a POSIX relative path when one
    exists)."""
    try:
        return Path(os.path.relpath(os.path.abspath(target), os.path.abspath(base))).as_posix()
    except ValueError:  # another drive
        return Path(os.path.abspath(target)).as_uri()
