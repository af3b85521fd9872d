"""Check a report against its rows: every aggregate, the reproducibility hash and input hashes.

Rows are the truth. The family's own aggregation recomputes the report's aggregate sections,
which must equal the recorded ones exactly (JSON numbers round-trip exactly); the row hash is
recomputed over the rows in file order with the recorded exclusions; a recorded input file
that still exists must have the recorded SHA-256. An unreadable row line, a duplicated item
and a missing report section are differences too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.provenance import sha256_file
from chemgauge.report.families import resolve_input_path
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import Run

__all__ = ["Check", "Difference", "Verification", "diff_json", "verify_run"]

_MISSING = "<missing>"


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the report disagrees with what its rows (or files) say."""

    where: str
    recorded: Any
    recomputed: Any

    def describe(self) -> str:
        """``where: recorded X, recomputed Y`` with values shortened."""
        return (
            f"{self.where}: recorded {_short(self.recorded)}, recomputed {_short(self.recomputed)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for JSON output."""
        return {"where": self.where, "recorded": self.recorded, "recomputed": self.recomputed}


@dataclass(frozen=True, slots=True)
class Check:
    """One verification step and whether it passed (``None``: could not be checked)."""

    name: str
    ok: bool | None
    detail: str


@dataclass
class Verification:
    """The outcome of verifying one run."""

    family: str
    checks: list[Check] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True iff nothing disagreed (unchecked inputs do not fail a run)."""
        return not self.differences and all(c.ok is not False for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for JSON output."""
        return {
            "family": self.family,
            "ok": self.ok,
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "differences": [d.to_dict() for d in self.differences],
        }


def _short(value: Any, limit: int = 120) -> str:
    text = _MISSING if value is _MISSING else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same_scalar(a: Any, b: Any) -> bool:
    # bool is an int in Python; a report saying true where rows say 1 is still a difference.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def diff_json(recorded: Any, recomputed: Any, where: str = "") -> Iterator[Difference]:
    """Differences between two JSON-like values, in document order (keys sorted)."""
    if isinstance(recorded, Mapping) and isinstance(recomputed, Mapping):
        for key in sorted(set(recorded) | set(recomputed), key=str):
            path = f"{where}.{key}" if where else str(key)
            yield from diff_json(recorded.get(key, _MISSING), recomputed.get(key, _MISSING), path)
        return
    if isinstance(recorded, list) and isinstance(recomputed, list):
        if len(recorded) != len(recomputed):
            yield Difference(f"{where} (length)", len(recorded), len(recomputed))
        for index, (a, b) in enumerate(zip(recorded, recomputed, strict=False)):
            yield from diff_json(a, b, f"{where}[{index}]")
        return
    if recorded is _MISSING or recomputed is _MISSING:
        yield Difference(where, recorded, recomputed)
        return
    if isinstance(recorded, (Mapping, list)) or isinstance(recomputed, (Mapping, list)):
        yield Difference(where, recorded, recomputed)
        return
    if not _same_scalar(recorded, recomputed):
        yield Difference(where, recorded, recomputed)


def _check_rows(run: Run, result: Verification) -> None:
    for line, reason in run.bad_lines:
        result.differences.append(
            Difference(f"{run.rows_path}, line {line}", "a JSON row", f"unreadable ({reason})")
        )
    result.checks.append(
        Check(
            "rows readable",
            not run.bad_lines,
            f"{len(run.rows)} rows"
            + (f", {len(run.bad_lines)} unreadable" if run.bad_lines else ""),
        )
    )


def verify_run(run: Run) -> Verification:
    """Recompute everything the report claims from its rows and input files."""
    adapter = get_adapter(run.family)
    result = Verification(run.family)
    _check_rows(run, result)

    try:
        keys = Counter(adapter.item_key(row) for row in run.rows)
    except (KeyError, TypeError) as exc:
        raise InputFileError(
            f"a row lacks the {run.family} item key ({exc})", path=run.rows_path
        ) from None
    duplicated = sorted(k for k, n in keys.items() if n > 1)
    for key in duplicated[:20]:
        result.differences.append(Difference(f"rows: item {key!r}", 1, keys[key]))
    result.checks.append(
        Check("item keys unique", not duplicated, f"{len(duplicated)} duplicated item keys")
    )

    try:
        recomputed = adapter.recompute(run)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputFileError(
            f"rows do not have the {run.family} row shape ({type(exc).__name__}: {exc})",
            path=run.rows_path,
        ) from None
    before = len(result.differences)
    for section, value in recomputed.sections.items():
        result.differences.extend(diff_json(run.report.get(section, _MISSING), value, section))
    found = len(result.differences) - before
    result.checks.append(
        Check(
            "aggregates",
            found == 0,
            f"{', '.join(recomputed.sections)}: {found} differences"
            + "".join(f"; {note}" for note in recomputed.notes),
        )
    )

    recorded_hash, row_hash = adapter.reproducibility(run)
    if recorded_hash != row_hash:
        result.differences.append(
            Difference("provenance.reproducibility_sha256", recorded_hash, row_hash)
        )
    result.checks.append(
        Check("reproducibility hash", recorded_hash == row_hash, f"recomputed {row_hash}")
    )

    for item in adapter.input_files(run.report):
        path = (
            None
            if item.path is None
            else resolve_input_path(item.path, run.report_path, beside_report=item.beside_report)
        )
        if path is None:
            result.checks.append(
                Check(f"{item.label} file hash", None, f"{item.path}: not present, not checked")
            )
            continue
        actual = sha256_file(path)
        if actual != item.sha256:
            result.differences.append(
                Difference(f"{item.label} file hash ({path})", item.sha256, actual)
            )
        result.checks.append(Check(f"{item.label} file hash", actual == item.sha256, str(path)))
    return result
