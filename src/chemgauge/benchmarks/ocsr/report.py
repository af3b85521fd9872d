"""Aggregate scored OCSR rows into the report: a pure function of rows and the manifest.

Denominators stay separate: all planned attempts, planned attempts with a finite reference,
attempted, completed and provisional. Completed exact graphs, provisional exact previews and
validation (acceptance) are counted apart, every policy over the same denominator.

Rows are folded into a :class:`ReportTally` as they stream past and never held. The tally
keeps counters, one float per timed attempt (for the median), one small record per image
(statuses and distinct graphs, for the consistency list) and one entry per attempt without a
reference (the report lists those): what the report itself lists, nothing more.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.ocsr.manifest import Manifest
from chemgauge.benchmarks.ocsr.runner import ATTEMPT_STATUSES, NOT_RUN, TIMING_FIELDS
from chemgauge.benchmarks.ocsr.scoring import HEADLINE_POLICY, MATCH, POLICY_CLAIMS, UNSUPPORTED
from chemgauge.chem.graphdiff import CATEGORIES
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    base_provenance,
    build_envelope,
    record_input,
    write_envelope,
)
from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.eval.records import atomic_write_rows
from chemgauge.eval.stats import wilson_interval

__all__ = [
    "REPORT_VERSION",
    "ReportTally",
    "aggregate",
    "iter_rows_file",
    "report_metrics",
    "write_report",
]

REPORT_VERSION = 1
_INTERNED = {status: status for status in ATTEMPT_STATUSES}


def _rate(successes: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"successes": successes, "n": 0, "rate": None, "wilson95": None}
    interval = wilson_interval(successes, n)
    bounds = [None if b is None else round(b, 6) for b in (interval.low, interval.high)]
    return {"successes": successes, "n": n, "rate": round(successes / n, 6), "wilson95": bounds}


def _status_counts(counts: Counter[str]) -> dict[str, int]:
    return {status: counts.get(status, 0) for status in ATTEMPT_STATUSES}


@dataclass
class _Exactness:
    """Counts over one group of rows (the finite-reference attempts)."""

    planned: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    completed_exact: Counter[str] = field(default_factory=Counter)
    provisional_exact: Counter[str] = field(default_factory=Counter)
    unsupported: Counter[str] = field(default_factory=Counter)

    def add(self, row: Mapping[str, Any]) -> None:
        status = row["status"]
        self.planned += 1
        self.statuses[str(status)] += 1
        for policy, verdict in (row.get("identity") or {}).items():
            if verdict == MATCH and status == "completed":
                self.completed_exact[policy] += 1
            elif verdict == MATCH and status == "provisional":
                self.provisional_exact[policy] += 1
            if verdict == UNSUPPORTED and status != NOT_RUN:
                self.unsupported[policy] += 1

    def result(self, policies: Sequence[str]) -> dict[str, Any]:
        attempted = self.planned - self.statuses[NOT_RUN]
        per_policy: dict[str, Any] = {}
        for policy in policies:
            completed_exact = self.completed_exact[policy]
            per_policy[policy] = {
                "claim": POLICY_CLAIMS.get(policy, ""),
                "completed_exact": completed_exact,
                "provisional_exact": self.provisional_exact[policy],
                "unsupported": self.unsupported[policy],
                "completed_exact_over_planned": _rate(completed_exact, self.planned),
                "completed_exact_over_attempted": _rate(completed_exact, attempted),
            }
        return {
            "planned": self.planned,
            "attempted": attempted,
            "completed": self.statuses["completed"],
            "provisional": self.statuses["provisional"],
            "not_run": self.planned - attempted,
            "statuses": _status_counts(self.statuses),
            "policies": per_policy,
        }


@dataclass
class _Validation:
    """Graph validation of completed and provisional finite-reference attempts."""

    attempts: Counter[str] = field(default_factory=Counter)
    with_graph: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, Counter[str]] = field(
        default_factory=lambda: {"completed": Counter(), "provisional": Counter()}
    )

    def add(self, row: Mapping[str, Any]) -> None:
        status = row["status"]
        if status not in self.reasons:
            return
        self.attempts[status] += 1
        candidate = row["candidate"]
        if not candidate["present"]:
            return
        self.with_graph[status] += 1
        self.accepted[status] += bool(candidate.get("accepted"))
        if not candidate["accepted"]:
            self.reasons[status][str(candidate.get("reason"))] += 1

    def result(self) -> dict[str, Any]:
        return {
            status: {
                "attempts": self.attempts[status],
                "with_graph": self.with_graph[status],
                "accepted": self.accepted[status],
                "rejected_reasons": dict(sorted(reasons.items())),
            }
            for status, reasons in self.reasons.items()
        }


@dataclass
class _Errors:
    """Localized graph errors of completed and provisional finite-reference attempts."""

    diff_status: Counter[str] = field(default_factory=Counter)
    attempts_with: Counter[str] = field(default_factory=Counter)
    totals: Counter[str] = field(default_factory=Counter)

    def add(self, row: Mapping[str, Any]) -> None:
        diff = row.get("graph_diff")
        if diff is None or row["status"] not in ("completed", "provisional"):
            return
        self.diff_status[str(diff["status"])] += 1
        counts: Mapping[str, int] = diff["category_counts"]
        for category, n in counts.items():
            self.attempts_with[category] += 1
            self.totals[category] += n

    def result(self) -> dict[str, Any]:
        commonest = sorted(self.attempts_with.items(), key=lambda kv: (-kv[1], kv[0]))
        return {
            "diff_status": dict(sorted(self.diff_status.items())),
            "attempts_with_category": {c: self.attempts_with.get(c, 0) for c in CATEGORIES},
            "errors_by_category": {c: self.totals.get(c, 0) for c in CATEGORIES},
            "commonest": [{"category": c, "attempts": n} for c, n in commonest[:10]],
        }


@dataclass(slots=True)
class _CaseRepeats:
    """One image's attempts: (repeat, status) pairs and what the attempts that ran returned."""

    statuses: list[tuple[int, str]] = field(default_factory=list)
    ran: int = 0
    ran_statuses: set[str] = field(default_factory=set)
    graphs: set[str] = field(default_factory=set)
    all_present: bool = True


def _consistency_entry(case_id: str, case: _CaseRepeats) -> dict[str, Any]:
    graphs = sorted(case.graphs)
    return {
        "case_id": case_id,
        "statuses": [status for _, status in sorted(case.statuses, key=lambda rs: rs[0])],
        "same_status": len(case.ran_statuses) == 1,
        "distinct_graphs": graphs,
        "same_graph": len(graphs) <= 1 and case.all_present,
    }


def _qualitative(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "attempt_id": row["attempt_id"],
        "case_id": row["case_id"],
        "no_reference_reason": row["no_reference_reason"],
        "status": row["status"],
        "message": (row.get("recognition") or {}).get("message", ""),
        "candidate_smiles": row["candidate"].get("smiles"),
        "empty_candidate": not row["candidate"]["present"],
    }


class ReportTally:
    """The report's numbers, folded in one scored row at a time (:meth:`add`)."""

    def __init__(self) -> None:
        self.planned = 0
        self.statuses: Counter[str] = Counter()
        self.no_reference_statuses: Counter[str] = Counter()
        self.qualitative: list[dict[str, Any]] = []
        self.finite = _Exactness()
        self.validation = _Validation()
        self.errors = _Errors()
        self.cases: dict[str, _CaseRepeats] = {}
        self.elapsed = array("d")

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one scored row in."""
        status = str(row["status"])
        self.planned += 1
        self.statuses[status] += 1
        if row["has_reference"]:
            self.finite.add(row)
            self.validation.add(row)
            self.errors.add(row)
        else:
            self.no_reference_statuses[status] += 1
            self.qualitative.append(_qualitative(row))
        case = self.cases.setdefault(str(row["case_id"]), _CaseRepeats())
        case.statuses.append((row["repeat"], _INTERNED.get(row["status"], row["status"])))
        if row["status"] != NOT_RUN:
            case.ran += 1
            case.ran_statuses.add(_INTERNED.get(row["status"], row["status"]))
            if row["candidate"]["present"]:
                case.graphs.add(str(row["candidate"].get("smiles")))
            else:
                case.all_present = False
        if row.get("recognition"):
            self.elapsed.append(float(row["recognition"]["elapsed_seconds"]))

    def feed(self, rows: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """Yield ``rows`` unchanged, folding each in on the way past."""
        for row in rows:
            self.add(row)
            yield row

    def result(
        self,
        manifest: Manifest,
        policies: Sequence[str],
        provenance: Mapping[str, Any],
        reproducibility: str,
    ) -> dict[str, Any]:
        """The report body; ``reproducibility`` is the rows' hash (see :func:`aggregate`)."""
        elapsed = sorted(self.elapsed)
        return {
            "report_version": REPORT_VERSION,
            "manifest": {"name": manifest.name, "images": len(manifest.cases)},
            "headline_policy": HEADLINE_POLICY,
            "policies": list(policies),
            "all_attempts": {"planned": self.planned, "statuses": _status_counts(self.statuses)},
            "finite_reference": self.finite.result(policies),
            "no_reference": {
                "planned": self.planned - self.finite.planned,
                "statuses": _status_counts(self.no_reference_statuses),
                "attempts": self.qualitative,
            },
            "validation": self.validation.result(),
            "localized_errors": self.errors.result(),
            "consistency": [
                _consistency_entry(case_id, case)
                for case_id, case in self.cases.items()
                if case.ran >= 2
            ],
            "timing": {
                "attempts_timed": len(elapsed),
                "median_seconds": elapsed[len(elapsed) // 2] if elapsed else None,
                "min_seconds": elapsed[0] if elapsed else None,
                "max_seconds": elapsed[-1] if elapsed else None,
                "total_seconds": round(sum(elapsed), 3),
            },
            "token_usage": "reported per attempt when the back-end exposes it, never estimated",
            "provenance": dict(provenance),
            "reproducibility_sha256": reproducibility,
        }


def aggregate(
    manifest: Manifest,
    rows: Iterable[Mapping[str, Any]],
    policies: Sequence[str],
    provenance: Mapping[str, Any],
) -> dict[str, Any]:
    """The report body; byte-identical for identical rows apart from timing fields."""
    tally = ReportTally()
    digest = reproducibility_sha256(tally.feed(rows), TIMING_FIELDS)
    return tally.result(manifest, policies, provenance, digest)


def iter_rows_file(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a rows file (``scored.jsonl``) one at a time."""
    with open(path, "rb") as handle:
        for line in handle:
            yield orjson.loads(line)


#: Report-body fields the run envelope holds itself (or in ``timing``), not under ``metrics``.
_ENVELOPE_FIELDS = ("report_version", "provenance", "reproducibility_sha256", "timing")


def report_metrics(body: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope's ``metrics`` from a report body (:func:`aggregate`)."""
    return {k: v for k, v in body.items() if k not in _ENVELOPE_FIELDS}


def write_report(
    out_dir: str | Path,
    manifest: Manifest,
    rows: Iterable[Mapping[str, Any]],
    policies: Sequence[str],
    extra: Mapping[str, Any],
    *,
    html: bool = True,
    manifest_path: str | Path | None = None,
) -> dict[str, Any]:
    """Write ``scored.jsonl``, ``report.json`` (a run envelope) and (optionally)
    ``report.html`` atomically, and return the report.

    ``extra`` is the run's configuration beyond the policies (the back-end's description and
    the run config; the back-end also goes to provenance); ``manifest_path`` is recorded as
    the run's input. ``rows`` is consumed once (it may be a generator scoring attempts as they
    come): it is streamed into ``scored.jsonl`` and the tally, then the written file is read
    back for the row hash and the HTML page, so no row is held.
    """
    out = Path(out_dir)
    scored = out / "scored.jsonl"
    tally = ReportTally()
    atomic_write_rows(scored, tally.feed(rows))
    counts = CountsTally("status")
    digest = reproducibility_sha256(counts.feed(iter_rows_file(scored)), TIMING_FIELDS)
    body = tally.result(manifest, policies, {}, digest)
    backend = extra.get("backend")
    envelope = build_envelope(
        EnvelopeParts(
            family="ocsr",
            family_schema_version=REPORT_VERSION,
            config={"policies": list(policies), **extra},
            inputs=[] if manifest_path is None else [record_input("manifest", manifest_path)],
            provenance=base_provenance({} if backend is None else {"recognizer": backend}),
            rows_path=scored,
            reproducibility_sha256=digest,
            reproducibility_excludes=TIMING_FIELDS,
            timing={"attempts": body["timing"]},
            counts=counts.result(),
            metrics=report_metrics(body),
        ),
        out / "report.json",
    )
    write_envelope(out / "report.json", envelope)
    if html:
        from chemgauge.benchmarks.ocsr.html import write_html

        write_html(out / "report.html", manifest, iter_rows_file(scored), body)
    return envelope.model_dump(mode="json")
