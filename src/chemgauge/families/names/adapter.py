"""Report adapter for ``names``: structure -> name -> OPSIN -> structure round trips.

Hit metrics are per-lens round-trip validity over all structures (the ``abs_rt_valid``
numerator) and ``emitted`` (coverage). Breakdowns are properties of the input structure only,
so two runs on the same corpus bucket every item the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemgauge.chem import try_parse_smiles
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.names.metrics import (
    LENSES,
    OWN_LENSES,
    REFERENCE_LENSES,
    RowClass,
    RowResult,
    aggregate,
    completeness,
)
from chemgauge.families.names.runner import listings_of
from chemgauge.report.adapter import (
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
    agree,
)
from chemgauge.report.buckets import ordered_buckets
from chemgauge.report.formatting import fmt_count, fmt_rate
from chemgauge.report.runs import Run

__all__ = ["NamesAdapter"]

Row = Mapping[str, Any]
_RATES = (
    "coverage",
    "of_emitted_rt",
    "abs_rt_valid",
    "confidently_wrong",
    "unparseable",
    "opsin_error",
)
_RATE_TITLES = {
    "coverage": "coverage (named / all)",
    "of_emitted_rt": "round-trip valid / named",
    "abs_rt_valid": "round-trip valid / all",
    "confidently_wrong": "confidently wrong / all",
    "unparseable": "unparseable / all",
    "opsin_error": "OPSIN error / all",
}


_OURS = OWN_LENSES
# Hit metric name -> the lens it judges by (names built from the lenses, never parsed).
_RT_VALID = {f"rt_valid[{lens}]": lens for lens in LENSES}


def _lenses_of(run: Run) -> tuple[str, ...]:
    """The lenses the run computed, in report order (its config records them: the reference
    lenses only with ``--reference-lenses``)."""
    computed = (run.config.get("coverage") or {}).get("lenses") or {}
    return tuple(lens for lens in LENSES if lens in computed) or OWN_LENSES


@functools.lru_cache(maxsize=65536)
def _structure_buckets(smiles: str) -> tuple[tuple[str, str], ...]:
    mol = try_parse_smiles(smiles)
    if mol is None:
        return (
            ("heavy_atoms", "<unparsable>"),
            ("stereo", "<unparsable>"),
            ("charged", "<unparsable>"),
        )
    heavy = mol.GetNumHeavyAtoms()
    size = next(
        (label for high, label in ((10, "1-10"), (20, "11-20"), (40, "21-40")) if heavy <= high),
        "41+",
    )
    stereo = any(str(a.GetChiralTag()) != "CHI_UNSPECIFIED" for a in mol.GetAtoms()) or any(
        str(b.GetStereo()) != "STEREONONE" for b in mol.GetBonds()
    )
    charged = any(a.GetFormalCharge() != 0 for a in mol.GetAtoms())
    return (
        ("heavy_atoms", size),
        ("stereo", "stereo" if stereo else "no_stereo"),
        ("charged", "formal_charges" if charged else "neutral"),
    )


def _cell(rate: Rate) -> str:
    """A rate and its count, as a table cell: ``66.7% [30.0, 90.3] (4/6)``."""
    return f"{fmt_rate(rate)} ({fmt_count(rate)})"


class NamesAdapter(FamilyAdapter):
    """Adapter for reports written by ``chemgauge names coverage``."""

    family = "names"
    reproducibility_excludes = ()

    def item_key(self, row: Row) -> str:
        return str(row["id"])

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        return ("emitted", *(f"rt_valid[{lens}]" for lens in _lenses_of(run)))

    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        # Every row is in every denominator: an OPSIN error is emitted and never valid.
        out: dict[str, bool | None] = {"emitted": bool(row["emitted"])}
        for lens in _lenses_of(run):
            out[f"rt_valid[{lens}]"] = row[lens] == RowClass.RT_VALID
        return out

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        return dict(_structure_buckets(str(row["smiles"])))

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        # A pairs file holds the names too, so its hash differs between namers on the same
        # structures: the items are the (id, input structure) pairs, hashed from the rows.
        items = sorted((str(r["id"]), str(r["smiles"])) for r in run.rows)
        return {"corpus_sha256": sha256_json(items)}

    def _metrics(self, run: Run) -> dict[str, Any]:
        pin = run.metrics["pin_pct"]  # config, carried verbatim
        lenses = _lenses_of(run)
        rows = (RowResult.from_row(r, lenses) for r in run.rows)
        tally = aggregate(rows, pin_pct=pin, lenses=lenses)
        limit = (run.config.get("coverage") or {}).get("max_opsin_errors", 0.0)
        return {**tally, **completeness(tally["opsin_error"], tally["emitted"], limit)}

    def recompute(self, run: Run) -> Recomputed:
        return Recomputed(
            {**self._metrics(run), **listings_of(run.rows, _lenses_of(run))},
            notes=("metrics.pin_pct is configuration and is carried from the report",),
        )

    def cross_checks(self, run: Run) -> list[Mismatch]:
        coverage = run.config.get("coverage") or {}  # missing: every check below disagrees
        found = agree("metrics.pin_pct", run.metrics["pin_pct"], coverage.get("pin_pct"))
        matchers = {k: v["matcher"] for k, v in run.metrics["lenses"].items()}
        lenses = coverage.get("lenses") or {}
        found += agree("metrics.lenses.*.matcher", matchers, {k: lenses.get(k) for k in matchers})
        if not run.metrics.get("complete", False):
            found.append(
                Mismatch(
                    "run complete (OPSIN failed on a share of the names over "
                    "--max-opsin-errors: the run is incomplete)",
                    False,
                    True,
                )
            )
        found += agree(
            "metrics.input_stats.rejections_by_reason",
            run.metrics["input_stats"]["rejections_by_reason"],
            run.envelope.counts.rejected_by_reason,
        )
        return found

    def headline(self, run: Run) -> list[Rate]:
        lenses = self._metrics(run)["lenses"]
        out = [Rate.of("coverage", lenses["parity"]["coverage"])]
        out += [
            Rate.of(f"round-trip valid ({lens})", block["abs_rt_valid"])
            for lens, block in lenses.items()
        ]
        out.append(Rate.of("confidently wrong (exact)", lenses["exact"]["confidently_wrong"]))
        return out

    def _lens_section(self, metrics: Mapping[str, Any]) -> Section:
        lenses: Mapping[str, Any] = metrics["lenses"]

        def rate_table(title: str, names: Sequence[str]) -> Table:
            header = ("rate", *(f"{lens} ({lenses[lens]['matcher']})" for lens in names))
            body = tuple(
                (_RATE_TITLES[rate], *(_cell(Rate.of(rate, lenses[lens][rate])) for lens in names))
                for rate in _RATES
            )
            return Table(title, header, body)

        classes = [c.value for c in RowClass]
        count_rows = tuple(
            (cls, *(str(block["counts"][cls]) for block in lenses.values())) for cls in classes
        )
        plot = RatePlot(
            title="Outcome rates per identity lens (95% Wilson intervals)",
            xlabel="identity lens",
            series={
                _RATE_TITLES[name]: [(lens, Rate.of(name, lenses[lens][name])) for lens in _OURS]
                for name in ("abs_rt_valid", "of_emitted_rt", "confidently_wrong")
            },
        )
        reference = tuple(lens for lens in lenses if lens in REFERENCE_LENSES)
        by_class = metrics.get("parity_reference_by_class") or {}
        tables = [rate_table("Rates", _OURS)]
        if reference:
            tables.append(rate_table("Rates under the reference lenses", reference))
        tables.append(Table("Outcome counts", ("class", *lenses), count_rows))
        if reference:
            tables.append(
                Table(
                    "parity vs reference_parity (orthonym.metrics.coverage_metrics as written)",
                    ("difference class", "rows"),
                    tuple((name, str(count)) for name, count in by_class.items())
                    or (("none", "0"),),
                )
            )
        computed = (
            "The reference lenses are orthonym.metrics.coverage_metrics's matchers as written."
            if reference
            else "The reference lenses were not computed (--reference-lenses computes them)."
        )
        return Section(
            title="Round trip under each identity lens",
            intro=(
                f"{metrics['total']} structures; {metrics['emitted']} named, "
                f"{metrics['opsin_parsed']} read back by OPSIN, "
                f"{metrics['opsin_error']} OPSIN errors (timeouts, crashes on well-formed "
                "names: inside every rate's denominator, never credited). A name counts only "
                "if OPSIN parses it back to the input under the lens; unparseable names "
                "(OPSIN cannot interpret them, or the name itself is refused: a line break, a "
                "control or invisible character, over 100,000 characters) are never counted "
                "as wrong, and a pair the lens cannot judge is 'unscorable' (never credited). "
                + computed
            ),
            tables=tuple(tables),
            plots=(plot,),
            anchor="lenses",
        )

    def _breakdown_section(self, run: Run) -> Section:
        lenses = _OURS
        groups: dict[str, dict[str, list[Row]]] = {}
        for row in run.rows:
            for dim, bucket in self.breakdowns(row).items():
                groups.setdefault(dim, {}).setdefault(bucket, []).append(row)
        tables = []
        plots = []
        for dim, buckets in groups.items():
            body = []
            series: dict[str, list[tuple[str, Rate]]] = {lens: [] for lens in lenses}
            for bucket in ordered_buckets(buckets):
                members = buckets[bucket]  # every row, OPSIN errors too
                if not members:
                    continue  # no rate to show
                cells = []
                for lens in lenses:
                    rate = Rate.wilson(
                        lens, sum(r[lens] == RowClass.RT_VALID for r in members), len(members)
                    )
                    series[lens].append((bucket, rate))
                    cells.append(_cell(rate))
                body.append((bucket, str(len(members)), *cells))
            tables.append(Table(dim, ("bucket", "n", *lenses), tuple(body)))
            plots.append(
                RatePlot(title=f"Round-trip valid / all by {dim}", xlabel=dim, series=series)
            )
        return Section(
            title="Breakdowns by input structure",
            intro=(
                "Round-trip valid / all per bucket of a property of the input structure "
                "(numbers in numeric order; a bucket with no scored pair is left out)."
            ),
            tables=tuple(tables),
            plots=tuple(plots),
            anchor="breakdowns",
        )

    def _failure_section(self, run: Run, max_failures: int) -> Section:
        lenses = _lenses_of(run)
        wrong = [
            r for r in run.rows if any(r[lens] == RowClass.CONFIDENTLY_WRONG for lens in lenses)
        ]

        # The most forgiving lens still calling it wrong makes the most serious case: first.
        def severity(row: Row) -> int:
            return sum(row[lens] == RowClass.CONFIDENTLY_WRONG for lens in lenses)

        ordered = sorted(wrong, key=lambda r: -severity(r))
        cases = tuple(
            FailureCase(
                item=str(r["id"]),
                title=str(r["name"]),
                details=(
                    (
                        "wrong under",
                        ", ".join(lens for lens in lenses if r[lens] == "confidently_wrong"),
                    ),
                    ("input", str(r["smiles"])),
                    ("read back", str(r["opsin_smiles"])),
                ),
                structures=(
                    Structure("input structure", r["smiles"]),
                    Structure("OPSIN read-back of the name", r["opsin_smiles"]),
                ),
            )
            for r in ordered[:max_failures]
        )
        return Section(
            title="Confidently wrong names",
            intro=(
                "Names OPSIN parses to a different structure: the input (left) beside what "
                "the name actually means (right). Most serious first (wrong under more lenses)."
            ),
            failures=cases,
            failures_total=len(wrong),
            anchor="failures",
        )

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        metrics = {**self._metrics(run), **listings_of(run.rows, _lenses_of(run))}
        return [
            self._lens_section(metrics),
            self._breakdown_section(run),
            self._failure_section(run, max_failures),
        ]

    def board_metric(self, run: Run) -> str:
        return "rt_valid[exact]"

    def hit_description(self, run: Run, name: str) -> str:
        if name == "emitted":
            return "a name emitted (coverage), over every structure"
        lens = _RT_VALID.get(name)
        if lens is None:
            return ""
        return f"a name that OPSIN reads back as the same structure ({lens}), over every structure"

    def score_metrics(self, run: Run) -> tuple[ScoreMetric, ...]:
        return tuple(
            ScoreMetric(
                f"of_emitted_rt[{lens}]",
                "ratio",
                f"round-trip valid ({lens}) among the structures the run named",
            )
            for lens in _lenses_of(run)
        )

    def scores(self, row: Row, run: Run) -> Mapping[str, tuple[float, float] | None]:
        emitted = 1.0 if row["emitted"] else 0.0
        return {
            f"of_emitted_rt[{lens}]": (float(row[lens] == RowClass.RT_VALID), emitted)
            for lens in _lenses_of(run)
        }

    def system_name(self, run: Run) -> str:
        files = [Path(i.path).name for i in run.envelope.inputs if i.role == "input"]
        return f"names in {files[0]}" if files else run.label

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        return (("name", str(row["name"])), ("read back", str(row["opsin_smiles"])))

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        return (
            Structure("input", row["smiles"]),
            Structure("read back", row["opsin_smiles"]),
        )
