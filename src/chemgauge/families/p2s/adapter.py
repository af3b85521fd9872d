"""Report adapter for ``p2s``: does a system use the property it is given to pick a completion?

A p2s run folder's ``rows.jsonl`` and ``report.json`` are written by the p2s scorer itself
(:mod:`chemgauge.families.p2s.report` explains why rows rather than reading the prediction
files here). An item is one task in one view (``property/condition/record_id``); the hit
metric of a row is ``hit[<condition>]``, so compare pairs the correct view of run A with the
correct view of run B, never a correct answer with a counterfactual one. The breakdown is the
property directory, which is a fact of the data, not of either run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.report import STATUSES, aggregate, item_key
from chemgauge.families.p2s.spec import CONDITIONS
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
from chemgauge.report.formatting import fmt_count, fmt_p, fmt_pct, fmt_rate, fmt_signed_pct
from chemgauge.report.runs import Run

__all__ = ["P2SAdapter"]

Row = Mapping[str, Any]
#: The hit metric of each view: a row counts only in its own view's comparison.
_HIT_METRICS = {condition: f"hit[{condition}]" for condition in CONDITIONS}
_VIEW_OF_METRIC = {metric: condition for condition, metric in _HIT_METRICS.items()}
_VIEW_TITLES = {
    "correct": "own property",
    "shuffled": "shuffled property",
    "counterfactual": "counterfactual (picks donor)",
}


def _claim_config(run: Run) -> ClaimConfig:
    """The claim settings the report was made with (every p2s report records them)."""
    block = run.config.get("claim")
    if not isinstance(block, Mapping):
        raise InputFileError("config.claim: no claim settings in the report", path=run.report_path)
    return ClaimConfig(**block)


def _property_text(properties: Mapping[str, Any]) -> str:
    """The evidence a task showed, short: scalars with units, spectra as peak counts."""
    parts = []
    for name, value in properties.items():
        if not isinstance(value, Mapping):
            parts.append(f"{name}: {value}")
        elif "value" in value:
            parts.append(f"{name} {value['value']} {value.get('unit', '')}".rstrip())
        else:
            peaks = value.get("peaks") or ()
            parts.append(f"{name}: {len(peaks)} peaks ({value.get('unit', '')})")
    return "; ".join(parts) or "none (structure only)"


def _chosen_text(row: Row) -> str:
    selected = row["selected"]
    return row["status"] if selected is None else f"{selected} ({row['status']})"


def _candidate_structures(row: Row) -> tuple[Structure, ...]:
    """The masked scaffold, then every candidate with the true and chosen ones marked."""
    true_note = "donor (counterfactual answer)" if row["condition"] == "counterfactual" else "true"
    out = [Structure("masked scaffold", row["masked_smiles"])]
    for index, smiles in enumerate(row["candidates"]):
        roles = []
        if index == row["label"]:
            roles.append("true")
        if index == row["selected"]:
            roles.append("chosen")
        words = {"true": true_note, "chosen": "chosen"}
        label = f"candidate {index}" + "".join(f" · {words[r]}" for r in roles)
        note = (
            "source molecule's own answer"
            if row["condition"] == "counterfactual" and index == row.get("source_label")
            else ""
        )
        out.append(Structure(label, smiles, note, " ".join(roles)))
    return tuple(out)


class P2SAdapter(FamilyAdapter):
    """Adapter for run folders scored by ``chemgauge p2s run`` / ``p2s score --out``."""

    family = "p2s"
    reproducibility_excludes = ()

    def item_key(self, row: Row) -> str:
        return item_key(row)

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        present = {str(r["condition"]) for r in run.rows}
        return tuple(_HIT_METRICS[c] for c in CONDITIONS if c in present)

    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        # Only its own view's metric: a row takes no part in another view's comparison.
        return {_HIT_METRICS[row["condition"]]: row["status"] == "hit"}

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        return {"property": str(row["property"])}

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        # The hash of every view's task and label files: same data folder, same views.
        return {"data_sha256": (run.metrics.get("data") or {}).get("sha256")}

    def _metrics(self, run: Run) -> dict[str, Any]:
        return aggregate(run.rows, _claim_config(run))

    def recompute(self, run: Run) -> Recomputed:
        return Recomputed(
            self._metrics(run),
            notes=("config.claim (alpha, confidence, seed, resamples) is carried from the report",),
        )

    def cross_checks(self, run: Run) -> list[Mismatch]:
        data, made = run.metrics.get("data") or {}, run.metrics.get("predictions") or {}
        views = data.get("views") or {}
        recorded = {i.role: i.sha256 for i in run.envelope.inputs}
        found = agree("metrics.data.sha256", data.get("sha256"), sha256_json(views))
        for name, view in views.items():
            for kind in ("tasks", "labels"):
                found += agree(
                    f"metrics.data.views.{name}.{kind}_sha256",
                    view.get(f"{kind}_sha256"),
                    recorded.get(f"{kind}:{name}"),
                )
        for name, block in made.items():
            found += agree(
                f"metrics.predictions.{name}.sha256",
                block.get("sha256"),
                recorded.get(f"predictions:{name}"),
            )
        model = run.metrics.get("model")
        found += agree("config.model", run.config.get("model"), model)
        found += agree(
            "provenance.backends.model", run.envelope.provenance.backends.get("model"), model
        )
        return found

    def headline(self, run: Run) -> list[Rate]:
        out = []
        for directory, block in self._metrics(run)["properties"].items():
            for condition, view in block["views"].items():
                label = f"{directory}: {_VIEW_TITLES[condition]}"
                out.append(Rate.of(label, view["accuracy"]))
        return out

    def _accuracy_section(self, run: Run, metrics: Mapping[str, Any]) -> Section:
        body = []
        series: dict[str, list[tuple[str, Rate]]] = {}
        for directory, block in metrics["properties"].items():
            for condition, view in block["views"].items():
                rate = Rate.of(condition, view["accuracy"])
                series.setdefault(_VIEW_TITLES[condition], []).append((directory, rate))
                statuses = view["statuses"]
                body.append(
                    (
                        directory,
                        condition,
                        str(rate.n),
                        f"{fmt_rate(rate)} ({fmt_count(rate)})",
                        fmt_pct(view["chance"]),
                        *(str(statuses[s]) for s in STATUSES[1:]),
                    )
                )
        return Section(
            title="Accuracy per property and view",
            intro=(
                f"{metrics['rows']} answered tasks. 'correct' gives the source molecule's own "
                "property, 'shuffled' another molecule's (same candidates, same answer), "
                "'counterfactual' the property of another candidate, whose index is then the "
                "answer (the donor). Missing, invalid and out-of-range answers count as wrong."
            ),
            tables=(
                Table(
                    "Accuracy (95% Wilson intervals)",
                    ("property", "view", "tasks", "accuracy", "chance", *STATUSES[1:]),
                    tuple(body),
                    caption="Chance is the mean of 1/K over the view's tasks.",
                ),
            ),
            plots=(RatePlot("Accuracy per property and view (95% Wilson)", "property", series),),
            anchor="accuracy",
        )

    def _claim_section(self, run: Run, metrics: Mapping[str, Any]) -> Section | None:
        claims = {d: b["claim"] for d, b in metrics["properties"].items() if b["claim"]}
        if not claims:
            return None
        config = _claim_config(run)
        drops, flips = [], []
        accuracy: dict[str, list[tuple[str, Rate]]] = {"own property": [], "shuffled": []}
        donor: dict[str, list[tuple[str, Rate]]] = {
            "given the donor's property": [],
            "given its own property": [],
        }
        for directory, claim in claims.items():
            chance = metrics["properties"][directory]["views"]["correct"]["chance"]
            own = Rate.of("own", claim["accuracy"]["correct"])
            shuffled = Rate.of("shuffled", claim["accuracy"]["shuffled"])
            accuracy["own property"].append((directory, own))
            accuracy["shuffled"].append((directory, shuffled))
            drop = claim["shuffle_drop"]
            drops.append(
                (
                    directory,
                    fmt_pct(chance),
                    fmt_rate(own),
                    fmt_rate(shuffled),
                    _difference(drop["difference"]),
                    fmt_p(drop["mcnemar"]["p_value"]),
                    "holds" if drop["holds"] else "no",
                )
            )
            flip = claim["counterfactual_flip"]
            flip_rate = Rate.of("flip", flip["flip_rate"])
            base = Rate.of("base", flip["donor_pick_rate_under_correct"])
            donor["given the donor's property"].append((directory, flip_rate))
            donor["given its own property"].append((directory, base))
            flips.append(
                (
                    directory,
                    f"{fmt_rate(flip_rate)} ({fmt_count(flip_rate)})",
                    f"{fmt_rate(base)} ({fmt_count(base)})",
                    _difference(flip["difference"]),
                    fmt_p(flip["mcnemar"]["p_value"]),
                    "holds" if flip["holds"] else "no",
                    "YES" if claim["use_claim"] else "no",
                )
            )
        return Section(
            title="Use claim",
            intro=(
                "Does the supplied property change the choice in the direction the evidence "
                "implies? The shuffle drop pairs each record with and without its own property; "
                "the counterfactual flip pairs each counterfactual with its base record given "
                "its own property, asking how often the donor is picked. Each holds when the "
                f"difference is positive and exact McNemar p < {config.alpha}; the use claim "
                "is made only when both hold. Differences carry a seeded paired bootstrap "
                f"{100 * config.confidence:.0f}% interval (seed {config.seed}, "
                f"{config.resamples} resamples)."
            ),
            tables=(
                Table(
                    "Shuffle drop",
                    ("property", "chance", "own property", "shuffled", "drop [CI]", "p", "holds"),
                    tuple(drops),
                ),
                Table(
                    "Counterfactual flip",
                    (
                        "property",
                        "picks donor (counterfactual)",
                        "picks donor (own property)",
                        "difference [CI]",
                        "p",
                        "holds",
                        "use claim",
                    ),
                    tuple(flips),
                ),
            ),
            plots=(
                RatePlot("Accuracy with its own vs a shuffled property", "property", accuracy),
                RatePlot("How often the donor candidate is picked", "property", donor),
            ),
            anchor="claim",
        )

    def _answers_section(self, run: Run) -> Section:
        counts = {s: sum(1 for r in run.rows if r["status"] == s) for s in STATUSES}
        return Section(
            title="Answers",
            intro=(
                "Which candidate positions the system picks (candidates are ordered by a "
                "seeded hash, so a strong position preference is a bias, not chemistry) and "
                "how many candidates each task offers."
            ),
            tables=(
                Table(
                    "Statuses (all views)",
                    ("status", "tasks"),
                    tuple((s, str(n)) for s, n in counts.items()),
                ),
            ),
            plots=(
                Distribution(
                    "Chosen candidate index",
                    "index",
                    tuple(float(r["selected"]) for r in run.rows if r["selected"] is not None),
                ),
                Distribution(
                    "Candidates per task",
                    "candidates",
                    tuple(float(len(r["candidates"])) for r in run.rows),
                ),
            ),
            anchor="answers",
        )

    def _failure_section(
        self, run: Run, condition: str, max_failures: int, title: str, intro: str, anchor: str
    ) -> Section:
        wrong = [r for r in run.rows if r["condition"] == condition and r["status"] != "hit"]
        cases = []
        for row in wrong[:max_failures]:
            details = [
                ("property", str(row["property"])),
                ("evidence", _property_text(row["properties"])),
                ("chosen", _chosen_text(row)),
                ("true" if condition == "correct" else "donor", str(row["label"])),
            ]
            if condition == "counterfactual":
                details.append(("base record", str(row["base_record_id"])))
            cases.append(
                FailureCase(
                    item=item_key(row),
                    title=str(row["masked_smiles"]),
                    details=tuple(details),
                    structures=_candidate_structures(row),
                )
            )
        return Section(
            title=title,
            intro=intro,
            failures=tuple(cases),
            failures_total=len(wrong),
            anchor=anchor,
        )

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        metrics = self._metrics(run)
        parts = [self._accuracy_section(run, metrics)]
        claim = self._claim_section(run, metrics)
        if claim is not None:
            parts.append(claim)
        parts.append(self._answers_section(run))
        parts.append(
            self._failure_section(
                run,
                "correct",
                max_failures,
                "Wrong with its own property",
                "Tasks answered wrong although the property shown was the source molecule's "
                "own: the masked scaffold, then every candidate; a solid green frame marks the "
                "true completion, a dashed orange one the chosen completion.",
                "failures",
            )
        )
        parts.append(
            self._failure_section(
                run,
                "counterfactual",
                max_failures,
                "Counterfactuals not followed",
                "Tasks whose property came from another candidate (the donor, framed in solid "
                "green) where the system did not pick it; its choice has the dashed orange frame.",
                "counterfactual-failures",
            )
        )
        return parts

    def board_metric(self, run: Run) -> str:
        metrics = self.hit_metrics(run)
        own = _HIT_METRICS["correct"]
        return own if own in metrics else (metrics[0] if metrics else "")

    def hit_description(self, run: Run, name: str) -> str:
        view = _VIEW_OF_METRIC.get(name)
        return f"the expected completion chosen, over the tasks of the {view} view" if view else ""

    def system_name(self, run: Run) -> str:
        return system_text(run.metrics.get("model") or run.config.get("model")) or run.label

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        return (("chosen", _chosen_text(row)), ("true", str(row["label"])))

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        candidates: Sequence[str] = row["candidates"]
        selected = row["selected"]
        chosen = (
            candidates[selected]
            if isinstance(selected, int) and 0 <= selected < len(candidates)
            else None
        )
        return (
            Structure(f"true (candidate {row['label']})", candidates[row["label"]], mark="true"),
            Structure(f"chosen ({_chosen_text(row)})", chosen, mark="chosen"),
        )


def _difference(block: Mapping[str, Any]) -> str:
    """``+78.3 pp [+60.9 pp, +91.3 pp]`` from an Estimate."""
    low, high = block["interval"]
    return f"{fmt_signed_pct(block['value'])} [{fmt_signed_pct(low)}, {fmt_signed_pct(high)}]"
