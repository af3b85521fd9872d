"""The section tallies an OCSR report folds rows into, one per report section.

Each tally is fed scored rows one at a time (``add``) and holds counters only; ``result``
gives the section. Every rate is the one shape of :func:`chemgauge.eval.metrics.rate` (count,
n, value and its Wilson interval); denominators are stated in each section.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemgauge.chem.graphdiff import CATEGORIES
from chemgauge.eval.metrics import rate
from chemgauge.families.ocsr.attempts import ATTEMPT_STATUSES, NOT_RUN
from chemgauge.families.ocsr.scoring import MATCH, POLICY_CLAIMS, UNSUPPORTED

__all__ = [
    "AbbreviationTally",
    "ErrorsTally",
    "ExactnessTally",
    "ImageInputTally",
    "ModelReviewTally",
    "ServedTally",
    "ValidationTally",
    "median",
    "not_run_phrase",
    "reason_counts",
    "status_counts",
    "summary_facts",
]


def median(ordered: Sequence[float]) -> float | None:
    """Median of sorted values (the mean of the middle two for an even count), 6 decimals."""
    if not ordered:
        return None
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2, 6)


def status_counts(counts: Counter[str]) -> dict[str, int]:
    return {status: counts.get(status, 0) for status in ATTEMPT_STATUSES}


#: Distinct not_run reasons listed (the rest are summed under one entry).
MAX_REASONS = 20


def reason_counts(reasons: Counter[str]) -> dict[str, int]:
    """Not-run reasons, commonest first, at most :data:`MAX_REASONS` (plus one for the rest)."""
    ordered = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    out = dict(ordered[:MAX_REASONS])
    rest = sum(n for _, n in ordered[MAX_REASONS:])
    if rest:
        out[f"{len(ordered) - MAX_REASONS} other reason(s)"] = rest
    return out


def not_run_phrase(count: int, reasons: Mapping[str, int] | None) -> str:
    """``N not run`` with its reasons, e.g. ``3 not run (max_requests (15) reached: 3)``."""
    named = "; ".join(f"{why}: {n}" for why, n in (reasons or {}).items())
    return f"{count} not run" + (f" ({named})" if count and named else "")


@dataclass
class ExactnessTally:
    """Counts over one group of rows (the finite-reference attempts)."""

    planned: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    completed_exact: Counter[str] = field(default_factory=Counter)
    provisional_exact: Counter[str] = field(default_factory=Counter)
    unsupported: Counter[str] = field(default_factory=Counter)

    def add(self, row: Mapping[str, Any]) -> None:
        status = row["status"]
        self.planned += 1
        self.statuses[str(status)] += 1
        if status == NOT_RUN:
            self.reasons[str(row.get("not_run_reason"))] += 1
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
                "completed_exact_over_planned": rate(completed_exact, self.planned),
                "completed_exact_over_attempted": rate(completed_exact, attempted),
            }
        return {
            "planned": self.planned,
            "attempted": attempted,
            "completed": self.statuses["completed"],
            "provisional": self.statuses["provisional"],
            "not_run": self.planned - attempted,
            "not_run_reasons": reason_counts(self.reasons),
            "statuses": status_counts(self.statuses),
            "policies": per_policy,
        }


@dataclass
class ValidationTally:
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
class ErrorsTally:
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
class AbbreviationTally:
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
            "label_recall_over_planned": rate(self.recalled, self.planned),
            "label_recall_over_attempted": rate(self.recalled, self.attempted),
            "by_label": {
                label: {"planned": counts[0], "recalled": counts[1]}
                for label, counts in sorted(self.by_label.items())
            },
        }


@dataclass
class ServedTally:
    """Who served the attempts, as the back-end echoed it, and why the run stopped if it did."""

    models: Counter[str] = field(default_factory=Counter)
    efforts: Counter[str] = field(default_factory=Counter)
    tiers: Counter[str] = field(default_factory=Counter)
    stop_reason: str | None = None
    requested_effort: str | None = None
    effort_unverified: int = 0

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
        if isinstance(served.get("requested_effort"), str):
            self.requested_effort = str(served["requested_effort"])
        if served.get("effort_verified") is False:
            self.effort_unverified += 1
        if recognition.get("stop_reason") and self.stop_reason is None:
            self.stop_reason = str(recognition["stop_reason"])

    def result(self) -> dict[str, Any]:
        return {
            "models": dict(sorted(self.models.items())),
            "reasoning_efforts": dict(sorted(self.efforts.items())),
            "service_tiers": dict(sorted(self.tiers.items())),
            "stop_reason": self.stop_reason,
            "requested_effort": self.requested_effort,
            "effort_unverified": self.effort_unverified,
        }


@dataclass
class ImageInputTally:
    """What the recognizer received: attempts whose image had metadata stripped, and the
    images whose metadata decoded to a molecule (a leak the stripping kept from it)."""

    sent: int = 0
    stripped: int = 0
    molecule: int = 0
    leaked_cases: set[str] = field(default_factory=set)

    def add(self, row: Mapping[str, Any]) -> None:
        block = row.get("image_input")
        if not block:
            return
        self.sent += 1
        self.stripped += bool(block.get("metadata_stripped"))
        if block.get("metadata_molecule"):
            self.molecule += 1
            self.leaked_cases.add(str(row["case_id"]))

    def result(self) -> dict[str, Any]:
        return {
            "attempts_sent": self.sent,
            "attempts_with_metadata_stripped": self.stripped,
            "attempts_with_metadata_molecule": self.molecule,
            "cases_with_metadata_molecule": sorted(self.leaked_cases)[:100],
        }


#: Reviews listed in the report (the count covers them all).
MAX_REVIEWS = 200


@dataclass
class ModelReviewTally:
    """A model's own visual review of its answers, kept apart: never ground truth."""

    attempts: int = 0
    reviews: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: Mapping[str, Any]) -> None:
        review = (row.get("recognition") or {}).get("model_review")
        if not review:
            return
        self.attempts += 1
        if len(self.reviews) < MAX_REVIEWS:
            self.reviews.append(
                {
                    "attempt_id": row["attempt_id"],
                    "case_id": row["case_id"],
                    "status": row["status"],
                    "review": str(review)[:2000],
                }
            )

    def result(self) -> dict[str, Any]:
        return {
            "note": "the back-end's own review of its answers: reported apart, never ground "
            "truth and never part of any count above",
            "attempts_with_review": self.attempts,
            "reviews": self.reviews,
        }


def _share(block: Mapping[str, Any]) -> str:
    """A rate (the one shape) as ``count/n (value%)``."""
    share = "n/a" if block["value"] is None else f"{100 * block['value']:.1f}%"
    return f"{block['count']}/{block['n']} ({share})"


def summary_facts(metrics: Mapping[str, Any], requested: str | None = None) -> list[str]:
    """One line each, as apply: who served the answers (beside the ``requested`` model), a
    back-end stop, abbreviation label recall and repeat reliability under the headline policy
    (for the CLI and the HTML page)."""
    facts: list[str] = []
    served = metrics.get("served") or {}
    if served.get("models"):
        line = "served by: " + ", ".join(f"{m} ({n})" for m, n in served["models"].items())
        facts.append(f"{line}; requested {requested!r}" if requested else line)
    if served.get("effort_unverified"):
        facts.append(
            f"reasoning effort {served.get('requested_effort')!r} unverified: the server did not "
            f"echo it for {served['effort_unverified']} attempt(s)"
        )
    if served.get("stop_reason"):
        facts.append(f"the back-end stopped the run: {served['stop_reason']}")
    inputs = metrics.get("image_inputs") or {}
    if inputs.get("attempts_with_metadata_stripped"):
        facts.append(
            f"image metadata stripped before the recognizer saw it: "
            f"{inputs['attempts_with_metadata_stripped']} attempt(s); metadata holding the "
            f"molecule (a leak, flagged): {inputs['attempts_with_metadata_molecule']}"
        )
    reviews = (metrics.get("model_review") or {}).get("attempts_with_review")
    if reviews:
        facts.append(
            f"model's own visual review on {reviews} attempt(s): in its own report section, "
            "never ground truth"
        )
    labels = metrics.get("abbreviations") or {}
    if labels.get("planned_groups"):
        facts.append(
            "abbreviation labels recalled / planned groups: "
            f"{_share(labels['label_recall_over_planned'])}, "
            f"{labels['provisional_recalled']} more in provisional answers"
        )
    repeats = metrics.get("repeats") or {}
    block = (repeats.get("policies") or {}).get(metrics.get("headline_policy", "exact"))
    if repeats.get("repeats", 0) > 1 and block:
        facts.append(
            f"images exact in all {repeats['repeats']} repeats: {_share(block['exact_in_all'])}; "
            f"in any: {_share(block['exact_in_any'])}"
        )
    return facts
