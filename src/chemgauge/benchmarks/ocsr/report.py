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

from chemgauge.benchmarks.ocsr.attempts import ATTEMPT_STATUSES, NOT_RUN, TIMING_FIELDS
from chemgauge.benchmarks.ocsr.manifest import Manifest
from chemgauge.benchmarks.ocsr.scoring import HEADLINE_POLICY, MATCH, POLICY_CLAIMS, UNSUPPORTED
from chemgauge.chem.graphdiff import CATEGORIES
from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.eval.records import atomic_write_json, atomic_write_rows
from chemgauge.eval.stats import wilson_interval

__all__ = ["REPORT_VERSION", "ReportTally", "aggregate", "iter_rows_file", "write_report"]

REPORT_VERSION = 1
_INTERNED = {status: status for status in ATTEMPT_STATUSES}


def _rate(successes: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"successes": successes, "n": 0, "rate": None, "wilson95": None}
    interval = wilson_interval(successes, n)
    bounds = [None if b is None else round(b, 6) for b in (interval.low, interval.high)]
    return {"successes": successes, "n": n, "rate": round(successes / n, 6), "wilson95": bounds}


def _median(ordered: Sequence[float]) -> float | None:
    """Median of sorted values (the mean of the middle two for an even count), 6 decimals."""
    if not ordered:
        return None
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2, 6)


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


@dataclass
class _Abbreviations:
    """Label recall per reference abbreviation group, beside exactness.

    A group is recalled when the candidate carries a group with the same label (labels are
    matched one to one); a SMILES answer carries none, so expanded chemistry can be exact
    while every label is missing. Denominators are groups in planned and in attempted
    attempts; recalled labels count on completed attempts, provisional ones apart.
    """

    planned: int = 0
    attempted: int = 0
    recalled: int = 0
    provisional_recalled: int = 0
    by_label: dict[str, list[int]] = field(default_factory=dict)

    def add(self, row: Mapping[str, Any]) -> None:
        block = row.get("abbreviations")
        if not block:
            return
        labels = Counter(str(label) for label in block["reference"])
        groups = sum(labels.values())
        self.planned += groups
        status = row["status"]
        if status != NOT_RUN:
            self.attempted += groups
        found = Counter(str(label) for label in block["candidate"]) & labels
        if status == "completed":
            self.recalled += sum(found.values())
        elif status == "provisional":
            self.provisional_recalled += sum(found.values())
        for label, n in labels.items():
            counts = self.by_label.setdefault(label, [0, 0])
            counts[0] += n
            if status == "completed":
                counts[1] += found[label]

    def result(self) -> dict[str, Any]:
        return {
            "planned_groups": self.planned,
            "attempted_groups": self.attempted,
            "recalled": self.recalled,
            "provisional_recalled": self.provisional_recalled,
            "label_recall_over_planned": _rate(self.recalled, self.planned),
            "label_recall_over_attempted": _rate(self.recalled, self.attempted),
            "by_label": {
                label: {"planned": counts[0], "recalled": counts[1]}
                for label, counts in sorted(self.by_label.items())
            },
        }


@dataclass
class _Served:
    """Who served the attempts, as the back-end echoed it, and why the run stopped if it did."""

    models: Counter[str] = field(default_factory=Counter)
    efforts: Counter[str] = field(default_factory=Counter)
    tiers: Counter[str] = field(default_factory=Counter)
    stop_reason: str | None = None

    def add(self, recognition: Mapping[str, Any]) -> None:
        served = recognition.get("served") or {}
        for counter, name in (
            (self.models, "model"),
            (self.efforts, "reasoning_effort"),
            (self.tiers, "service_tier"),
        ):
            value = served.get(name)
            if isinstance(value, str):
                counter[value] += 1
        if recognition.get("stop_reason") and self.stop_reason is None:
            self.stop_reason = str(recognition["stop_reason"])

    def result(self) -> dict[str, Any]:
        return {
            "models": dict(sorted(self.models.items())),
            "reasoning_efforts": dict(sorted(self.efforts.items())),
            "service_tiers": dict(sorted(self.tiers.items())),
            "stop_reason": self.stop_reason,
        }


@dataclass(slots=True)
class _CaseRepeats:
    """One image's attempts: (repeat, status) pairs, what the attempts that ran returned, and
    how many repeats were completed exact under each policy."""

    statuses: list[tuple[int, str]] = field(default_factory=list)
    ran: int = 0
    ran_statuses: set[str] = field(default_factory=set)
    graphs: set[str] = field(default_factory=set)
    all_present: bool = True
    has_reference: bool = False
    exact: Counter[str] = field(default_factory=Counter)


def _repeats(cases: Mapping[str, _CaseRepeats], policies: Sequence[str]) -> dict[str, Any]:
    """Per policy, the share of finite-reference images exact in all their planned repeats
    and in at least one (completed attempts only; a repeat not run is not exact)."""
    finite = [case for case in cases.values() if case.has_reference]
    most = max((len(case.statuses) for case in finite), default=0)
    result: dict[str, Any] = {}
    for policy in policies:
        in_all = sum(case.exact[policy] == len(case.statuses) for case in finite)
        in_any = sum(case.exact[policy] > 0 for case in finite)
        result[policy] = {
            "exact_in_all": _rate(in_all, len(finite)),
            "exact_in_any": _rate(in_any, len(finite)),
        }
    return {"repeats": most, "cases": len(finite), "policies": result}


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
        self.served = _Served()
        self.abbreviations = _Abbreviations()

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one scored row in."""
        status = str(row["status"])
        self.planned += 1
        self.statuses[status] += 1
        case = self.cases.setdefault(str(row["case_id"]), _CaseRepeats())
        if row["has_reference"]:
            self.finite.add(row)
            self.validation.add(row)
            self.errors.add(row)
            self.abbreviations.add(row)
            case.has_reference = True
            if status == "completed":
                for policy, verdict in (row.get("identity") or {}).items():
                    case.exact[policy] += verdict == MATCH
        else:
            self.no_reference_statuses[status] += 1
            self.qualitative.append(_qualitative(row))
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
            self.served.add(row["recognition"])

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
            "abbreviations": self.abbreviations.result(),
            "repeats": _repeats(self.cases, policies),
            "validation": self.validation.result(),
            "localized_errors": self.errors.result(),
            "consistency": [
                _consistency_entry(case_id, case)
                for case_id, case in self.cases.items()
                if case.ran >= 2
            ],
            "timing": {
                "attempts_timed": len(elapsed),
                "median_seconds": _median(elapsed),
                "min_seconds": elapsed[0] if elapsed else None,
                "max_seconds": elapsed[-1] if elapsed else None,
                "total_seconds": round(sum(elapsed), 3),
            },
            "served": self.served.result(),
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


def write_report(
    out_dir: str | Path,
    manifest: Manifest,
    rows: Iterable[Mapping[str, Any]],
    policies: Sequence[str],
    provenance: Mapping[str, Any],
    *,
    html: bool = True,
) -> dict[str, Any]:
    """Write ``scored.jsonl``, ``report.json`` and (optionally) ``report.html`` atomically.

    ``rows`` is consumed once (it may be a generator scoring attempts as they come): it is
    streamed into ``scored.jsonl`` and the tally, then the written file is read back for the
    row hash and the HTML page, so no row is held.
    """
    out = Path(out_dir)
    scored = out / "scored.jsonl"
    tally = ReportTally()
    atomic_write_rows(scored, tally.feed(rows))
    digest = reproducibility_sha256(iter_rows_file(scored), TIMING_FIELDS)
    report = tally.result(manifest, policies, provenance, digest)
    atomic_write_json(out / "report.json", report)
    if html:
        from chemgauge.benchmarks.ocsr.html import write_html

        write_html(out / "report.html", manifest, iter_rows_file(scored), report)
    return report
