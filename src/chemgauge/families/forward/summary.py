"""The forward report's metric content, folded from rows as they stream past (never held).

One :class:`RowSummary` takes every final row once and gives the report's metric sections:
which rows lead (``headline``), ``held_out`` (val + test), ``overall``, ``by_split``, the
leakage audit, ``breakdowns`` and the report-wide ``diagnostics``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.families.forward.aggregate import HELD_OUT_SPLITS, SPLITS, Bootstrap, RowFacts
from chemgauge.families.forward.corpus import CorpusLoadStats
from chemgauge.families.forward.leakage import LeakageAudit
from chemgauge.families.forward.report import status_tally

__all__ = ["RowSummary", "Totals", "headline_basis", "headline_of_rows"]


def headline_basis(counts: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Which rows lead the report, from the rows' in-sample marks (``counts`` as
    :meth:`RowFacts.in_sample_counts` gives them), whatever the template mode: when any row is
    in-sample, the val and test rows that are not lead and ``overall`` says it includes
    in-sample rows; in-sample val or test rows are warned of."""
    by_split = dict(counts["by_split"])
    in_sample = [split for split in SPLITS if by_split.get(split)]
    held = sum(by_split.get(split, 0) for split in HELD_OUT_SPLITS)
    warnings = []
    if held:
        reasons = counts["held_out_by_reason"]
        warnings.append(
            f"{held} val/test row(s) are in-sample ("
            + ", ".join(f"{split} {by_split[split]}" for split in HELD_OUT_SPLITS)
            + f"): an applied template names {reasons['template_source']} of them as its "
            f"source, and a near-duplicate of {reasons['near_duplicate_of_source']}; they are "
            "left out of the held-out figures"
        )
    return {
        "basis": "held_out" if in_sample else "overall",
        "held_out_splits": list(HELD_OUT_SPLITS),
        "in_sample_splits": in_sample,
        "overall_includes_in_sample_rows": bool(in_sample),
        "in_sample_rows": {split: by_split.get(split, 0) for split in SPLITS},
        "in_sample_by_reason": dict(counts["by_reason"]),
        "warnings": warnings,
    }


def headline_of_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`headline_basis` of a sequence of rows."""
    return headline_basis(RowFacts.of(rows, dimensions=False).in_sample_counts())


@dataclass
class Totals:
    """Report-wide row sums."""

    rows: int = 0
    engine_ms: float = 0.0
    application_errors: int = 0
    application_warnings: int = 0
    graph_rules_skipped: int = 0
    templates_attempted: int = 0
    templates_matched: int = 0
    invalid_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row in."""
        self.rows += 1
        self.engine_ms += float(row["elapsed_ms"] or 0.0)
        self.application_errors += row["application_error_count"]
        self.application_warnings += row["application_warning_count"]
        self.graph_rules_skipped += row["graph_rules_skipped"]
        self.templates_attempted += row["templates_attempted"]
        self.templates_matched += row["templates_matched"]
        if row["input_status"] == "invalid":
            self.invalid_reasons[row["input_invalid_reason"]] += 1


class RowSummary:
    """Row facts, totals, the envelope's status counts and the leakage audit of one pass over
    the final rows."""

    def __init__(self, bootstrap: Bootstrap) -> None:
        self.facts = RowFacts(bootstrap=bootstrap)
        self.totals = Totals()
        self.counts = status_tally()
        self.audit = LeakageAudit()

    def close(self) -> None:
        """Release the audit's temporary database."""
        self.audit.close()

    def folded(self, rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Pass rows through, folding each one in."""
        for row in rows:
            self.facts.add(row)
            self.totals.add(row)
            self.counts.add(row)
            self.audit.add_row(row)
            yield row

    def metrics(self, stats: CorpusLoadStats) -> dict[str, Any]:
        """The report's metric sections, in reading order."""
        overall = self.facts.aggregate()
        return {
            "headline": headline_basis(self.facts.in_sample_counts()),
            "held_out": self.facts.held_out(),
            "overall": overall,
            "by_split": self.facts.by_split(),
            "leakage": self.audit.result(),
            "breakdowns": self.facts.breakdowns(),
            "diagnostics": self.diagnostics(overall, stats),
        }

    def diagnostics(self, overall: Mapping[str, Any], stats: CorpusLoadStats) -> dict[str, Any]:
        """Report-wide totals, each transcribed from an already computed source."""
        totals = self.totals
        return {
            # corpus_stats counters (exact; the warnings list itself is bounded)
            "warning_counts_by_code": {k: v for k, v in stats.counters().items() if v},
            # row-wise sums of the identically named row fields
            "template_application_errors": totals.application_errors,
            "template_application_warnings": totals.application_warnings,
            "graph_rules_skipped": totals.graph_rules_skipped,
            "templates_attempted": totals.templates_attempted,
            "templates_matched": totals.templates_matched,
            # overall aggregate (the numerators of invalid_product_rate / no_op_rate)
            "invalid_outcomes_rejected": overall["invalid_outcomes_rejected"],
            "no_op_outcomes_rejected": overall["no_op_outcomes_rejected"],
            "raw_outcomes": overall["n_raw_outcomes"],
            "prediction_errors": overall["prediction_errors"],
            "capped_unknown": overall["capped_unknown"],
            "input_invalid_by_reason": dict(sorted(totals.invalid_reasons.items())),
            # the whole rule set loads or the run stops: no partial parse rejections exist
            "template_parse_rejections_by_reason": {},
        }
