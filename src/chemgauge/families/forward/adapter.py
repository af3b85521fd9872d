"""Report adapter for ``forward``: is the true product in the candidate pool, and at what rank?

Hit metrics are the protocol's end-to-end ones (over valid inputs; a coverage miss is a miss)
plus coverage and the stereo-ignored top-10 outcome; invalid inputs take part in none. Items
are keyed by their corpus line, which two runs on the same corpus (same hash) share.

When any row is in-sample (an applied template names it, or a near-duplicate of it, as a
source, in every template mode: the rows' ``in_sample`` marks), the headline, the ranking
section and the split table lead with the held-out rows (val and test rows not in-sample),
and every overall figure says it includes in-sample rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemgauge.families.forward.adapter_checks import forward_cross_checks
from chemgauge.families.forward.aggregate import (
    BREAKDOWN_DIMENSIONS,
    HELD_OUT_SPLITS,
    Bootstrap,
    aggregate,
    breakdowns,
    by_split,
    held_out,
)
from chemgauge.families.forward.leakage import audit_rows
from chemgauge.families.forward.provenance import ROW_HASH_EXCLUDES
from chemgauge.families.forward.summary import headline_of_rows
from chemgauge.report.adapter import (
    Distribution,
    FailureCase,
    FamilyAdapter,
    Mismatch,
    Rate,
    RatePlot,
    Recomputed,
    ScoreMetric,
    Section,
    Structure,
    Table,
)
from chemgauge.report.buckets import ordered_buckets
from chemgauge.report.formatting import fmt_count, fmt_rate
from chemgauge.report.runs import Run

__all__ = ["ForwardAdapter"]

Row = Mapping[str, Any]
_KS = (1, 5, 10)
# Properties of the reaction itself (not of a system's answer), so compare can bucket by them.
_ITEM_DIMENSIONS = (
    "reaction_class",
    "num_reactants",
    "accepted_product_arity",
    "stereochemistry_presence",
)
_TABLE_DIMENSIONS = (*_ITEM_DIMENSIONS, "candidate_pool_size", "failure_reason")


def _fmt(block: Mapping[str, Any]) -> str:
    rate = Rate.of("", block)
    return f"{fmt_rate(rate)} ({fmt_count(rate)})"


def _with_interval(estimate: Mapping[str, Any]) -> str:
    """An estimate as ``0.741 [0.643, 0.838]`` (``n/a`` over no items)."""
    value, (low, high) = estimate["value"], estimate["interval"]
    if value is None:
        return "n/a"
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _in_sample(rows: Sequence[Row]) -> bool:
    """True when any row is in-sample (an applied template's source, or a near-duplicate)."""
    return any(row.get("in_sample") for row in rows)


def _held_out_row(row: Row) -> bool:
    return row["split"] in HELD_OUT_SPLITS and not row.get("in_sample")


def bootstrap_of(metrics: Mapping[str, Any]) -> Bootstrap:
    """The bootstrap a report recorded beside its metrics (its seed, size and confidence)."""
    block = metrics["bootstrap"]
    return Bootstrap(
        seed=int(block["seed"]),
        resamples=int(block["resamples"]),
        confidence=float(block["confidence"]),
    )


def _products(row: Row) -> str | None:
    accepted = row.get("accepted_products_canonical") or []
    return ".".join(accepted[0]) if accepted else None


class ForwardAdapter(FamilyAdapter):
    """Adapter for reports written by ``chemgauge forward benchmark``."""

    family = "forward"
    reproducibility_excludes = ROW_HASH_EXCLUDES

    def item_key(self, row: Row) -> str:
        return str(row["source_line"])

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        return ("covered", "top1", "top5", "top10", "top10_stereo_ignored")

    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        if row["input_status"] != "valid":
            return dict.fromkeys(self.hit_metrics(run))
        best = row["best_correct_rank"]
        out: dict[str, bool | None] = {"covered": row["proposal_status"] == "covered"}
        for k in _KS:
            out[f"top{k}"] = best is not None and best < k
        out["top10_stereo_ignored"] = row["stereochemistry_ignored_outcome"] == "hit"
        return out

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        out = {name: BREAKDOWN_DIMENSIONS[name](row) for name in _ITEM_DIMENSIONS}
        out["split"] = str(row["split"])
        return out

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        config = run.config
        corpus = next((i for i in run.envelope.inputs if i.role == "corpus"), None)
        return {
            "corpus_sha256": None if corpus is None else corpus.sha256,
            "split_protocol_version": config.get("split_protocol_version"),
            "train_max_bucket": config.get("train_max_bucket"),
            "val_max_bucket": config.get("val_max_bucket"),
        }

    def recompute(self, run: Run) -> Recomputed:
        notes = ["diagnostics need the corpus and are not recomputed"]
        bootstrap = bootstrap_of(run.metrics)
        return Recomputed(
            {
                "headline": headline_of_rows(run.rows),
                "held_out": held_out(run.rows, bootstrap),
                "overall": aggregate(run.rows, bootstrap),
                "by_split": by_split(run.rows, bootstrap),
                "leakage": audit_rows(run.rows),
                "breakdowns": breakdowns(run.rows, bootstrap),
            },
            notes=tuple(notes),
        )

    def cross_checks(self, run: Run) -> list[Mismatch]:
        return forward_cross_checks(run)

    def headline(self, run: Run) -> list[Rate]:
        overall = aggregate(run.rows)
        e2e = overall["end_to_end"]
        if not _in_sample(run.rows):
            return [
                *(Rate.of(f"top-{k} (end to end)", e2e[f"top{k}_hit_rate"]) for k in _KS),
                Rate.of("true product in pool", overall["proposal_coverage"]),
                Rate.of("valid inputs", overall["valid_input_rate"]),
            ]
        held = held_out(run.rows)
        where = "held out: val + test"
        splits = "/".join(headline_of_rows(run.rows)["in_sample_splits"])
        return [
            *(Rate.of(f"top-{k} ({where})", held["end_to_end"][f"top{k}_hit_rate"]) for k in _KS),
            Rate.of(f"true product in pool ({where})", held["proposal_coverage"]),
            Rate.of(f"top-1 (overall, includes in-sample {splits} rows)", e2e["top1_hit_rate"]),
            Rate.of(
                f"in pool (overall, includes in-sample {splits} rows)",
                overall["proposal_coverage"],
            ),
            Rate.of("valid inputs", overall["valid_input_rate"]),
        ]

    def _ranking_section(self, run: Run) -> Section:
        in_sample = _in_sample(run.rows)
        rows = [r for r in run.rows if _held_out_row(r)] if in_sample else run.rows
        overall = aggregate(rows, bootstrap_of(run.metrics))
        table_rows = []
        for name in ("end_to_end", "conditional"):
            block = overall[name]
            table_rows.append(
                (
                    name.replace("_", " "),
                    str(block["n"]),
                    *(_fmt(block[f"top{k}_hit_rate"]) for k in _KS),
                    _with_interval(block["mrr"]),
                    _with_interval(block["ndcg_at_10"]),
                )
            )
        hit_at_k = RatePlot(
            title="Hit rate at k (95% Wilson intervals)",
            xlabel="k",
            kind="line",
            series={
                name.replace("_", " "): [
                    (str(k), Rate.of(str(k), overall[name][f"top{k}_hit_rate"])) for k in _KS
                ]
                for name in ("end_to_end", "conditional")
            },
        )
        covered = [r for r in rows if r["proposal_status"] == "covered"]
        ranks = Distribution(
            "Rank of the first correct candidate (covered reactions)",
            "rank (1 = top)",
            tuple(float(r["best_correct_rank"] + 1) for r in covered),
        )
        pooled = [
            r for r in rows if r["input_status"] == "valid" and r["proposal_status"] != "error"
        ]
        pools = Distribution(
            "Candidate pool size", "candidates", tuple(float(r["candidate_count"]) for r in pooled)
        )
        timed = [float(r["elapsed_ms"]) for r in rows if r.get("elapsed_ms") is not None]
        latency = Distribution(
            "Prediction latency", "ms per reaction", tuple(timed), integer=False, log_x=True
        )
        stereo = overall["stereo"]
        scope = (
            "Held-out rows only (val + test rows not in-sample): rows an applied template names "
            "as a source, or near-duplicates of them, are in-sample and left out here. "
            if in_sample
            else ""
        )
        return Section(
            title="Ranking (held out: val + test)" if in_sample else "Ranking",
            intro=(
                scope
                + f"{overall['n_rows']} rows, {overall['n_valid']} valid, {overall['n_covered']} "
                "with the true product in the pool. End to end counts every valid reaction "
                "(a miss of the pool is a miss); conditional counts only covered ones. "
                f"Stereo-ignored top-10: {_fmt(stereo['stereochemistry_ignored_top10_rate'])}; "
                f"stereo-only hits: {stereo['stereo_only_hits']}."
            ),
            tables=(
                Table(
                    "Top-k, MRR and nDCG@10",
                    (
                        "denominator",
                        "n",
                        "top-1",
                        "top-5",
                        "top-10",
                        "MRR [95% CI]",
                        "nDCG@10 [95% CI]",
                    ),
                    tuple(table_rows),
                    caption="Rates: 95% Wilson intervals; MRR and nDCG@10: seeded percentile "
                    "bootstrap intervals (seed in the report's metrics.bootstrap).",
                ),
            ),
            plots=(hit_at_k, ranks, pools, latency),
            anchor="ranking",
        )

    def _split_section(self, report_rows: Sequence[Row]) -> Section:
        splits = by_split(report_rows)
        if _in_sample(report_rows):
            groups = [
                ("held out (val + test)", held_out(report_rows)),
                *((split, splits[split]) for split in HELD_OUT_SPLITS),
                ("train (in-sample)", splits["train"]),
                ("overall (includes in-sample train rows)", aggregate(report_rows)),
            ]
        else:
            groups = list(splits.items())
        body = tuple(
            (
                split,
                str(block["n_valid"]),
                _fmt(block["proposal_coverage"]),
                *(_fmt(block["end_to_end"][f"top{k}_hit_rate"]) for k in _KS),
            )
            for split, block in groups
        )
        tables = [
            Table(
                "End-to-end top-k per split",
                ("split", "valid", "in pool", "top-1", "top-5", "top-10"),
                body,
            )
        ]
        plots = []
        all_breakdowns = breakdowns(report_rows)
        for dim in _TABLE_DIMENSIONS:
            found = all_breakdowns.get(dim, {})
            # Numeric buckets by value; a bucket with no valid reaction has no rate to show.
            buckets = {b: found[b] for b in ordered_buckets(found) if found[b]["n_valid"] > 0}
            tables.append(
                Table(
                    dim,
                    ("bucket", "valid", "in pool", "top-1", "top-10"),
                    tuple(
                        (
                            bucket,
                            str(block["n_valid"]),
                            _fmt(block["proposal_coverage"]),
                            _fmt(block["end_to_end"]["top1_hit_rate"]),
                            _fmt(block["end_to_end"]["top10_hit_rate"]),
                        )
                        for bucket, block in buckets.items()
                    ),
                )
            )
            if dim in _ITEM_DIMENSIONS and 1 < len(buckets) <= 12:
                plots.append(
                    RatePlot(
                        title=f"End-to-end top-1 and top-10 by {dim}",
                        xlabel=dim,
                        series={
                            f"top-{k}": [
                                (b, Rate.of(b, block["end_to_end"][f"top{k}_hit_rate"]))
                                for b, block in buckets.items()
                            ]
                            for k in (1, 10)
                        },
                    )
                )
        return Section(
            title="Splits and breakdowns",
            intro=(
                "Invalid inputs belong to no split. Breakdown buckets: numbers in numeric order, "
                "buckets without a valid reaction left out."
            ),
            tables=tuple(tables),
            plots=tuple(plots),
            anchor="breakdowns",
        )

    def _failure_section(self, rows: Sequence[Row], max_failures: int) -> Section:
        wrong = [
            r
            for r in rows
            if r["input_status"] == "valid" and r["top_candidates"] and r["best_correct_rank"] != 0
        ]
        errors = sum(r["proposal_status"] == "error" for r in rows)
        cases = tuple(
            FailureCase(
                item=f"line {r['source_line']}",
                title=str(r["reaction_id"] or f"line {r['source_line']}"),
                details=(
                    ("outcome", str(r["failure_reason"])),
                    ("reactants", ".".join(r["reactants_canonical"])),
                    ("expected", _products(r) or ""),
                    ("top-1", r["top_candidates"][0]),
                    ("pool size", str(r["candidate_count"])),
                ),
                structures=(
                    Structure("expected product", _products(r)),
                    Structure("best wrong candidate (top-1)", r["top_candidates"][0]),
                ),
            )
            for r in wrong[:max_failures]
        )
        return Section(
            title="Wrong top-1 answers",
            intro=(
                "Valid reactions whose top-ranked candidate is not the expected product: the "
                "expected product beside the best-ranked wrong candidate. Reactions with an "
                f"empty pool have nothing to draw; prediction errors: {errors}."
            ),
            failures=cases,
            failures_total=len(wrong),
            anchor="failures",
        )

    def _leakage_section(self, rows: Sequence[Row]) -> Section:
        audit = audit_rows(rows)
        tables = []
        near = audit["near_duplicates"]
        kinds = (
            (audit["reactant_sets"], "Reactant sets"),
            (audit["products"], "Products"),
            (near["reactant_sets"], "Near-duplicate reactant sets"),
            (near["products"], "Near-duplicate products"),
        )
        for block, label in kinds:
            tables.append(
                Table(
                    f"{label} in more than one split ({block['shared_across_splits']} of "
                    f"{block['distinct']} distinct)",
                    ("splits", "shared", "reactions, explicit group_key", "reactions, fallback"),
                    tuple(
                        (
                            pair,
                            str(c["shared"]),
                            str(c["reactions"]["explicit"]),
                            str(c["reactions"]["fallback"]),
                        )
                        for pair, c in block["by_split_pair"].items()
                    ),
                )
            )
            if block["examples"]:
                tables.append(
                    Table(
                        f"{label}: the first shared ones"
                        + (" (more not listed)" if block["examples_truncated"] else ""),
                        ("SMILES", "where (corpus lines)"),
                        tuple(
                            (
                                e["smiles"],
                                "; ".join(
                                    f"{split}: "
                                    + ", ".join(
                                        f"{x['line']} ({x['group_key_source']})" for x in entries
                                    )
                                    for split, entries in e["splits"].items()
                                ),
                            )
                            for e in block["examples"]
                        ),
                    )
                )
        warnings = " ".join(f"Warning: {w}." for w in audit["warnings"])
        return Section(
            title="Leakage audit",
            intro=(
                "Reactant sets (sorted canonical reactants) and accepted product multisets "
                "found in more than one split, per pair of splits, with the reactions involved "
                "by the source of their group key. The reactant-hash fallback keeps identical "
                "reactants in one split; only an explicit group_key can separate them. "
                "Near-duplicates are the same comparisons once spectators are removed and "
                f"stereo is ignored ({near['spectators']['rule']}), counted only where the exact "
                "keys differ. " + (warnings or "No reactant set occurs in two splits.")
            ),
            tables=tuple(tables),
            anchor="leakage",
        )

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        return [
            self._ranking_section(run),
            self._split_section(run.rows),
            self._leakage_section(run.rows),
            self._failure_section(run.rows, max_failures),
        ]

    def board_metric(self, run: Run) -> str:
        return "top1"

    def hit_description(self, run: Run, name: str) -> str:
        if name == "covered":
            return "the true product in the candidate pool, over valid inputs"
        if name == "top10_stereo_ignored":
            return "the true product in the top 10 with stereo ignored, over valid inputs"
        k = name.removeprefix("top")
        return f"the true product in the top {k}, over valid inputs (a pool miss is a miss)"

    def score_metrics(self, run: Run) -> tuple[ScoreMetric, ...]:
        return (
            ScoreMetric("mrr", "mean", "mean reciprocal rank over valid inputs; a miss scores 0"),
            ScoreMetric("ndcg_at_10", "mean", "multi-positive nDCG@10 over valid inputs"),
        )

    def scores(self, row: Row, run: Run) -> Mapping[str, tuple[float, float] | None]:
        if row["input_status"] != "valid":
            return {"mrr": None, "ndcg_at_10": None}
        best = row["best_correct_rank"]
        return {
            "mrr": (0.0 if best is None else 1 / (best + 1), 1.0),
            "ndcg_at_10": (float(row["ndcg_at_10"]), 1.0),
        }

    def system_name(self, run: Run) -> str:
        backend = run.envelope.provenance.backends.get("forward_predictor") or {}
        source = backend.get("template_source") or run.config.get("template_source")
        if source == "outside":  # an outside system: its name (and file), its headline
            outside = run.envelope.provenance.model_dump().get("outside_system") or {}
            named = outside.get("file") or " ".join(outside.get("argv") or ())
            text = str(backend.get("name") or "outside system")
            headline = run.config.get("convention")
            text = f"{text} ({named})" if named else text
            return f"{text}, {headline}" if headline else text
        files = [Path(i.path).name for i in run.envelope.inputs if i.role == "templates"]
        text = f"template predictor, {source or 'unknown'} rules"
        return f"{text} ({', '.join(files)})" if files else text

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        best = row["best_correct_rank"]
        return (
            ("outcome", str(row["failure_reason"])),
            ("first correct rank", "none" if best is None else str(best + 1)),
        )

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        top = row["top_candidates"][0] if row["top_candidates"] else None
        return (Structure("expected product", _products(row)), Structure("top-1", top))
