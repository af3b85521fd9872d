"""Aggregate scored OCSR rows into the report: a pure function of rows and the manifest.

Denominators stay separate: all planned attempts, planned attempts with a finite reference,
attempted, completed and provisional. Completed exact graphs, provisional exact previews and
validation (acceptance) are counted apart, every policy over the same denominator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemgauge.benchmarks.ocsr.manifest import Manifest
from chemgauge.benchmarks.ocsr.runner import ATTEMPT_STATUSES, NOT_RUN, TIMING_FIELDS
from chemgauge.benchmarks.ocsr.scoring import HEADLINE_POLICY, MATCH, POLICY_CLAIMS, UNSUPPORTED
from chemgauge.chem.graphdiff import CATEGORIES
from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.eval.records import atomic_write_bytes, atomic_write_json, atomic_write_rows
from chemgauge.eval.stats import wilson_interval

__all__ = ["REPORT_VERSION", "aggregate", "write_report"]

REPORT_VERSION = 1


def _rate(successes: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"successes": successes, "n": 0, "rate": None, "wilson95": None}
    interval = wilson_interval(successes, n)
    bounds = [None if b is None else round(b, 6) for b in (interval.low, interval.high)]
    return {"successes": successes, "n": n, "rate": round(successes / n, 6), "wilson95": bounds}


def _status_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts = Counter(str(r["status"]) for r in rows)
    return {status: counts.get(status, 0) for status in ATTEMPT_STATUSES}


def _verdict(row: Mapping[str, Any], policy: str) -> str | None:
    identity = row.get("identity")
    return None if identity is None else identity.get(policy)


def _exactness(rows: Sequence[Mapping[str, Any]], policies: Sequence[str]) -> dict[str, Any]:
    planned = len(rows)
    attempted = [r for r in rows if r["status"] != NOT_RUN]
    completed = [r for r in rows if r["status"] == "completed"]
    provisional = [r for r in rows if r["status"] == "provisional"]
    per_policy: dict[str, Any] = {}
    for policy in policies:
        completed_exact = sum(_verdict(r, policy) == MATCH for r in completed)
        per_policy[policy] = {
            "claim": POLICY_CLAIMS.get(policy, ""),
            "completed_exact": completed_exact,
            "provisional_exact": sum(_verdict(r, policy) == MATCH for r in provisional),
            "unsupported": sum(_verdict(r, policy) == UNSUPPORTED for r in attempted),
            "completed_exact_over_planned": _rate(completed_exact, planned),
            "completed_exact_over_attempted": _rate(completed_exact, len(attempted)),
        }
    return {
        "planned": planned,
        "attempted": len(attempted),
        "completed": len(completed),
        "provisional": len(provisional),
        "not_run": planned - len(attempted),
        "statuses": _status_counts(rows),
        "policies": per_policy,
    }


def _validation(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status in ("completed", "provisional"):
        subset = [r for r in rows if r["status"] == status]
        with_graph = [r for r in subset if r["candidate"]["present"]]
        accepted = sum(bool(r["candidate"].get("accepted")) for r in with_graph)
        reasons = Counter(
            str(r["candidate"].get("reason")) for r in with_graph if not r["candidate"]["accepted"]
        )
        out[status] = {
            "attempts": len(subset),
            "with_graph": len(with_graph),
            "accepted": accepted,
            "rejected_reasons": dict(sorted(reasons.items())),
        }
    return out


def _errors(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    diff_status: Counter[str] = Counter()
    attempts_with: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for row in rows:
        diff = row.get("graph_diff")
        if diff is None or row["status"] not in ("completed", "provisional"):
            continue
        diff_status[str(diff["status"])] += 1
        counts: Mapping[str, int] = diff["category_counts"]
        for category, n in counts.items():
            attempts_with[category] += 1
            totals[category] += n
    commonest = sorted(attempts_with.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "diff_status": dict(sorted(diff_status.items())),
        "attempts_with_category": {c: attempts_with.get(c, 0) for c in CATEGORIES},
        "errors_by_category": {c: totals.get(c, 0) for c in CATEGORIES},
        "commonest": [{"category": c, "attempts": n} for c, n in commonest[:10]],
    }


def _consistency(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    by_case: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_case.setdefault(str(row["case_id"]), []).append(row)
    out: list[dict[str, Any]] = []
    for case_id, group in by_case.items():
        ran = [r for r in group if r["status"] != NOT_RUN]
        if len(ran) < 2:
            continue
        graphs = sorted(
            {str(r["candidate"].get("smiles")) for r in ran if r["candidate"]["present"]}
        )
        out.append(
            {
                "case_id": case_id,
                "statuses": [r["status"] for r in sorted(group, key=lambda r: r["repeat"])],
                "same_status": len({r["status"] for r in ran}) == 1,
                "distinct_graphs": graphs,
                "same_graph": len(graphs) <= 1 and all(r["candidate"]["present"] for r in ran),
            }
        )
    return out


def _qualitative(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "attempt_id": r["attempt_id"],
            "case_id": r["case_id"],
            "no_reference_reason": r["no_reference_reason"],
            "status": r["status"],
            "message": (r.get("recognition") or {}).get("message", ""),
            "candidate_smiles": r["candidate"].get("smiles"),
            "empty_candidate": not r["candidate"]["present"],
        }
        for r in rows
        if not r["has_reference"]
    ]


def aggregate(
    manifest: Manifest,
    rows: Sequence[Mapping[str, Any]],
    policies: Sequence[str],
    provenance: Mapping[str, Any],
) -> dict[str, Any]:
    """The report body; byte-identical for identical rows apart from timing fields."""
    finite = [r for r in rows if r["has_reference"]]
    elapsed = sorted(
        float(r["recognition"]["elapsed_seconds"]) for r in rows if r.get("recognition")
    )
    return {
        "report_version": REPORT_VERSION,
        "manifest": {"name": manifest.name, "images": len(manifest.cases)},
        "headline_policy": HEADLINE_POLICY,
        "policies": list(policies),
        "all_attempts": {"planned": len(rows), "statuses": _status_counts(rows)},
        "finite_reference": _exactness(finite, policies),
        "no_reference": {
            "planned": len(rows) - len(finite),
            "statuses": _status_counts([r for r in rows if not r["has_reference"]]),
            "attempts": _qualitative(rows),
        },
        "validation": _validation(finite),
        "localized_errors": _errors(finite),
        "consistency": _consistency(rows),
        "timing": {
            "attempts_timed": len(elapsed),
            "median_seconds": elapsed[len(elapsed) // 2] if elapsed else None,
            "min_seconds": elapsed[0] if elapsed else None,
            "max_seconds": elapsed[-1] if elapsed else None,
            "total_seconds": round(sum(elapsed), 3),
        },
        "token_usage": "reported per attempt when the back-end exposes it, never estimated",
        "provenance": dict(provenance),
        "reproducibility_sha256": reproducibility_sha256(rows, TIMING_FIELDS),
    }


def write_report(
    out_dir: str | Path,
    manifest: Manifest,
    rows: Sequence[Mapping[str, Any]],
    policies: Sequence[str],
    provenance: Mapping[str, Any],
    *,
    html: bool = True,
) -> dict[str, Any]:
    """Write ``scored.jsonl``, ``report.json`` and (optionally) ``report.html`` atomically."""
    out = Path(out_dir)
    atomic_write_rows(out / "scored.jsonl", rows)
    report = aggregate(manifest, rows, policies, provenance)
    atomic_write_json(out / "report.json", report)
    if html:
        from chemgauge.benchmarks.ocsr.html import render_html

        atomic_write_bytes(out / "report.html", render_html(manifest, rows, report).encode())
    return report
