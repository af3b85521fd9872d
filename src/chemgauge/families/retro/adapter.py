"""Report adapter for ``retro``: single-step retrosynthesis top-k under named conventions.

Every target is in every denominator (no outputs or a scoring failure is a miss), so each
(convention, matcher, k) hit is defined on every row. The board and compare metrics
(``top10[syntheseus,exact]``, ``mrr[syntheseus,exact]``) are built from the report's
structured fields (its conventions, matchers and each top-k rate's ``k``) and found by those
fields; no metric name is ever parsed. Model outputs and per-target model time live in the
run's journal (``journal.jsonl``); when it sits beside the rows it supplies the top
prediction to draw and the latency plot, and the report works without it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.lines import read_lines
from chemgauge.families.retro.journal import JOURNAL_JSONL
from chemgauge.families.retro.metrics import aggregate
from chemgauge.report.adapter import (
    Distribution,
    FailureCase,
    FamilyAdapter,
    MetricPanel,
    Mismatch,
    Rate,
    RatePlot,
    Recomputed,
    ScoreMetric,
    Section,
    Structure,
    Table,
    agree,
    named_ranks,
    system_text,
)
from chemgauge.report.buckets import ordered_buckets
from chemgauge.report.formatting import fmt_count, fmt_rate
from chemgauge.report.runs import Run

__all__ = ["RetroAdapter", "RetroPredictions"]

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RetroMetric:
    """One board/compare metric of a retro run: top-k hits (``k``) or MRR (``k`` None) of
    one convention and matcher; :attr:`name` is how users type it."""

    convention: str
    matcher: str
    k: int | None = None

    @property
    def name(self) -> str:
        kind = "mrr" if self.k is None else f"top{self.k}"
        return f"{kind}[{self.convention},{self.matcher}]"


def _config(run: Run) -> Mapping[str, Any]:
    return run.config


def _input_sha(run: Run, role: str) -> str | None:
    return next((i.sha256 for i in run.envelope.inputs if i.role == role), None)


def _grid(run: Run) -> list[tuple[str, str]]:
    """(convention, matcher) pairs in the report's order (its ``conventions`` and
    ``matchers`` fields)."""
    metrics = run.metrics
    return [(c, m) for c in metrics["conventions"] for m in metrics["matchers"]]


def _top_k_metrics(run: Run) -> list[RetroMetric]:
    """A top-k metric per (convention, matcher) and per top-k rate the report holds."""
    accuracy = run.metrics["accuracy"]
    return [
        RetroMetric(c, m, int(rate["k"])) for c, m in _grid(run) for rate in accuracy[c][m]["top_k"]
    ]


def _metrics_by_name(run: Run) -> dict[str, RetroMetric]:
    """Every hit and score metric of a run by the name users type."""
    found = [*_top_k_metrics(run), *(RetroMetric(c, m) for c, m in _grid(run))]
    return {metric.name: metric for metric in found}


def _rank(row: Row, convention: str, matcher: str) -> int | None:
    hits = row.get("hits")
    if not hits:
        return None
    value = hits.get(convention, {}).get(matcher)
    return None if value is None else int(value)


class RetroPredictions:
    """Outputs and model seconds per target, read from the run's journal if present."""

    def __init__(self, path: Path) -> None:
        self.outputs: dict[str, list[str]] = {}
        self.model_seconds: dict[str, float] = {}
        if not path.is_file():
            return
        for line in read_lines(path, keep_undecodable=True):
            try:
                entry = orjson.loads(line.text)
            except orjson.JSONDecodeError:
                continue  # a journal may end in a cut line; drawings are optional
            if not isinstance(entry, dict) or "target" not in entry:
                continue
            self.outputs[str(entry["target"])] = list(entry.get("outputs") or [])
            seconds = (entry.get("timing") or {}).get("model_s")
            if isinstance(seconds, (int, float)):
                self.model_seconds[str(entry["target"])] = float(seconds)


@functools.lru_cache(maxsize=8)
def _predictions(path: Path, mtime_ns: int) -> RetroPredictions:
    return RetroPredictions(path)


def _load_predictions(run: Run) -> RetroPredictions:
    path = run.rows_path.parent / JOURNAL_JSONL
    mtime = path.stat().st_mtime_ns if path.is_file() else 0
    return _predictions(path, mtime)


class RetroAdapter(FamilyAdapter):
    """Adapter for reports written by ``chemgauge retro``."""

    family = "retro"
    reproducibility_excludes = ()

    def ranks(self, row: Row) -> Iterator[tuple[str, Any]]:
        """The named rank fields and every convention's and matcher's rank in ``hits``."""
        yield from named_ranks(row)
        hits = row.get("hits") or {}
        for convention, by_matcher in hits.items() if isinstance(hits, Mapping) else ():
            for matcher, rank in by_matcher.items() if isinstance(by_matcher, Mapping) else ():
                yield f"hits.{convention}.{matcher}", rank

    def item_key(self, row: Row) -> str:
        return str(row["target"])

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        return tuple(metric.name for metric in _top_k_metrics(run))

    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        out: dict[str, bool | None] = {}
        for metric in _top_k_metrics(run):
            rank = _rank(row, metric.convention, metric.matcher)
            out[metric.name] = rank is not None and metric.k is not None and rank < metric.k
        return out

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        cls = row.get("reaction_class")
        n = len(row.get("reactants") or ())
        return {
            "reaction_class": "(none)" if cls is None else str(cls),
            "num_reactants": "4+" if n >= 4 else str(n),
        }

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        data = run.metrics.get("data") or {}
        return {
            "data_sha256": data.get("sha256"),
            "fold": data.get("fold"),
            # No limit (None) is a protocol value too, not an unknown one.
            "limit": data.get("limit") or "none",
        }

    def _metrics(self, run: Run) -> dict[str, Any]:
        config = _config(run)
        return aggregate(
            run.rows,
            conventions=config["conventions"],
            matchers=config["matchers"],
            ks=config["k"],
            max_k=config["num_top_results"],
            round_trip_max_rank=config.get("round_trip_max_rank")
            if config.get("round_trip")
            else None,
        )

    def recompute(self, run: Run) -> Recomputed:
        return Recomputed(self._metrics(run))

    def cross_checks(self, run: Run) -> list[Mismatch]:
        config, data = _config(run), run.metrics.get("data") or {}
        model = dict(run.metrics.get("model") or {})
        model.pop("predictions_file", None)  # the reading stats, not the model's description
        found = agree("metrics.data.sha256", data.get("sha256"), _input_sha(run, "data"))
        for key in ("fold", "limit"):
            found += agree(f"metrics.data.{key}", data.get(key), config.get(key))
        found += agree("metrics.data.targets", data.get("targets"), run.envelope.counts.items)
        found += agree("metrics.model", model, run.envelope.provenance.backends.get("model", model))
        predictions = _input_sha(run, "predictions")
        if predictions is not None:
            found += agree("metrics.model.file_sha256", model.get("file_sha256"), predictions)
        return found

    def headline(self, run: Run) -> list[Rate]:
        metrics = self._metrics(run)
        grid = _grid(run)
        if not grid:
            return []
        convention = grid[0][0]
        return [
            Rate.of(f"top-{rate['k']} ({convention}, {matcher})", rate)
            for matcher in metrics["matchers"]
            for rate in metrics["accuracy"][convention][matcher]["top_k"]
        ]

    def _accuracy_section(self, run: Run, metrics: Mapping[str, Any]) -> Section:
        ks = [str(k) for k in metrics["k"]]
        body = []
        series: dict[str, list[tuple[str, Rate]]] = {}
        for convention, matcher in _grid(run):
            block = metrics["accuracy"][convention][matcher]
            rates = [Rate.of(str(rate["k"]), rate) for rate in block["top_k"]]
            mrr = block["mrr"]["value"]
            body.append(
                (
                    convention,
                    matcher,
                    str(block["n"]),
                    *(f"{fmt_rate(r)} ({fmt_count(r)})" for r in rates),
                    "n/a" if mrr is None else f"{mrr:.3f}",
                    str(block["misses"]),
                )
            )
            series[f"{convention}, {matcher}"] = [(r.label, r) for r in rates]
        plots: list[RatePlot | Distribution] = [
            RatePlot("Top-k accuracy (95% Wilson intervals)", "k", series, kind="line")
        ]
        first = _grid(run)[0]
        ranks = [_rank(r, *first) for r in run.rows]
        plots.append(
            Distribution(
                f"Rank of the first correct answer ({first[0]}, {first[1]})",
                "rank (1 = top)",
                tuple(float(r + 1) for r in ranks if r is not None),
            )
        )
        plots.append(
            Distribution(
                "Outputs per target (raw, up to num_top_results)",
                "outputs",
                tuple(float(r["n_outputs"]) for r in run.rows),
            )
        )
        seconds = _load_predictions(run).model_seconds
        if seconds:
            plots.append(
                Distribution(
                    "Model time per target (from the run's journal)",
                    "seconds",
                    tuple(seconds.values()),
                    integer=False,
                    log_x=True,
                )
            )
        outputs = metrics["outputs"]
        statuses = ", ".join(f"{name}: {count}" for name, count in metrics["status"].items())
        return Section(
            title="Top-k accuracy",
            intro=(
                f"{metrics['targets']} targets ({statuses}). Outputs: "
                f"{outputs['total']} scored, {outputs['invalid_rate']['count']} invalid, "
                f"{outputs['duplicate_rate']['count']} duplicates. 'syntheseus' drops invalid "
                "and duplicate "
                "outputs before ranking; 'raw_slots' keeps every output in its slot."
            ),
            tables=(
                Table(
                    "Accuracy per convention and matcher",
                    ("convention", "matcher", "n", *(f"top-{k}" for k in ks), "MRR", "misses"),
                    tuple(body),
                ),
            ),
            plots=tuple(plots),
            anchor="accuracy",
        )

    def _class_section(self, run: Run, metrics: Mapping[str, Any]) -> Section | None:
        by_class = metrics.get("by_class")
        if not by_class:
            return None
        convention, matcher = _grid(run)[0]
        ks = [str(k) for k in metrics["k"]]
        body = []
        for cls in ordered_buckets(by_class):
            block = by_class[cls][convention][matcher]
            if not block["n"]:
                continue
            body.append(
                (
                    cls,
                    str(block["n"]),
                    *(fmt_rate(Rate.of(str(rate["k"]), rate)) for rate in block["top_k"]),
                )
            )
        return Section(
            title="By reaction class",
            intro=f"Top-k under {convention}, {matcher}.",
            tables=(
                Table("Reaction classes", ("class", "n", *(f"top-{k}" for k in ks)), tuple(body)),
            ),
            anchor="breakdowns",
        )

    def _failure_section(self, run: Run, max_failures: int) -> Section:
        convention, matcher = _grid(run)[0]
        predictions = _load_predictions(run)
        wrong = [r for r in run.rows if _rank(r, convention, matcher) != 0]
        cases = []
        for row in wrong[:max_failures]:
            top = self._top_prediction(row, predictions)
            rank = _rank(row, convention, matcher)
            cases.append(
                FailureCase(
                    item=str(row["target"]),
                    title=str(row["product"]),
                    details=(
                        ("status", str(row["status"])),
                        ("first correct rank", "none" if rank is None else str(rank + 1)),
                        ("true reactants", ".".join(row["reactants"])),
                        ("top prediction", top or "not available"),
                    ),
                    structures=(
                        Structure("product", row["product"]),
                        Structure("true reactants", ".".join(row["reactants"])),
                        Structure("top prediction", top),
                    ),
                )
            )
        note = "" if predictions.outputs else f" ({JOURNAL_JSONL} not found: no predictions drawn)"
        return Section(
            title="Targets missed at top-1",
            intro=(
                f"Under {convention}, {matcher}: the product, the true reactants and the model's "
                f"top valid prediction{note}."
            ),
            failures=tuple(cases),
            failures_total=len(wrong),
            anchor="failures",
        )

    @staticmethod
    def _top_prediction(row: Row, predictions: RetroPredictions) -> str | None:
        outputs = predictions.outputs.get(str(row["target"]), [])
        invalid = set(row.get("invalid_ranks") or ())
        return next((o for i, o in enumerate(outputs) if i not in invalid), None)

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        metrics = self._metrics(run)
        parts = [self._accuracy_section(run, metrics)]
        by_class = self._class_section(run, metrics)
        if by_class is not None:
            parts.append(by_class)
        parts.append(self._failure_section(run, max_failures))
        return parts

    def board_metric(self, run: Run) -> str:
        top_k = _top_k_metrics(run)
        if not top_k:
            return ""
        first = top_k[0]
        smallest = min(m.k for m in top_k if m.k is not None)
        return RetroMetric(first.convention, first.matcher, smallest).name

    def hit_description(self, run: Run, name: str) -> str:
        metric = _metrics_by_name(run).get(name)
        if metric is None or metric.k is None:
            return ""
        return (
            f"the true reactants among the first {metric.k} outputs ({metric.convention} "
            f"convention, {metric.matcher} matcher), over every target"
        )

    def score_metrics(self, run: Run) -> tuple[ScoreMetric, ...]:
        return tuple(
            ScoreMetric(
                RetroMetric(c, m).name,
                "mean",
                f"mean reciprocal rank ({c}, {m}); a miss scores 0",
            )
            for c, m in _grid(run)
        )

    def scores(self, row: Row, run: Run) -> Mapping[str, tuple[float, float] | None]:
        out: dict[str, tuple[float, float] | None] = {}
        for convention, matcher in _grid(run):
            rank = _rank(row, convention, matcher)
            name = RetroMetric(convention, matcher).name
            out[name] = (0.0 if rank is None else 1 / (rank + 1), 1.0)
        return out

    def measures(
        self, run: Run, rows: Sequence[Row], names: Sequence[str]
    ) -> dict[str, list[tuple[float, float] | None]]:
        # One rank lookup per row and metric, without building every metric of every row.
        known = _metrics_by_name(run)
        out: dict[str, list[tuple[float, float] | None]] = {}
        for name in names:
            metric = known[name]  # an unknown name is a KeyError, as the base class raises
            ranks = [_rank(row, metric.convention, metric.matcher) for row in rows]
            k = metric.k
            if k is None:
                out[name] = [(0.0 if r is None else 1 / (r + 1), 1.0) for r in ranks]
            else:
                out[name] = [(float(r is not None and r < k), 1.0) for r in ranks]
        return out

    def board_caveats(self, runs: Sequence[Run], metric: str) -> list[str]:
        caps = sorted({int(_config(r).get("num_top_results", 0)) for r in runs})
        ks = {m.k for r in runs if (m := _metrics_by_name(r).get(metric)) is not None}
        k = next(iter(ks), None)
        if len(caps) < 2 or (k is not None and k <= caps[0]):
            return []
        return [
            f"{metric}: the runs keep different numbers of outputs (num_top_results "
            f"{', '.join(map(str, caps))}); a run that keeps more can score where another "
            "cannot: compare top-k for k up to the smallest."
        ]

    def system_name(self, run: Run) -> str:
        model = run.metrics.get("model") or run.envelope.provenance.backends.get("model") or {}
        name = system_text(model) or run.label
        if isinstance(model, Mapping):
            source = model.get("file") or model.get("template_source")
            if source:
                return f"{name} ({source})"
        return name

    def metric_panels(self, metrics: Sequence[str], run: Run | None = None) -> list[MetricPanel]:
        """One top-k curve per (convention, matcher): k on the x axis, not 24 bars in a row
        (the metrics found in ``run``'s report; without it, the default panels)."""
        known = {} if run is None else _metrics_by_name(run)
        panels: dict[str, list[tuple[str, str]]] = {}
        others = []
        for name in metrics:
            metric = known.get(name)
            if metric is None or metric.k is None:
                others.append(name)
                continue
            title = f"{metric.convention}, {metric.matcher}"
            panels.setdefault(title, []).append((str(metric.k), name))
        out = [MetricPanel(title, "k", tuple(points), "line") for title, points in panels.items()]
        return out + (super().metric_panels(others) if others else [])

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        details = [("status", str(row["status"])), ("outputs", str(row["n_outputs"]))]
        if run is not None and _grid(run):
            convention, matcher = _grid(run)[0]
            rank = _rank(row, convention, matcher)
            details.append(
                (
                    f"first correct rank ({convention}, {matcher})",
                    "none" if rank is None else str(rank + 1),
                )
            )
            details.append(("top prediction", self._top_text(row, run)))
        return tuple(details)

    #: The product and its true reactants are the item; the top prediction is a run's answer.
    item_reference_count = 2

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        top = None if run is None else self._top_prediction(row, _load_predictions(run))
        note = "" if top or run is None else self._top_text(row, run)
        return (
            Structure("product", row["product"]),
            Structure("true reactants", ".".join(row["reactants"])),
            Structure("top prediction", top, note),
        )

    def _top_text(self, row: Row, run: Run) -> str:
        """The top valid prediction, or why there is none (no valid output, no journal)."""
        predictions = _load_predictions(run)
        top = self._top_prediction(row, predictions)
        if top:
            return top
        if str(row["target"]) in predictions.outputs:
            return "no valid output"
        return f"not available ({JOURNAL_JSONL} not found)"
