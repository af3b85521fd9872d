"""What the report, compare and verify commands need to know about one benchmark family.

A family adapter is registered by the report's ``family`` name (entry-point group
``chemgauge.report_families`` for third parties). It tells how to identify an item, which
per-row binary hits can be compared between runs, which item-intrinsic breakdowns exist, how
to recompute the report's aggregate sections from rows (by calling the family's own
aggregation: rows are the truth), and what to show: headline rates, tables, plots and the
structures that explain failures. The HTML and terminal layers only render these values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from chemgauge.errors import InputFileError
from chemgauge.eval.metrics import Rate as MetricRate
from chemgauge.eval.stats import wilson_interval
from chemgauge.report.runs import Run

__all__ = [
    "PANEL_METRICS",
    "Distribution",
    "FailureCase",
    "FamilyAdapter",
    "MetricPanel",
    "Mismatch",
    "Rate",
    "RatePlot",
    "Recomputed",
    "ScoreMetric",
    "Section",
    "Structure",
    "Table",
    "agree",
    "system_text",
]

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate with its numerator, denominator and a two-sided interval (``None`` when n == 0)."""

    label: str
    count: int
    n: int
    estimate: float | None
    low: float | None
    high: float | None
    method: str = "wilson95"

    @classmethod
    def wilson(cls, label: str, count: int, n: int) -> Rate:
        """A Wilson 95% interval for ``count`` successes out of ``n``."""
        interval = wilson_interval(count, n)
        return cls(label, count, n, interval.estimate, interval.low, interval.high)

    @classmethod
    def of(cls, label: str, block: Mapping[str, Any]) -> Rate:
        """The rate a report holds (the one :class:`chemgauge.eval.metrics.Rate` shape),
        labelled for display; any other shape is an error naming the label."""
        try:
            metric = MetricRate.model_validate(
                {key: block[key] for key in ("count", "n", "value", "interval", "method")}
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputFileError(f"{label}: not a rate ({exc})") from None
        low, high = metric.interval
        return cls(label, metric.count, metric.n, metric.value, low, high, metric.method)

    def to_dict(self) -> dict[str, Any]:
        """The report's rate shape, labelled: ``{label, count, n, value, interval, method}``."""
        return {
            "label": self.label,
            "count": self.count,
            "n": self.n,
            "value": self.estimate,
            "interval": [self.low, self.high],
            "method": self.method,
        }


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of already formatted cells (each cell a string)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""


@dataclass(frozen=True, slots=True)
class RatePlot:
    """Rates with intervals: ``bar`` groups categories, ``line`` draws a curve over x (hit@k).

    ``series`` maps a series name to its (x label, rate) points, in drawing order.
    """

    title: str
    xlabel: str
    series: Mapping[str, Sequence[tuple[str, Rate]]]
    kind: Literal["bar", "line"] = "bar"
    ylabel: str = "rate"


@dataclass(frozen=True, slots=True)
class Distribution:
    """Values to draw as a histogram (integers get one bar per value up to a cap)."""

    title: str
    xlabel: str
    values: tuple[float, ...]
    integer: bool = True
    log_x: bool = False


Plot = RatePlot | Distribution


@dataclass(frozen=True, slots=True)
class MetricPanel:
    """One chart of a comparison: some hit metrics, each drawn at an x label.

    ``kind`` as in :class:`RatePlot` (``line`` for a curve over k).
    """

    title: str
    xlabel: str
    metrics: tuple[tuple[str, str], ...]
    kind: Literal["bar", "line"] = "bar"


#: Hit metrics drawn in one bar chart at most (more are split into several charts).
PANEL_METRICS = 8


@dataclass(frozen=True, slots=True)
class Structure:
    """One structure to draw, with a caption; ``smiles`` None or unparsable draws a placeholder.

    ``mark`` is space-separated roles that frame the drawing (``true``, ``chosen``); the
    caption must say the same in words, since a frame's colour alone is not accessible.
    """

    label: str
    smiles: str | None
    note: str = ""
    mark: str = ""


@dataclass(frozen=True, slots=True)
class FailureCase:
    """One item whose structures explain a failure: details are (field, value) text pairs."""

    item: str
    title: str
    details: tuple[tuple[str, str], ...]
    structures: tuple[Structure, ...]


@dataclass(frozen=True)
class Section:
    """A part of the HTML report: an explanation, tables, plots and failure cases."""

    title: str
    intro: str = ""
    tables: tuple[Table, ...] = ()
    plots: tuple[Plot, ...] = ()
    failures: tuple[FailureCase, ...] = ()
    failures_total: int | None = None
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class ScoreMetric:
    """A per-row measure that is not a binary hit, which boards rank runs by.

    ``ratio``: a binary numerator over a binary denominator that is the run's own (round trips
    among the names a run emitted); ``mean``: a real-valued score per item (reciprocal rank).
    """

    name: str
    kind: Literal["ratio", "mean"]
    description: str


def system_text(value: Any) -> str:
    """A recorded system description (a name, or a mapping with ``name`` and maybe
    ``version``) as short text."""
    if isinstance(value, Mapping):
        name = value.get("name") or value.get("backend") or value.get("model")
        version = value.get("version")
        if name and version:
            # A version string often names the program already ("osra 2.1.3").
            return str(version) if str(version).startswith(str(name)) else f"{name} {version}"
        if name:
            return str(name)
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()) if isinstance(v, str))
    return "" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Two recorded values that must agree and do not (``where``: what was compared)."""

    where: str
    recorded: Any
    expected: Any


def agree(where: str, recorded: Any, expected: Any) -> list[Mismatch]:
    """``[]`` if the two values are equal, else the one mismatch."""
    return [] if recorded == expected else [Mismatch(where, recorded, expected)]


@dataclass(frozen=True)
class Recomputed:
    """Report sections recomputed from rows, keyed by their field in the envelope's
    ``metrics``."""

    sections: Mapping[str, Any]
    notes: tuple[str, ...] = field(default_factory=tuple)


def named_ranks(row: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every rank a row records by name, as (field path, value): fields called ``rank`` or
    ``*_rank``, each slot of ``*_ranks*`` lists, at any depth."""
    for key, value in row.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from named_ranks(value, f"{path}.")
        elif key == "rank" or key.endswith("_rank"):
            yield path, value
        elif "_ranks" in key:
            if isinstance(value, list):
                yield from ((f"{path}[{i}]", v) for i, v in enumerate(value))
            else:
                yield path, value


def rank_problem(path: str, value: Any) -> str | None:
    """Why a rank read from disk cannot be used (ranks are 0-based integers or null)."""
    if value is None or (type(value) is int and value >= 0):
        return None
    return f"{path} is {value!r}: a rank is a non-negative integer or null"


class FamilyAdapter(ABC):
    """Everything family-specific that report, compare and verify need (see module doc)."""

    family: ClassVar[str]
    #: The row fields the family leaves out of the row hash; a report claiming others is a
    #: difference (``None``: accept what the report records).
    reproducibility_excludes: ClassVar[tuple[str, ...] | None] = None

    @abstractmethod
    def item_key(self, row: Row) -> str:
        """The identity of the item a row scores (stable across runs on the same corpus)."""

    @abstractmethod
    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        """Names of the per-row binary outcomes (higher is better) that compare pairs up."""

    @abstractmethod
    def hits(self, row: Row, run: Run) -> Mapping[str, bool | None]:
        """Each hit metric for one row; ``None`` means the row does not take part in it."""

    def breakdowns(self, row: Row) -> Mapping[str, str]:
        """Item-intrinsic breakdown buckets (dimension -> bucket) used by compare and tables."""
        return {}

    def ranks(self, row: Row) -> Iterator[tuple[str, Any]]:
        """Every rank the row records (field path, value), checked when a run is read so a
        hand-edited rank is an error, never a hit (named fields by default)."""
        yield from named_ranks(row)

    @abstractmethod
    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        """Fields two runs must share to be compared (corpus hash, split protocol...)."""

    @abstractmethod
    def recompute(self, run: Run) -> Recomputed:
        """The report's aggregate sections recomputed from the rows by the family's own code."""

    def cross_checks(self, run: Run) -> list[Mismatch]:
        """Recorded facts that must agree with each other or with the rows: config against
        provenance, hashes in ``metrics`` against ``inputs``... (none by default)."""
        return []

    @abstractmethod
    def headline(self, run: Run) -> list[Rate]:
        """The few numbers a reader should see first, with intervals."""

    @abstractmethod
    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        """Family-specific parts of the HTML report."""

    def board_metric(self, run: Run) -> str:
        """The family's default headline metric on a board (a hit or score metric name)."""
        metrics = self.hit_metrics(run)
        return metrics[0] if metrics else ""

    def hit_description(self, run: Run, name: str) -> str:
        """What a hit metric counts, in a few words, for a board's reader ("" if unknown)."""
        return ""

    def score_metrics(self, run: Run) -> tuple[ScoreMetric, ...]:
        """Per-row measures besides the hits that a board can rank by (none by default)."""
        return ()

    def scores(self, row: Row, run: Run) -> Mapping[str, tuple[float, float] | None]:
        """Each score metric for one row as (numerator, denominator); ``None``: the row does
        not take part."""
        return {}

    def measures(
        self, run: Run, rows: Sequence[Row], names: Sequence[str]
    ) -> dict[str, list[tuple[float, float] | None]]:
        """Each named hit or score metric over ``rows`` as per-row (numerator, denominator),
        ``None`` where a row does not take part (a hit is ``(1, 1)`` or ``(0, 1)``).

        The default asks :meth:`hits` and :meth:`scores` row by row; a family may override it
        to compute only the metrics asked for.
        """
        hit_names = set(self.hit_metrics(run))
        out: dict[str, list[tuple[float, float] | None]] = {name: [] for name in names}
        wants_scores = any(name not in hit_names for name in names)
        for row in rows:
            hits = self.hits(row, run)
            scores = self.scores(row, run) if wants_scores else {}
            for name in names:
                if name in hit_names:
                    hit = hits.get(name)
                    out[name].append(None if hit is None else (1.0 if hit else 0.0, 1.0))
                else:
                    out[name].append(scores.get(name))
        return out

    def board_caveats(self, runs: Sequence[Run], metric: str) -> list[str]:
        """Reasons the runs on one board may not measure ``metric`` alike (a cap on outputs
        that differs between them, say); none by default."""
        return []

    def system_name(self, run: Run) -> str:
        """The system under test as the run recorded it (model, recognizer, rule set...)."""
        return run.label

    def metric_panels(self, metrics: Sequence[str], run: Run | None = None) -> list[MetricPanel]:
        """How a comparison's chart groups the hit metrics: bar charts of at most
        :data:`PANEL_METRICS` metrics each by default (a family may group by kind, finding
        each metric in ``run``, one of the runs compared, rather than parsing its name)."""
        chunks = [metrics[i : i + PANEL_METRICS] for i in range(0, len(metrics), PANEL_METRICS)]
        return [
            MetricPanel(
                "" if len(chunks) == 1 else f"part {i + 1} of {len(chunks)}",
                "metric",
                tuple((m, m) for m in chunk),
            )
            for i, chunk in enumerate(chunks)
        ]

    def describe_item(self, row: Row, run: Run | None = None) -> tuple[tuple[str, str], ...]:
        """Short (field, value) text describing a row's answer, for compare listings."""
        return ()

    #: How many of :meth:`item_structures` describe the item itself (the same for both runs of
    #: a comparison, drawn once); the rest are a run's answer.
    item_reference_count: ClassVar[int] = 1

    def item_structures(self, row: Row, run: Run | None = None) -> tuple[Structure, ...]:
        """Structures for an item in compare listings: the item's own (the first
        :attr:`item_reference_count`), then this run's answer (``run`` gives a family access
        to files beside the rows, such as a prediction journal)."""
        return ()
