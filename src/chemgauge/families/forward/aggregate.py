"""Aggregates: pure functions of rows, overall, per split and per breakdown bucket.

Denominators are named and never mixed: ``valid_input_rate`` over all rows,
``proposal_coverage`` and every ``end_to_end`` metric over valid rows (a coverage miss
counts 0, never excluded), every ``conditional`` metric over covered rows only. Every rate
is the one :func:`chemgauge.eval.metrics.rate` shape (count, n, value and a 95% Wilson
interval; a top-k rate adds ``k``); MRR and nDCG@10 are :func:`~chemgauge.eval.metrics.
estimate` objects with a seeded percentile bootstrap interval (:class:`Bootstrap`, recorded
beside the metrics). ``held_out`` is the val and test rows that are not in-sample (no
applied template names them, or a near-duplicate of them, as a source: see
:mod:`~chemgauge.families.forward.insample`).

Every aggregate is computed from a :class:`RowFacts` table (a few numbers and bucket codes a
row), so the runner folds rows in while streaming them and never holds them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemgauge.eval.metrics import estimate, interval_method, rate
from chemgauge.eval.ranking import distribution_of_sorted
from chemgauge.eval.stats import bootstrap_mean_interval, check_seed
from chemgauge.families.forward.insample import IN_SAMPLE_REASONS

__all__ = [
    "BREAKDOWN_DIMENSIONS",
    "HELD_OUT_SPLITS",
    "Bootstrap",
    "RowFacts",
    "aggregate",
    "arity_bucket",
    "breakdowns",
    "by_split",
    "held_out",
    "pool_size_bucket",
]

Row = Mapping[str, Any]
MISSING = "<missing>"
SPLITS = ("train", "val", "test")
HELD_OUT_SPLITS = ("val", "test")


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """Seed and size of the MRR and nDCG@10 bootstrap intervals (every block uses the seed)."""

    seed: int = 0
    resamples: int = 2000
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_seed(self.seed)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for the report's config."""
        return {
            "seed": self.seed,
            "resamples": self.resamples,
            "confidence": self.confidence,
            "method": "bootstrap-percentile-multinomial",
        }

    def estimate(self, mean: float | None, values: NDArray[np.float64]) -> dict[str, Any]:
        """``mean`` of ``values`` as an estimate with the bootstrap interval of that mean
        (``method`` ``bootstrap95`` at 95%; value and interval null when there are none)."""
        interval = bootstrap_mean_interval(
            values, seed=self.seed, resamples=self.resamples, confidence=self.confidence
        )
        method = interval_method("bootstrap", self.confidence)
        return estimate(mean, len(values), interval, method=method)


DEFAULT_BOOTSTRAP = Bootstrap()


def arity_bucket(row: Row) -> str:
    """``1``/``2``/``3+``, ``mixed:{min}-{max}`` (each end bucketed), or ``<missing>``."""
    low, high = row["accepted_product_count_min"], row["accepted_product_count_max"]
    if low is None or high is None:
        return MISSING

    def one(n: int) -> str:
        return "3+" if n >= 3 else str(n)

    if low == high:
        return one(low)
    return f"mixed:{one(low)}-{one(high)}"


def pool_size_bucket(row: Row) -> str:
    """Candidate pool size as ``0``, ``1``, ``2-5``, ``6-10``, ``11-50``, ``51+`` (``<missing>``
    when no pool was produced)."""
    if row["input_status"] != "valid" or row["proposal_status"] == "error":
        return MISSING
    n = int(row["candidate_count"])
    for high, label in ((0, "0"), (1, "1"), (5, "2-5"), (10, "6-10"), (50, "11-50")):
        if n <= high:
            return label
    return "51+"


def _num_reactants(row: Row) -> str:
    n = row["num_reactants"]
    return MISSING if n is None else ("4+" if n >= 4 else str(n))


def _stereo_presence(row: Row) -> str:
    flag = row["has_stereochemistry"]
    return MISSING if flag is None else ("stereo" if flag else "no_stereo")


def _field(name: str, row: Row) -> str:
    """The row's ``name`` field as a label (``<missing>`` when null or absent)."""
    value = row.get(name)
    return MISSING if value is None else str(value)


BREAKDOWN_DIMENSIONS: dict[str, Callable[[Row], str]] = {
    "reaction_class": partial(_field, "reaction_class"),
    "num_reactants": _num_reactants,
    "accepted_product_arity": arity_bucket,
    "stereochemistry_presence": _stereo_presence,
    "template_source": lambda row: str(row["provenance"]["template_source"]),
    "candidate_pool_size": pool_size_bucket,
    "failure_reason": partial(_field, "failure_reason"),
    "input_status": partial(_field, "input_status"),
    "proposal_status": partial(_field, "proposal_status"),
    "ranking_status": partial(_field, "ranking_status"),
    "stereo_status": partial(_field, "stereo_status"),
}


class _Codes:
    """One dimension's labels, interned: a one-byte code per row (four once past 256 labels)."""

    __slots__ = ("codes", "labels")

    def __init__(self) -> None:
        self.labels: dict[str, int] = {}
        self.codes = array("B")

    def add(self, label: str) -> None:
        code = self.labels.setdefault(label, len(self.labels))
        if code > 255 and self.codes.typecode == "B":
            self.codes = array("I", self.codes)
        self.codes.append(code)

    def view(self) -> NDArray[np.integer[Any]]:
        dtype = np.uint8 if self.codes.typecode == "B" else np.uint32
        return np.frombuffer(self.codes, dtype=dtype)


# Per-row flag bits: the boolean facts the metrics count.
_VALID, _COVERED, _ERROR, _CAPPED, _AWARE_HIT, _IGNORED_HIT, _STEREO_ONLY, _UNSUPPORTED = (
    1 << bit for bit in range(8)
)
_PROPOSAL_FLAGS = {"covered": _COVERED, "error": _ERROR, "capped_unknown": _CAPPED}
_STEREO_FLAGS = {"stereo_only_hit": _STEREO_ONLY, "unsupported": _UNSUPPORTED}
Mask = NDArray[np.bool_]


def _count(mask: Mask) -> int:
    return int(np.count_nonzero(mask))


def _mean(values: NDArray[np.float64], n: int) -> float | None:
    """``fsum(values) / n`` (``values`` may leave out exact zeros: fsum is exactly rounded)."""
    return math.fsum(values) / n if n else None


def _spread(values: NDArray[Any]) -> dict[str, Any]:
    ordered = array("d", np.sort(values.astype(np.float64)).tobytes())
    return distribution_of_sorted(ordered).to_dict()


class RowFacts:
    """The numbers every aggregate needs, about 50 bytes a row, never the rows themselves.

    The runner folds each row in as it streams past (:meth:`add`), so memory grows by a few
    bytes a row rather than by the row; the row-list functions below build the same table,
    so there is one implementation of every metric. Sums are exact (integers, or ``fsum``,
    which is order-independent), so results equal a computation over the held rows.
    """

    def __init__(
        self, *, dimensions: bool = True, bootstrap: Bootstrap = DEFAULT_BOOTSTRAP
    ) -> None:
        self.bootstrap = bootstrap
        self._flags = array("B")
        self._best = array("i")  # best_correct_rank, -1 for none
        self._ndcg = array("d")
        self._raw = array("i")
        self._invalid = array("i")
        self._no_op = array("i")
        self._candidates = array("i")
        self._elapsed = array("d")  # NaN for none
        self._split = _Codes()
        self._in_sample = array("B")  # 0 out of sample, else 1 + the reason's index
        self._dims = {name: _Codes() for name in BREAKDOWN_DIMENSIONS} if dimensions else {}

    @classmethod
    def of(
        cls,
        rows: Iterable[Row],
        *,
        dimensions: bool = True,
        bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    ) -> RowFacts:
        """The table of a sequence of rows."""
        facts = cls(dimensions=dimensions, bootstrap=bootstrap)
        for row in rows:
            facts.add(row)
        return facts

    def __len__(self) -> int:
        return len(self._flags)

    def add(self, row: Row) -> None:
        """Fold one row in."""
        flags = _VALID if row["input_status"] == "valid" else 0
        flags |= _PROPOSAL_FLAGS.get(row["proposal_status"], 0)
        flags |= _STEREO_FLAGS.get(row["stereo_status"], 0)
        if row["stereochemistry_aware_hit"]:
            flags |= _AWARE_HIT
        if row["stereochemistry_ignored_outcome"] == "hit":
            flags |= _IGNORED_HIT
        self._flags.append(flags)
        best = row["best_correct_rank"]
        self._best.append(-1 if best is None else best)
        self._ndcg.append(float(row["ndcg_at_10"]))
        self._raw.append(row["raw_outcomes"])
        self._invalid.append(row["invalid_candidate_count"])
        self._no_op.append(row["no_op_candidate_count"])
        self._candidates.append(row["candidate_count"])
        elapsed = row["elapsed_ms"]
        self._elapsed.append(math.nan if elapsed is None else float(elapsed))
        self._split.add(str(row["split"]))
        reason = row.get("in_sample_reason")
        self._in_sample.append(0 if reason is None else 1 + IN_SAMPLE_REASONS.index(reason))
        for name, codes in self._dims.items():
            codes.add(BREAKDOWN_DIMENSIONS[name](row))

    def _has(self, bit: int) -> Mask:
        flags: NDArray[np.uint8] = np.frombuffer(self._flags, dtype=np.uint8)
        mask: Mask = (flags & bit) != 0
        return mask

    def _column(self, column: array[Any]) -> NDArray[Any]:
        return np.frombuffer(column, dtype=np.int32 if column.typecode == "i" else np.float64)

    def _ranking_block(self, rows: Mask, *, conditional: bool) -> dict[str, Any]:
        n = _count(rows)
        best = self._column(self._best)[rows]
        hit = best >= 0
        block: dict[str, Any] = {"n": n}
        for k in (1, 5, 10):
            block[f"top{k}_hit_rate"] = rate(_count(hit & (best < k)), n, k=k)
        reciprocal = np.zeros(n)  # float64
        reciprocal[hit] = 1.0 / (best[hit] + 1.0)
        ndcg = self._column(self._ndcg)[rows]
        # a miss adds an exact 0.0 to the mean reciprocal rank
        block["mrr"] = self.bootstrap.estimate(_mean(reciprocal[hit], n), reciprocal)
        block["ndcg_at_10"] = self.bootstrap.estimate(_mean(ndcg, n), ndcg)
        if conditional:
            spread = _spread(best[hit])
            block["mean_best_correct_rank"] = spread["mean"]
            block["median_best_correct_rank"] = spread["p50"]
        return block

    def aggregate(self, rows: Mask | None = None) -> dict[str, Any]:
        """Every metric of the protocol over the rows ``rows`` selects (default: all)."""
        if rows is None:
            rows = np.ones(len(self), dtype=np.bool_)
        valid = rows & self._has(_VALID)
        covered = valid & self._has(_COVERED)
        pooled = valid & ~self._has(_ERROR)
        n_rows, n_valid, n_covered = _count(rows), _count(valid), _count(covered)
        n_raw = int(self._column(self._raw)[valid].sum(dtype=np.int64))
        invalid = int(self._column(self._invalid)[valid].sum(dtype=np.int64))
        no_op = int(self._column(self._no_op)[valid].sum(dtype=np.int64))
        elapsed = self._column(self._elapsed)[valid]
        return {
            "n_rows": n_rows,
            "n_valid": n_valid,
            "n_covered": n_covered,
            "valid_input_rate": rate(n_valid, n_rows),
            "proposal_coverage": rate(n_covered, n_valid),
            "conditional": self._ranking_block(covered, conditional=True),
            "end_to_end": self._ranking_block(valid, conditional=False),
            "stereo": {
                "stereochemistry_aware_top10_rate": rate(
                    _count(valid & self._has(_AWARE_HIT)), n_valid, k=10
                ),
                "stereochemistry_ignored_top10_rate": rate(
                    _count(valid & self._has(_IGNORED_HIT)), n_valid, k=10
                ),
                "stereo_only_hits": _count(valid & self._has(_STEREO_ONLY)),
                "unsupported": _count(valid & self._has(_UNSUPPORTED)),
            },
            "n_raw_outcomes": n_raw,
            "invalid_outcomes_rejected": invalid,
            "no_op_outcomes_rejected": no_op,
            "invalid_product_rate": rate(invalid, n_raw),
            "no_op_rate": rate(no_op, n_raw),
            "prediction_errors": _count(valid & self._has(_ERROR)),
            "capped_unknown": _count(valid & self._has(_CAPPED)),
            "candidate_count_distribution": _spread(self._column(self._candidates)[pooled]),
            "latency_ms": _spread(elapsed[~np.isnan(elapsed)]),
        }

    def _in_splits(self, splits: Iterable[str]) -> Mask:
        codes = self._split.view()
        mask: Mask = np.zeros(len(self), dtype=np.bool_)
        for split in splits:
            code = self._split.labels.get(split)
            if code is not None:
                mask |= codes == code
        return mask

    def by_split(self) -> dict[str, Any]:
        """One aggregate per split; ``unknown`` (invalid) rows are in none of them."""
        return {split: self.aggregate(self._in_splits((split,))) for split in SPLITS}

    def _out_of_sample(self) -> Mask:
        mask: Mask = np.frombuffer(self._in_sample, dtype=np.uint8) == 0
        return mask

    def held_out(self) -> dict[str, Any]:
        """One aggregate over the val and test rows that are not in-sample."""
        return self.aggregate(self._in_splits(HELD_OUT_SPLITS) & self._out_of_sample())

    def in_sample_counts(self) -> dict[str, dict[str, int]]:
        """In-sample rows per split and per reason (all rows, and val + test rows)."""
        codes = np.frombuffer(self._in_sample, dtype=np.uint8)
        held = self._in_splits(HELD_OUT_SPLITS)
        return {
            "by_split": {s: _count(self._in_splits((s,)) & (codes > 0)) for s in SPLITS},
            "by_reason": {r: _count(codes == i + 1) for i, r in enumerate(IN_SAMPLE_REASONS)},
            "held_out_by_reason": {
                r: _count(held & (codes == i + 1)) for i, r in enumerate(IN_SAMPLE_REASONS)
            },
        }

    def breakdowns(self) -> dict[str, dict[str, Any]]:
        """One aggregate per bucket of every breakdown dimension (buckets sorted by name)."""
        if not self._dims:
            raise ValueError("this table was built without breakdown dimensions")
        out: dict[str, dict[str, Any]] = {}
        for name, codes in self._dims.items():
            view = codes.view()
            out[name] = {
                label: self.aggregate(view == codes.labels[label]) for label in sorted(codes.labels)
            }
        return out


def aggregate(rows: Iterable[Row], bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> dict[str, Any]:
    """Every metric of the protocol over one group of rows."""
    return RowFacts.of(rows, dimensions=False, bootstrap=bootstrap).aggregate()


def by_split(rows: Iterable[Row], bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> dict[str, Any]:
    """One aggregate per split; ``unknown`` (invalid) rows are in none of them."""
    return RowFacts.of(rows, dimensions=False, bootstrap=bootstrap).by_split()


def held_out(rows: Iterable[Row], bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> dict[str, Any]:
    """One aggregate over the val and test rows that are not in-sample."""
    return RowFacts.of(rows, dimensions=False, bootstrap=bootstrap).held_out()


def breakdowns(
    rows: Iterable[Row], bootstrap: Bootstrap = DEFAULT_BOOTSTRAP
) -> dict[str, dict[str, Any]]:
    """One aggregate per bucket of every breakdown dimension (buckets sorted by name)."""
    return RowFacts.of(rows, bootstrap=bootstrap).breakdowns()
