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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.atomic import atomic_write_rows
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    base_provenance,
    build_envelope,
    record_input,
    write_envelope,
)
from chemgauge.eval.metrics import rate
from chemgauge.eval.provenance import reproducibility_sha256, sha256_file
from chemgauge.families.ocsr.attempts import (
    ATTEMPT_STATUSES,
    JOURNAL_NAME,
    NOT_RUN,
    TIMING_FIELDS,
)
from chemgauge.families.ocsr.family import FAMILY
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.metrics_model import OcsrMetrics
from chemgauge.families.ocsr.scoring import HEADLINE_POLICY, MATCH
from chemgauge.families.ocsr.tallies import (
    AbbreviationTally,
    ErrorsTally,
    ExactnessTally,
    ImageInputTally,
    ModelReviewTally,
    ServedTally,
    ValidationTally,
    median,
    reason_counts,
    status_counts,
)

__all__ = [
    "REPORT_VERSION",
    "PageWriter",
    "ReportTally",
    "aggregate",
    "iter_rows_file",
    "journal_record",
    "report_metrics",
    "write_report",
]

#: The family's schema version (one source: :data:`chemgauge.families.ocsr.family.FAMILY`).
REPORT_VERSION = FAMILY.schema_version
_INTERNED = {status: status for status in ATTEMPT_STATUSES}

#: Writes the run's HTML page: (path, manifest, scored rows streamed from the file, report body).
PageWriter = Callable[[Path, Manifest, Iterable[Mapping[str, Any]], Mapping[str, Any]], object]


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
            "exact_in_all": rate(in_all, len(finite)),
            "exact_in_any": rate(in_any, len(finite)),
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
        self.reasons: Counter[str] = Counter()
        self.no_reference_statuses: Counter[str] = Counter()
        self.qualitative: list[dict[str, Any]] = []
        self.finite = ExactnessTally()
        self.validation = ValidationTally()
        self.errors = ErrorsTally()
        self.cases: dict[str, _CaseRepeats] = {}
        self.elapsed = array("d")
        self.served = ServedTally()
        self.abbreviations = AbbreviationTally()
        self.image_inputs = ImageInputTally()
        self.model_review = ModelReviewTally()

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one scored row in."""
        status = str(row["status"])
        self.planned += 1
        self.statuses[status] += 1
        if status == NOT_RUN:
            self.reasons[str(row.get("not_run_reason"))] += 1
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
        self.image_inputs.add(row)
        self.model_review.add(row)
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
            "all_attempts": {
                "planned": self.planned,
                "statuses": status_counts(self.statuses),
                "not_run_reasons": reason_counts(self.reasons),
            },
            "finite_reference": self.finite.result(policies),
            "no_reference": {
                "planned": self.planned - self.finite.planned,
                "statuses": status_counts(self.no_reference_statuses),
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
                "median_seconds": median(elapsed),
                "min_seconds": elapsed[0] if elapsed else None,
                "max_seconds": elapsed[-1] if elapsed else None,
                "total_seconds": round(sum(elapsed), 3),
            },
            "served": self.served.result(),
            "image_inputs": self.image_inputs.result(),
            "model_review": self.model_review.result(),
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
    """The envelope's ``metrics`` from a report body (:func:`aggregate`), checked against
    :class:`~chemgauge.families.ocsr.metrics_model.OcsrMetrics` (a block that breaks the
    published schema is never written)."""
    metrics = {k: v for k, v in body.items() if k not in _ENVELOPE_FIELDS}
    OcsrMetrics.model_validate(metrics)
    return metrics


def journal_record(out: Path) -> dict[str, Any] | None:
    """The attempts journal beside the report, hashed now: ``ocsr score`` and ``verify``
    check it. Its bytes follow completion order and hold timings, so the record belongs to
    the envelope's ``timing`` (two identical runs have different journals)."""
    journal = out / JOURNAL_NAME
    if not journal.is_file():
        return None
    return {"path": JOURNAL_NAME, "sha256": sha256_file(journal), "size": journal.stat().st_size}


def write_report(
    out_dir: str | Path,
    manifest: Manifest,
    rows: Iterable[Mapping[str, Any]],
    policies: Sequence[str],
    extra: Mapping[str, Any],
    *,
    page: PageWriter | None = None,
    manifest_path: str | Path | None = None,
    execution: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """Write ``scored.jsonl``, ``report.json`` (a run envelope) and (optionally)
    ``report.html`` atomically, and return the report.

    ``page`` writes ``report.html`` (the report layer's :func:`chemgauge.families.ocsr.page.
    write_html`); it is passed in because the page belongs to a higher layer than scoring.

    ``extra`` is the run's configuration beyond the policies (the back-end's description, the
    run config, the journal's attempt hash, the scoring claims; the back-end also goes to
    provenance); ``manifest_path`` is recorded as the run's input; the attempts journal's
    hash (:func:`journal_record`) and ``execution`` (where attempts ran) go to ``timing``,
    re-scoring ``notes`` to provenance. ``rows`` is consumed once (it may be a generator
    scoring attempts as they come): it is streamed into ``scored.jsonl`` and the tally, then
    the written file is read back for the row hash and the HTML page, so no row is held.
    """
    out = Path(out_dir)
    scored = out / "scored.jsonl"
    tally = ReportTally()
    atomic_write_rows(scored, tally.feed(rows))
    counts = CountsTally("status")
    digest = reproducibility_sha256(counts.feed(iter_rows_file(scored)), TIMING_FIELDS)
    body = tally.result(manifest, policies, {}, digest)
    backend = extra.get("backend")
    inputs = [] if manifest_path is None else [record_input("manifest", manifest_path)]
    timing: dict[str, Any] = {"attempts": body["timing"]}
    if execution:
        timing["execution"] = dict(execution)
    journal = journal_record(out)
    if journal is not None:
        timing["attempts_journal"] = journal
    envelope = build_envelope(
        EnvelopeParts(
            family="ocsr",
            family_schema_version=REPORT_VERSION,
            config={"policies": list(policies), **extra},
            inputs=inputs,
            provenance=base_provenance(
                {} if backend is None else {"recognizer": backend},
                **({"rescored": list(notes)} if notes else {}),
            ),
            rows_path=scored,
            reproducibility_sha256=digest,
            reproducibility_excludes=TIMING_FIELDS,
            timing=timing,
            counts=counts.result(),
            metrics=report_metrics(body),
        ),
        out / "report.json",
    )
    write_envelope(out / "report.json", envelope)
    if page is not None:
        page(out / "report.html", manifest, iter_rows_file(scored), body)
    return envelope.model_dump(mode="json")
