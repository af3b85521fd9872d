"""Check a run: every aggregate, the counts and the row hash from the rows, the config hash,
the recorded inputs, and the family's cross-checks.

Rows are the truth. The family's own aggregation recomputes the ``metrics`` sections, which
must equal the recorded ones exactly (JSON numbers round-trip exactly); the row hash is
recomputed over the rows in file order; ``config_sha256`` is recomputed from ``config``; the
counts are recounted; every recorded input file must be found (as given, or beside the
report) with its recorded SHA-256 and size; the family adapter cross-checks recorded facts
against each other (a rule-set hash against the rules, provenance against the rows...). An
unreadable row line, a duplicated item and a missing section are differences too.

A run verifies (exit 0), differs (1), or, with nothing differing, could not be fully checked
because a recorded input is missing (3; ``check_inputs=False`` skips the input check).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import CountsTally
from chemgauge.eval.provenance import reproducibility_sha256, sha256_file, sha256_json
from chemgauge.report.adapter import FamilyAdapter
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import Run

__all__ = [
    "Check",
    "Difference",
    "Verification",
    "diff_json",
    "verify_run",
]

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
    missing_inputs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True iff nothing disagreed (a missing input is reported apart: see exit_code)."""
        return not self.differences and all(c.ok is not False for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 verified, 1 differences, 3 a recorded input could not be found."""
        if not self.ok:
            return 1
        return 3 if self.missing_inputs else 0

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for JSON output."""
        return {
            "family": self.family,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "differences": [d.to_dict() for d in self.differences],
            "missing_inputs": list(self.missing_inputs),
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


def _check(result: Verification, name: str, found: list[Difference], detail: str) -> None:
    result.differences.extend(found)
    result.checks.append(Check(name, not found, detail if not found else f"{len(found)} differ"))


def _check_item_keys(run: Run, adapter: FamilyAdapter, result: Verification) -> None:
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


def _check_config(run: Run, result: Verification) -> None:
    recomputed = sha256_json(run.config)
    found = list(diff_json(run.envelope.config_sha256, recomputed, "config_sha256"))
    _check(result, "config hash", found, f"sha256 of config: {recomputed}")


def _check_counts(run: Run, result: Verification) -> None:
    counts = run.envelope.counts
    tally = CountsTally(counts.status_field)
    for row in run.rows:
        tally.add(row)
    recounted = tally.result(counts.rejected_by_reason)
    found = list(diff_json(counts.model_dump(), recounted.model_dump(), "counts"))
    _check(result, "counts", found, f"{counts.items} items by {counts.status_field}")


def _check_aggregates(run: Run, adapter: FamilyAdapter, result: Verification) -> None:
    try:
        recomputed = adapter.recompute(run)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputFileError(
            f"rows do not have the {run.family} row shape ({type(exc).__name__}: {exc})",
            path=run.rows_path,
        ) from None
    found: list[Difference] = []
    for section, value in recomputed.sections.items():
        found += diff_json(run.metrics.get(section, _MISSING), value, f"metrics.{section}")
    result.differences.extend(found)
    result.checks.append(
        Check(
            "aggregates",
            not found,
            f"{', '.join(recomputed.sections)}: {len(found)} differences"
            + "".join(f"; {note}" for note in recomputed.notes),
        )
    )


def _check_row_hash(run: Run, adapter: FamilyAdapter, result: Verification) -> None:
    envelope = run.envelope
    found: list[Difference] = []
    expected = adapter.reproducibility_excludes
    if expected is not None and sorted(envelope.reproducibility_excludes) != sorted(expected):
        found.append(
            Difference(
                "reproducibility_excludes", envelope.reproducibility_excludes, list(expected)
            )
        )
    row_hash = reproducibility_sha256(run.rows, envelope.reproducibility_excludes)
    found += diff_json(envelope.reproducibility_sha256, row_hash, "reproducibility_sha256")
    _check(result, "reproducibility hash", found, f"recomputed {row_hash}")


def _check_cross(run: Run, adapter: FamilyAdapter, result: Verification) -> None:
    mismatches = adapter.cross_checks(run)
    found = [Difference(m.where, m.recorded, m.expected) for m in mismatches]
    _check(result, "cross-checks", found, "config, provenance and metrics agree")


def _check_inputs(run: Run, result: Verification, check_inputs: bool) -> None:
    for record in run.envelope.inputs:
        name = f"input {record.role}"
        if not check_inputs:
            result.checks.append(Check(name, None, f"{record.path}: not checked (--no-inputs)"))
            continue
        candidates = run.input_candidates(record)
        if not candidates:
            where = (
                "beside the report"
                if record.base == "run_folder"
                else "as given or beside the report"
            )
            result.missing_inputs.append(record.role)
            result.checks.append(Check(name, None, f"{record.path}: not found ({where})"))
            continue
        hashes = [(path, sha256_file(path)) for path in candidates]
        match = next((path for path, digest in hashes if digest == record.sha256), None)
        if match is None:
            path, digest = hashes[0]
            result.differences.append(
                Difference(f"inputs[{record.role}].sha256 ({path})", record.sha256, digest)
            )
            result.checks.append(Check(name, False, f"{path}: content differs"))
            continue
        size = match.stat().st_size
        if record.size is not None and record.size != size:
            result.differences.append(
                Difference(f"inputs[{record.role}].size ({match})", record.size, size)
            )
        result.checks.append(Check(name, record.size in (None, size), str(match)))


def verify_run(run: Run, *, check_inputs: bool = True) -> Verification:
    """Recompute everything the run claims from its rows, its config and its input files."""
    adapter = get_adapter(run.family)
    result = Verification(run.family)
    _check_rows(run, result)
    _check_item_keys(run, adapter, result)
    _check_config(run, result)
    _check_counts(run, result)
    _check_aggregates(run, adapter, result)
    _check_row_hash(run, adapter, result)
    _check_cross(run, adapter, result)
    _check_inputs(run, result, check_inputs)
    return result
