"""Report adapter for ``ocsr``: does an image-to-structure recognizer return the exact graph?

Hit metrics are completed exact graphs under each identity policy, over the planned attempts
with a finite reference (the report's ``completed_exact_over_planned``); attempts without a
unique reference take part in none. Headline rates are read from the report's rate blocks
(:meth:`chemgauge.report.adapter.Rate.of`); rows are ``scored.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from chemgauge.errors import ChemgaugeError
from chemgauge.eval.envelope import InputRecord
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.ocsr.attempts import JOURNAL_NAME, TIMING_FIELDS
from chemgauge.families.ocsr.manifest import Manifest, load_manifest
from chemgauge.families.ocsr.report import aggregate, report_metrics
from chemgauge.families.ocsr.scoring import MATCH
from chemgauge.report.adapter import (
    Distribution,
    FailureCase,
    FamilyAdapter,
    Mismatch,
    Rate,
    RatePlot,
    Recomputed,
    Section,
    Structure,
    Table,
    agree,
    system_text,
)
from chemgauge.report.formatting import fmt_count, fmt_rate
from chemgauge.report.runs import Run

__all__ = ["OcsrAdapter", "policy_rates"]

Row = Mapping[str, Any]


def _policies(run: Run) -> tuple[str, ...]:
    return tuple(run.metrics.get("policies") or ())


def _manifest_input(run: Run) -> InputRecord | None:
    return next((i for i in run.envelope.inputs if i.role == "manifest"), None)


def _journal_check(run: Run) -> list[Mismatch]:
    """The attempts journal beside the report must hash as the report recorded (an edited
    journal is caught); a run folder without the journal has nothing to compare."""
    recorded = run.envelope.timing.get("attempts_journal")
    if not isinstance(recorded, Mapping):
        return []
    path = run.report_path.parent / str(recorded.get("path") or JOURNAL_NAME)
    if not path.is_file():
        return []
    return agree(
        f"timing.attempts_journal.sha256 ({path})", recorded.get("sha256"), sha256_file(path)
    )


def _exact(row: Row, policy: str) -> bool:
    identity = row.get("identity") or {}
    return row["status"] == "completed" and identity.get(policy) == MATCH


def _hit_names(run: Run) -> dict[str, str]:
    """Each hit metric's name and the policy it counts exact graphs under."""
    return {f"exact[{policy}]": policy for policy in _policies(run)}


def policy_rates(finite: Mapping[str, Any]) -> list[Rate]:
    """The headline: completed exact graphs over the planned attempts with a finite
    reference, per policy (``finite``: the report's ``finite_reference`` section)."""
    return [
        Rate.of(f"exact graph ({policy})", block["completed_exact_over_planned"])
        for policy, block in finite["policies"].items()
    ]


class OcsrAdapter(FamilyAdapter):
    """Adapter for reports written by ``chemgauge ocsr run`` / ``ocsr score``."""

    family = "ocsr"
    reproducibility_excludes = TIMING_FIELDS

    def item_key(self, row: Row) -> str:
        return str(row["attempt_id"])

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        return tuple(_hit_names(run))

    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        names = _hit_names(run)
        if not row["has_reference"]:
            return dict.fromkeys(names)
        return {name: _exact(row, policy) for name, policy in names.items()}

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        return {"repeat": str(row["repeat"])}

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        manifest = run.metrics.get("manifest") or {}
        recorded = _manifest_input(run)
        return {
            "manifest_sha256": run.envelope.provenance.model_dump().get("manifest_sha256")
            if recorded is None
            else recorded.sha256,
            "manifest_name": manifest.get("name"),
            "images": manifest.get("images"),
        }

    def recompute(self, run: Run) -> Recomputed:
        block = run.metrics.get("manifest") or {}
        # The aggregate reads only the manifest's name and case count; both are carried from
        # the report (cross_checks compares them with the manifest file when it is found),
        # everything else is rows.
        manifest = Manifest.model_construct(
            name=block.get("name", ""), cases=[None] * int(block.get("images", 0))
        )
        sections = report_metrics(aggregate(manifest, run.rows, _policies(run), {}))
        notes = [
            "manifest name and image count are carried from the report",
            "each policy's claim is carried from the report (it describes the code, not rows)",
        ]
        recorded = (run.metrics.get("finite_reference") or {}).get("policies") or {}
        for policy, block in sections["finite_reference"]["policies"].items():
            if isinstance(recorded.get(policy), Mapping) and "claim" in recorded[policy]:
                block["claim"] = recorded[policy]["claim"]
        return Recomputed(sections, notes=tuple(notes))

    def cross_checks(self, run: Run) -> list[Mismatch]:
        found = agree("metrics.policies", run.metrics.get("policies"), run.config.get("policies"))
        found += _journal_check(run)
        claims = (run.config.get("scoring") or {}).get("claims")
        if isinstance(claims, Mapping):  # the claims the config (and its hash) recorded
            recorded = (run.metrics.get("finite_reference") or {}).get("policies") or {}
            shown = {p: (b or {}).get("claim") for p, b in recorded.items()}
            found += agree("metrics.finite_reference.policies[*].claim", shown, dict(claims))
        backend = run.config.get("backend")
        if backend is not None:
            recognizer = run.envelope.provenance.backends.get("recognizer")
            found += agree("provenance.backends.recognizer", recognizer, backend)
        recorded = _manifest_input(run)
        paths = [] if recorded is None else run.input_candidates(recorded)
        if paths:
            try:
                manifest = load_manifest(paths[0], verify=False)
            except ChemgaugeError:
                return found  # an unreadable manifest is the input check's to report
            block = run.metrics.get("manifest") or {}
            found += agree(
                f"metrics.manifest ({paths[0]})",
                {"name": block.get("name"), "images": block.get("images")},
                {"name": manifest.name, "images": len(manifest.cases)},
            )
        return found

    def headline(self, run: Run) -> list[Rate]:
        return policy_rates(self.recompute(run).sections["finite_reference"])

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        report = self.recompute(run).sections
        finite = report["finite_reference"]
        policy_rows = []
        series: dict[str, list[tuple[str, Rate]]] = {"over planned": [], "over attempted": []}
        for policy, block in finite["policies"].items():
            planned = Rate.of(policy, block["completed_exact_over_planned"])
            attempted = Rate.of(policy, block["completed_exact_over_attempted"])
            series["over planned"].append((policy, planned))
            series["over attempted"].append((policy, attempted))
            policy_rows.append(
                (
                    policy,
                    f"{fmt_rate(planned)} ({fmt_count(planned)})",
                    f"{fmt_rate(attempted)} ({fmt_count(attempted)})",
                    str(block["provisional_exact"]),
                    str(block["unsupported"]),
                    str(block["claim"]),
                )
            )
        statuses = report["all_attempts"]["statuses"]
        errors = report["localized_errors"]["errors_by_category"]
        elapsed = tuple(
            float(r["recognition"]["elapsed_seconds"]) for r in run.rows if r.get("recognition")
        )
        overview = Section(
            title="Exact graphs under each identity policy",
            intro=(
                f"{finite['planned']} planned attempts with a finite reference: "
                f"{finite['attempted']} attempted, {finite['completed']} completed, "
                f"{finite['provisional']} provisional, {finite['not_run']} not run. Every "
                "policy has the same denominator."
            ),
            tables=(
                Table(
                    "Completed exact graphs",
                    (
                        "policy",
                        "over planned",
                        "over attempted",
                        "provisional",
                        "unsupported",
                        "claim",
                    ),
                    tuple(policy_rows),
                ),
                Table(
                    "Attempt statuses (all planned attempts)",
                    ("status", "attempts"),
                    tuple((s, str(n)) for s, n in statuses.items()),
                ),
                Table(
                    "Localized graph errors",
                    ("category", "errors"),
                    tuple((c, str(n)) for c, n in errors.items() if n),
                    caption="From the graph diff of each completed or provisional attempt.",
                ),
            ),
            plots=(
                RatePlot("Exact graph rate per policy (95% Wilson intervals)", "policy", series),
                Distribution(
                    "Recognition time per attempt", "seconds", elapsed, integer=False, log_x=True
                ),
            ),
            anchor="policies",
        )
        headline = str(run.metrics.get("headline_policy") or "exact")
        wrong = [
            r
            for r in run.rows
            if r["has_reference"] and r["status"] != "not_run" and not _exact(r, headline)
        ]
        cases = []
        for row in wrong[:max_failures]:
            diff = row.get("graph_diff") or {}
            categories = Counter(str(e["category"]) for e in diff.get("errors") or ())
            cases.append(
                FailureCase(
                    item=str(row["attempt_id"]),
                    title=str(row["case_id"]),
                    details=(
                        ("status", str(row["status"])),
                        (
                            "errors",
                            ", ".join(f"{c} x{n}" for c, n in sorted(categories.items()))
                            or "none localized",
                        ),
                        ("reference", str(row["reference_smiles"])),
                        ("recognized", str(row["candidate"].get("smiles") or "nothing")),
                    ),
                    structures=(
                        Structure("reference", row["reference_smiles"]),
                        Structure("recognized", row["candidate"].get("smiles")),
                    ),
                )
            )
        failures = Section(
            title=f"Attempts not exact under '{headline}'",
            intro=(
                "The reference beside what the recognizer returned, with the localized error "
                "categories. The input images and highlighted atoms are in the OCSR run's own "
                "report.html."
            ),
            failures=tuple(cases),
            failures_total=len(wrong),
            anchor="failures",
        )
        return [overview, failures]

    def board_metric(self, run: Run) -> str:
        names = _hit_names(run)
        headline = run.metrics.get("headline_policy")
        chosen = [name for name, policy in names.items() if policy == headline]
        return (chosen or list(names) or [""])[0]

    def hit_description(self, run: Run, name: str) -> str:
        policy = _hit_names(run).get(name, name)
        return f"the exact graph ({policy}), over the planned attempts with a reference"

    def system_name(self, run: Run) -> str:
        recognizer = run.envelope.provenance.backends.get("recognizer")
        return system_text(recognizer or run.config.get("backend")) or run.label

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        return (
            ("status", str(row["status"])),
            ("recognized", str(row["candidate"].get("smiles") or "nothing")),
        )

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        return (
            Structure("reference", row["reference_smiles"]),
            Structure("recognized", row["candidate"].get("smiles")),
        )
