"""Paired comparison of two runs of one family on the same items.

Runs are compared only when their family's comparison protocol (corpus hash, split
protocol...) is identical, unless forced; statistics use the items both runs scored. For each
per-row hit metric: exact McNemar on the discordant pairs, a seeded paired bootstrap interval
on the difference of hit rates (A - B), and Holm-adjusted p-values. Holm families: the hit
metrics of the overall table form one family; within a breakdown dimension, the buckets of one
metric form one family (the question "in which buckets does A differ from B on top-1?").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.metrics import estimate, interval_method
from chemgauge.eval.stats import Interval, check_seed, holm_adjust, mcnemar_exact
from chemgauge.report.adapter import FamilyAdapter, Rate
from chemgauge.report.buckets import ordered_buckets
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import Run

__all__ = [
    "COMPARISON_SCHEMA_VERSION",
    "PairedResult",
    "compare_runs",
    "holm_adjust",
    "paired_binary_bootstrap",
]

COMPARISON_SCHEMA_VERSION = 2
MAX_LISTED = 1000
Row = Mapping[str, Any]

# Bootstrap resamples a comparison may ask for: each costs 24 bytes of draws (and sorting),
# so the cap keeps memory near 24 MB; percentile intervals are stable long before it.
MIN_RESAMPLES = 100
MAX_RESAMPLES = 1_000_000


def paired_binary_bootstrap(
    only_a: int,
    only_b: int,
    n: int,
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> Interval:
    """Percentile interval of rate(A) - rate(B) from resampling the n paired items jointly.

    For binary outcomes an item resample is fully described by how many drawn items are
    only-A, only-B or concordant, which is a multinomial draw: the same distribution as
    indexing items with replacement, in O(resamples) memory instead of O(resamples * n).
    """
    if n == 0:
        return Interval(
            None, None, None, confidence, "paired-bootstrap-multinomial", 0, seed, resamples
        )
    if only_a < 0 or only_b < 0 or only_a + only_b > n:
        raise ValueError(f"need 0 <= only_a + only_b <= n, got {only_a} + {only_b} > {n}")
    rng = np.random.default_rng(seed)
    p_a, p_b = only_a / n, only_b / n
    draws = rng.multinomial(n, [p_a, p_b, max(0.0, 1.0 - p_a - p_b)], size=resamples)
    diffs = np.sort((draws[:, 0] - draws[:, 1]) / n)
    alpha = (1 - confidence) / 2
    low = float(np.quantile(diffs, alpha, method="inverted_cdf"))
    high = float(np.quantile(diffs, 1 - alpha, method="inverted_cdf"))
    return Interval(
        (only_a - only_b) / n,
        low,
        high,
        confidence,
        "paired-bootstrap-multinomial",
        n,
        seed,
        resamples,
    )


@dataclass(frozen=True, slots=True)
class PairedResult:
    """One paired test: counts, both rates, the difference interval, raw and Holm p-values."""

    metric: str
    bucket: str | None
    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    difference: Interval
    p_value: float
    p_holm: float

    @property
    def rate_a(self) -> Rate:
        """Run A's hit rate on the paired items."""
        return Rate.wilson("A", self.both + self.only_a, self.n)

    @property
    def rate_b(self) -> Rate:
        """Run B's hit rate on the paired items."""
        return Rate.wilson("B", self.both + self.only_b, self.n)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for JSON output."""
        d = self.difference
        return {
            "metric": self.metric,
            "bucket": self.bucket,
            "n": self.n,
            "both": self.both,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "neither": self.neither,
            "rate_a": self.rate_a.to_dict(),
            "rate_b": self.rate_b.to_dict(),
            "difference": estimate(
                d.estimate,
                d.n,
                (d.low, d.high),
                method=interval_method("paired_bootstrap", d.confidence),
            ),
            "mcnemar_p": self.p_value,
            "holm_p": self.p_holm,
        }


def _index(run: Run, adapter: FamilyAdapter) -> dict[str, Row]:
    run.require_clean_rows()
    out: dict[str, Row] = {}
    for row in run.rows:
        try:
            key = adapter.item_key(row)
        except (KeyError, TypeError) as exc:
            raise InputFileError(f"a row lacks the item key ({exc})", path=run.rows_path) from None
        if key in out:
            raise InputFileError(
                f"item {key!r} appears twice; compare needs one row per item", path=run.rows_path
            )
        out[key] = row
    return out


def _hits(
    adapter: FamilyAdapter, run: Run, rows: Mapping[str, Row], keys: Sequence[str]
) -> dict[str, Mapping[str, bool | None]]:
    try:
        return {k: adapter.hits(rows[k], run) for k in keys}
    except (KeyError, TypeError, ValueError) as exc:
        raise InputFileError(
            f"rows do not have the {run.family} row shape ({type(exc).__name__}: {exc})",
            path=run.rows_path,
        ) from None


def _protocol_check(adapter: FamilyAdapter, a: Run, b: Run, force: bool) -> dict[str, Any]:
    pa = adapter.comparison_protocol(a)
    pb = adapter.comparison_protocol(b)
    # Refused: a key the runs disagree on (a value against None too) or that both leave unknown.
    refused = sorted(k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k) or pa.get(k) is None)
    if refused and not force:
        detail = "; ".join(
            f"{k}: {pa.get(k)!r} ({a.report_path}) vs {pb.get(k)!r} ({b.report_path})"
            for k in refused
        )
        raise ConfigError(
            "refusing to compare runs that are not over the same items under the same "
            f"protocol: {detail}. Pass --force to compare the shared items anyway."
        )
    return {"a": pa, "b": pb, "match": not refused, "forced": force}


def _paired_counts(pairs: Sequence[tuple[bool, bool]]) -> tuple[int, int, int, int]:
    both = sum(x and y for x, y in pairs)
    only_a = sum(x and not y for x, y in pairs)
    only_b = sum(y and not x for x, y in pairs)
    return both, only_a, only_b, len(pairs) - both - only_a - only_b


def _tests(
    groups: Sequence[tuple[str | None, Sequence[tuple[bool, bool]]]],
    metric: str,
    *,
    seed: int,
    resamples: int,
) -> list[PairedResult]:
    """Paired tests for each group of one metric, Holm-adjusted across the groups."""
    raw = []
    for bucket, pairs in groups:
        both, only_a, only_b, neither = _paired_counts(pairs)
        interval = paired_binary_bootstrap(
            only_a, only_b, len(pairs), seed=seed, resamples=resamples
        )
        p = mcnemar_exact(only_a, only_b).p_value
        raw.append((bucket, len(pairs), both, only_a, only_b, neither, interval, p))
    adjusted = holm_adjust([r[7] for r in raw])
    return [PairedResult(metric, *r, p_holm=h) for r, h in zip(raw, adjusted, strict=True)]


def compare_runs(
    a: Run,
    b: Run,
    *,
    force: bool = False,
    seed: int = 0,
    resamples: int = 2000,
) -> dict[str, Any]:
    """The paired comparison of run A against run B as a JSON-ready mapping."""
    if a.family != b.family:
        raise ConfigError(
            f"cannot compare a {a.family!r} run ({a.report_path}) with a {b.family!r} run "
            f"({b.report_path})"
        )
    if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise ConfigError(
            f"--resamples must be between {MIN_RESAMPLES} and {MAX_RESAMPLES:,} (memory and time "
            f"grow with it), got {resamples:,}"
        )
    check_seed(seed)
    adapter = get_adapter(a.family)
    # Unreadable rows first: a truncated file must not pass for "another corpus".
    rows_a, rows_b = _index(a, adapter), _index(b, adapter)
    protocol = _protocol_check(adapter, a, b, force)
    shared = [k for k in rows_a if k in rows_b]
    if not shared:
        raise ConfigError(f"the runs share no items ({a.rows_path} vs {b.rows_path})")
    metrics_a, metrics_b = adapter.hit_metrics(a), adapter.hit_metrics(b)
    metrics = [m for m in metrics_a if m in set(metrics_b)]
    hits_a = _hits(adapter, a, rows_a, shared)
    hits_b = _hits(adapter, b, rows_b, shared)

    def pairs_for(metric: str, keys: Sequence[str]) -> list[tuple[str, bool, bool]]:
        out = []
        for k in keys:
            x, y = hits_a[k].get(metric), hits_b[k].get(metric)
            if x is not None and y is not None:
                out.append((k, bool(x), bool(y)))
        return out

    overall_groups = {m: pairs_for(m, shared) for m in metrics}
    overall_raw = [
        _tests(
            [(None, [(x, y) for _, x, y in overall_groups[m]])], m, seed=seed, resamples=resamples
        )[0]
        for m in metrics
    ]
    holm = holm_adjust([r.p_value for r in overall_raw])
    overall = [
        PairedResult(
            r.metric, None, r.n, r.both, r.only_a, r.only_b, r.neither, r.difference, r.p_value, h
        )
        for r, h in zip(overall_raw, holm, strict=True)
    ]

    buckets: dict[str, dict[str, list[str]]] = {}
    for k in shared:
        for dim, bucket in adapter.breakdowns(rows_a[k]).items():
            buckets.setdefault(dim, {}).setdefault(bucket, []).append(k)
    breakdowns: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for dim, members in buckets.items():
        breakdowns[dim] = {}
        for m in metrics:
            groups = [
                (bucket, [(x, y) for _, x, y in pairs_for(m, members[bucket])])
                for bucket in ordered_buckets(members)
            ]
            breakdowns[dim][m] = [
                r.to_dict() for r in _tests(groups, m, seed=seed, resamples=resamples)
            ]

    discordant = {
        m: {
            "only_a": [k for k, x, y in overall_groups[m] if x and not y][:MAX_LISTED],
            "only_b": [k for k, x, y in overall_groups[m] if y and not x][:MAX_LISTED],
        }
        for m in metrics
    }

    def describe(run: Run) -> dict[str, Any]:
        return {
            "label": run.label,
            "report": str(run.report_path),
            "rows": str(run.rows_path),
            "reproducibility_sha256": run.envelope.reproducibility_sha256,
        }

    return {
        "schema_version": COMPARISON_SCHEMA_VERSION,
        "family": a.family,
        "run_a": describe(a),
        "run_b": describe(b),
        "protocol": protocol,
        "items": {
            "shared": len(shared),
            "only_in_a": len(rows_a) - len(shared),
            "only_in_b": len(rows_b) - len(shared),
        },
        "settings": {
            "seed": seed,
            "resamples": resamples,
            "confidence": 0.95,
            "difference": "rate(A) - rate(B) on paired items",
            "holm_families": "overall: the hit metrics; breakdowns: the buckets of one metric",
            "breakdown_buckets_from": "run A",
        },
        "overall": [r.to_dict() for r in overall],
        "breakdowns": breakdowns,
        "discordant": discordant,
        "discordant_listed_max": MAX_LISTED,
        "warnings": _same_run_warnings(a, b) + _unpaired_metric_warnings(metrics_a, metrics_b),
    }


def _unpaired_metric_warnings(metrics_a: Sequence[str], metrics_b: Sequence[str]) -> list[str]:
    """A hit metric one run has and the other lacks (a lens computed on one side only) is
    named: it cannot be paired, and leaving it out must not go unannounced."""
    out = []
    for side, mine, theirs in (("A", metrics_a, metrics_b), ("B", metrics_b, metrics_a)):
        alone = [m for m in mine if m not in set(theirs)]
        if alone:
            out.append(f"metrics only in {side}, not compared: {', '.join(alone)}")
    return out


def _same_run_warnings(a: Run, b: Run) -> list[str]:
    """A comparison of a run with itself (or with a copy of its rows) can find nothing."""
    if a.report_path.resolve() == b.report_path.resolve():
        return [f"A and B are the same run ({a.report_path}): every difference is 0"]
    if a.envelope.reproducibility_sha256 == b.envelope.reproducibility_sha256:
        return [
            "A and B have identical rows (the same reproducibility_sha256): every difference is 0"
        ]
    return []
