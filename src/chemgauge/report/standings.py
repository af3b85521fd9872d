"""Several systems scored on the same items: each one's value with an interval, every pair
tested, Holm over all pairs, ranks and a compact letter display.

A system's measure on an item is a numerator and a denominator, and whether the item takes
part at all (:class:`Column`). Three kinds of measure:

* ``hit``: a binary outcome over the items that take part (top-k, exact match, coverage).
  Value: a Wilson interval. Pairs: exact McNemar on the items both take part in, with
  :func:`~chemgauge.report.compare.paired_binary_bootstrap`'s interval on the difference:
  the tests ``compare`` runs.
* ``ratio``: a binary numerator over a binary denominator of the system's own (a rate among
  the items a system answered: round trips of the names it emitted). Value: Wilson on the two
  sums. Pairs: the paired bootstrap (McNemar needs one denominator).
* ``mean``: a real-valued score per item (reciprocal rank, nDCG). Value and pairs: the paired
  bootstrap.

The paired bootstrap resamples items once for all systems (the same resamples, so every
interval and every pairwise difference comes from one set of draws; the index draws are
those of :func:`~chemgauge.eval.stats.bootstrap_interval` for the same seed, which gives the
same interval for one system). The two-sided p-value of a difference ``d`` is the share of
resampled differences at least as far from ``d`` as ``d`` is from zero (the resampled
distribution shifted to the null), ``(1 + count) / (1 + resamples)``, never zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from chemgauge.eval.stats import (
    BOOTSTRAP_BLOCK,
    Interval,
    check_seed,
    mcnemar_exact,
    wilson_interval,
)
from chemgauge.report.compare import holm_adjust, paired_binary_bootstrap
from chemgauge.report.letters import compact_letters

__all__ = [
    "KINDS",
    "Column",
    "Kind",
    "PairResult",
    "Standing",
    "Standings",
    "StatSettings",
    "bootstrap_p_value",
    "rank_systems",
]

Kind = Literal["hit", "ratio", "mean"]
KINDS: tuple[Kind, ...] = ("hit", "ratio", "mean")
Floats = NDArray[np.float64]
Mask = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class StatSettings:
    """Significance level, interval confidence and the bootstrap's seed and resamples."""

    alpha: float = 0.05
    confidence: float = 0.95
    seed: int = 0
    resamples: int = 2000

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.resamples < 100:
            raise ValueError(f"resamples must be at least 100, got {self.resamples}")
        check_seed(self.seed)


@dataclass(frozen=True)
class Column:
    """One system's measure on each item: numerator, denominator, and whether it takes part."""

    numerator: Floats
    denominator: Floats
    present: Mask

    def __post_init__(self) -> None:
        n = len(self.present)
        if len(self.numerator) != n or len(self.denominator) != n:
            raise ValueError("a column's numerator, denominator and presence differ in length")

    @classmethod
    def of(cls, values: Sequence[tuple[float, float] | None]) -> Column:
        """A column from per-item ``(numerator, denominator)`` pairs (``None``: not taking
        part)."""
        present = np.fromiter((v is not None for v in values), dtype=np.bool_, count=len(values))
        numerator = np.fromiter((0.0 if v is None else v[0] for v in values), np.float64)
        denominator = np.fromiter((0.0 if v is None else v[1] for v in values), np.float64)
        return cls(numerator, denominator, present)

    def take(self, items: Mask) -> Column:
        """The column restricted to the selected items (a breakdown bucket)."""
        return Column(self.numerator[items], self.denominator[items], self.present[items])


@dataclass(frozen=True, slots=True)
class PairResult:
    """One pair of systems (indexes into the columns) on the items both take part in."""

    a: int
    b: int
    n: int
    difference: Interval
    only_a: int | None
    only_b: int | None
    test: str
    p_value: float
    p_holm: float

    def significant(self, alpha: float) -> bool:
        """Whether the Holm-adjusted p-value is at most ``alpha``."""
        return self.p_holm <= alpha


@dataclass(frozen=True, slots=True)
class Standing:
    """One system's line: its value with interval, counts for rates, rank and letters."""

    index: int
    value: Interval
    count: float | None
    total: float | None
    rank: int | None
    letters: str


@dataclass(frozen=True)
class Standings:
    """Every system's standing, best first, and every pair's test."""

    kind: Kind
    settings: StatSettings
    standings: tuple[Standing, ...]
    pairs: tuple[PairResult, ...]
    undefined_resamples: int = 0

    def pair(self, a: int, b: int) -> PairResult:
        """The test of systems ``a`` and ``b`` (in either order)."""
        for p in self.pairs:
            if (p.a, p.b) in ((a, b), (b, a)):
                return p
        raise KeyError((a, b))


def _sum(values: Floats) -> float:
    return math.fsum(values.tolist())


def _ratio(column: Column, mask: Mask) -> tuple[float, float, float | None]:
    num, den = _sum(column.numerator[mask]), _sum(column.denominator[mask])
    return num, den, (num / den if den else None)


class _JointBootstrap:
    """Item resamples drawn once and shared by every system and pair (see module doc).

    Columns (a system over a set of items) are registered first; the draw then resamples
    items ``resamples`` times, block by block as :func:`~chemgauge.eval.stats.bootstrap_interval`
    does, and keeps only each column's resampled numerator and denominator sums.
    """

    def __init__(self, columns: Sequence[Column], settings: StatSettings) -> None:
        self.settings = settings
        self._columns = columns
        self._keys: dict[tuple[int, bytes], int] = {}
        self._numerators: list[Floats] = []
        self._denominators: list[Floats] = []
        self._sums: tuple[Floats, Floats] | None = None

    def register(self, system: int, mask: Mask) -> int:
        """Index of the resampled sums of ``system`` over ``mask`` (registered once)."""
        key = (system, np.packbits(mask).tobytes())
        if key not in self._keys:
            if self._sums is not None:
                raise RuntimeError("every column must be registered before the draw")
            column = self._columns[system]
            self._keys[key] = len(self._numerators)
            self._numerators.append(np.where(mask, column.numerator, 0.0))
            self._denominators.append(np.where(mask, column.denominator, 0.0))
        return self._keys[key]

    def _draw(self) -> tuple[Floats, Floats]:
        if self._sums is None:
            n = len(self._numerators[0])
            numerators = np.column_stack(self._numerators)
            denominators = np.column_stack(self._denominators)
            rng = np.random.default_rng(self.settings.seed)
            rows = max(1, BOOTSTRAP_BLOCK // n)
            num_parts, den_parts = [], []
            for start in range(0, self.settings.resamples, rows):
                size = min(rows, self.settings.resamples - start)
                index = rng.integers(0, n, size=(size, n))
                index += np.arange(size)[:, np.newaxis] * n
                counts = np.bincount(index.ravel(), minlength=size * n)
                weights = counts.reshape(size, n).astype(np.float64)
                num_parts.append(weights @ numerators)
                den_parts.append(weights @ denominators)
            self._sums = (np.vstack(num_parts), np.vstack(den_parts))
        return self._sums

    def values(self, index: int) -> Floats:
        """Resampled values of a registered column (NaN where a resample has no denominator)."""
        num, den = self._draw()
        with np.errstate(invalid="ignore", divide="ignore"):
            out: Floats = num[:, index] / den[:, index]
        return out


def _percentiles(values: Floats, confidence: float) -> tuple[float | None, float | None]:
    finite = np.sort(values[np.isfinite(values)])
    if not len(finite):
        return None, None
    alpha = (1 - confidence) / 2
    low = float(np.quantile(finite, alpha, method="inverted_cdf"))
    high = float(np.quantile(finite, 1 - alpha, method="inverted_cdf"))
    return low, high


def bootstrap_p_value(observed: float, resampled: Floats) -> float:
    """Two-sided p-value of ``observed`` against zero from its resampled distribution shifted
    to the null: ``(1 + #{|d* - d| >= |d|}) / (1 + resamples)`` over finite resamples."""
    finite = resampled[np.isfinite(resampled)]
    if observed == 0 or not len(finite):
        return 1.0
    # A resample equal to the observed value up to rounding is not "further out".
    tolerance = 1e-12 * max(1.0, abs(observed))
    extreme = int(np.count_nonzero(np.abs(finite - observed) >= abs(observed) - tolerance))
    return min(1.0, (1 + extreme) / (1 + len(finite)))


def _value(column: Column, kind: Kind, settings: StatSettings) -> tuple[Interval, float, float]:
    """A system's value over the items it takes part in, with a Wilson interval for rates
    (the bootstrap interval of a mean is filled in by the caller)."""
    count, total, estimate = _ratio(column, column.present)
    if kind == "mean":
        method = "paired-bootstrap-percentile"
        interval = Interval(estimate, None, None, settings.confidence, method, int(total))
        return interval, count, total
    if count != round(count) or total != round(total):
        raise ValueError(f"a {kind} measure needs whole counts, got {count}/{total}")
    return wilson_interval(int(count), int(total), settings.confidence), count, total


def _hit_pair(a: int, b: int, x: Column, y: Column, settings: StatSettings) -> PairResult:
    both = x.present & y.present
    hit_x, hit_y = both & (x.numerator > 0), both & (y.numerator > 0)
    only_a = int(np.count_nonzero(hit_x & ~hit_y))
    only_b = int(np.count_nonzero(hit_y & ~hit_x))
    n = int(np.count_nonzero(both))
    difference = paired_binary_bootstrap(
        only_a,
        only_b,
        n,
        seed=settings.seed,
        resamples=settings.resamples,
        confidence=settings.confidence,
    )
    p = mcnemar_exact(only_a, only_b).p_value
    return PairResult(a, b, n, difference, only_a, only_b, "mcnemar-exact", p, p)


def _ranks(
    estimates: Sequence[float | None], labels: Sequence[str]
) -> tuple[list[int], list[int | None]]:
    """Best-first order (value descending, then label) and competition ranks (ties share,
    ``1, 2, 2, 4``); a system without a value has no rank and comes last."""
    order = sorted(
        range(len(estimates)),
        key=lambda i: (estimates[i] is None, -(estimates[i] or 0.0), labels[i], i),
    )
    ranks: list[int | None] = [None] * len(estimates)
    for position, i in enumerate(order):
        value = estimates[i]
        if value is None:
            continue
        previous = order[position - 1] if position else None
        same = previous is not None and estimates[previous] == value
        ranks[i] = ranks[previous] if same and previous is not None else position + 1
    return order, ranks


def _bootstrap_interval(
    estimate: float | None, resampled: Floats | None, n: int, settings: StatSettings
) -> Interval:
    low, high = (None, None) if resampled is None else _percentiles(resampled, settings.confidence)
    return Interval(
        estimate,
        low,
        high,
        settings.confidence,
        "paired-bootstrap-percentile",
        n,
        settings.seed,
        settings.resamples,
    )


def _bootstrap_pair(
    a: int, b: int, columns: Sequence[Column], joint: _JointBootstrap, settings: StatSettings
) -> PairResult:
    """The difference of two systems on the items both take part in, and its p-value."""
    both = columns[a].present & columns[b].present
    value_a, value_b = _ratio(columns[a], both)[2], _ratio(columns[b], both)[2]
    n = int(np.count_nonzero(both))
    if value_a is None or value_b is None:
        empty = _bootstrap_interval(None, None, n, settings)
        return PairResult(a, b, n, empty, None, None, "paired-bootstrap", 1.0, 1.0)
    observed = value_a - value_b
    resampled = joint.values(joint.register(a, both)) - joint.values(joint.register(b, both))
    p = bootstrap_p_value(observed, resampled)
    difference = _bootstrap_interval(observed, resampled, n, settings)
    return PairResult(a, b, n, difference, None, None, "paired-bootstrap", p, p)


def _bootstrap_tests(
    columns: Sequence[Column],
    values: list[tuple[Interval, float, float]],
    kind: Kind,
    settings: StatSettings,
) -> tuple[list[PairResult], int]:
    """Pairwise bootstrap tests; fills in the intervals of a ``mean`` measure (in ``values``)
    and returns how many resampled values were undefined (no denominator in the resample)."""
    pairs = [(a, b) for a in range(len(columns)) for b in range(a + 1, len(columns))]
    joint = _JointBootstrap(columns, settings)
    own = [joint.register(s, c.present) for s, c in enumerate(columns)]
    for a, b in pairs:  # registered before the one draw
        both = columns[a].present & columns[b].present
        joint.register(a, both)
        joint.register(b, both)
    undefined = 0
    if kind == "mean":
        for s, (interval, count, total) in enumerate(values):
            resampled = joint.values(own[s])
            undefined += int(np.count_nonzero(~np.isfinite(resampled)))
            values[s] = (
                _bootstrap_interval(interval.estimate, resampled, interval.n, settings),
                count,
                total,
            )
    return [_bootstrap_pair(a, b, columns, joint, settings) for a, b in pairs], undefined


def rank_systems(
    columns: Sequence[Column],
    kind: Kind,
    labels: Sequence[str],
    settings: StatSettings | None = None,
) -> Standings:
    """Values, pairwise tests (Holm over all pairs), ranks and letters of several systems
    scored on the same items (``labels`` break ties in the order and name the systems)."""
    settings = settings or StatSettings()
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    if len(labels) != len(columns) or len(set(labels)) != len(labels):
        raise ValueError("every system needs one distinct label")
    sizes = {len(c.present) for c in columns}
    if len(sizes) > 1:
        raise ValueError(f"systems scored on different numbers of items: {sorted(sizes)}")
    values = [_value(c, kind, settings) for c in columns]
    undefined = 0
    if kind == "hit":
        raw = [
            _hit_pair(a, b, columns[a], columns[b], settings)
            for a in range(len(columns))
            for b in range(a + 1, len(columns))
        ]
    elif sizes == {0} or not columns:  # no items: nothing to resample, nothing differs
        empty = _bootstrap_interval(None, None, 0, settings)
        raw = [
            PairResult(a, b, 0, empty, None, None, "paired-bootstrap", 1.0, 1.0)
            for a in range(len(columns))
            for b in range(a + 1, len(columns))
        ]
    else:
        raw, undefined = _bootstrap_tests(columns, values, kind, settings)
    adjusted = holm_adjust([r.p_value for r in raw])
    pairs = tuple(
        PairResult(r.a, r.b, r.n, r.difference, r.only_a, r.only_b, r.test, r.p_value, h)
        for r, h in zip(raw, adjusted, strict=True)
    )
    order, ranks = _ranks([v[0].estimate for v in values], labels)
    # A system without a value (no item takes part) has no rank and no letter.
    valued = [i for i in order if ranks[i] is not None]
    different = [(p.a, p.b) for p in pairs if p.significant(settings.alpha)]
    letters = compact_letters(valued, [(a, b) for a, b in different if a in valued and b in valued])
    standings = tuple(
        Standing(i, values[i][0], values[i][1], values[i][2], ranks[i], letters.get(i, ""))
        for i in order
    )
    return Standings(kind, settings, standings, pairs, undefined)
