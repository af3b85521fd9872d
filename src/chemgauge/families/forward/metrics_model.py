"""The typed ``metrics`` block of a forward report: what ``report.json`` promises, checked.

The runner validates the block it built through :class:`ForwardMetrics` before writing it,
``chemgauge report``/``verify``/``board`` refuse a report whose block does not validate, and
the block's JSON Schema ships beside the package (``metrics.v<N>.schema.json``, written by
``python -m chemgauge.families.forward.metrics_model``; a test keeps the file equal to this
model). Every rate is a :class:`~chemgauge.eval.metrics.Rate` (a top-k
one a :class:`~chemgauge.eval.metrics.RateAtK`), MRR and nDCG@10 are
:class:`~chemgauge.eval.metrics.Estimate` objects with their bootstrap interval.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from chemgauge.eval.metrics import Estimate, MetricsModel, Rate, RateAtK, write_metrics_schema

__all__ = [
    "Aggregate",
    "ForwardMetrics",
    "Ranking",
    "write_schema",
]


class Distribution(MetricsModel):
    """Nearest-rank summary of a set of values; every statistic null when ``n`` is 0."""

    n: int = Field(ge=0)
    min: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    max: float | None
    mean: float | None


class Ranking(MetricsModel):
    """Top-k hit rates, MRR and nDCG@10 over ``n`` rows (a miss scores 0)."""

    n: int = Field(ge=0)
    top1_hit_rate: RateAtK
    top5_hit_rate: RateAtK
    top10_hit_rate: RateAtK
    mrr: Estimate = Field(description="Mean reciprocal rank of the first correct candidate.")
    ndcg_at_10: Estimate = Field(description="Multi-positive nDCG@10.")


class ConditionalRanking(Ranking):
    """:class:`Ranking` over covered rows only, with where the first correct candidate sits
    (0-based rank; null when no row is covered)."""

    mean_best_correct_rank: float | None
    median_best_correct_rank: float | None


class Stereo(MetricsModel):
    """Stereo-aware and stereo-ignored top-10 outcomes over valid rows."""

    stereochemistry_aware_top10_rate: RateAtK
    stereochemistry_ignored_top10_rate: RateAtK
    stereo_only_hits: int = Field(ge=0)
    unsupported: int = Field(ge=0)


class Aggregate(MetricsModel):
    """Every metric of the protocol over one group of rows (all, a split, a bucket)."""

    n_rows: int = Field(ge=0)
    n_valid: int = Field(ge=0)
    n_covered: int = Field(ge=0)
    valid_input_rate: Rate = Field(description="Valid rows over all rows.")
    proposal_coverage: Rate = Field(description="Covered rows over valid rows.")
    conditional: ConditionalRanking = Field(description="Over covered rows only.")
    end_to_end: Ranking = Field(description="Over every valid row; a coverage miss counts 0.")
    stereo: Stereo
    n_raw_outcomes: int = Field(ge=0)
    invalid_outcomes_rejected: int = Field(ge=0)
    no_op_outcomes_rejected: int = Field(ge=0)
    invalid_product_rate: Rate = Field(description="Invalid outcomes over raw outcomes.")
    no_op_rate: Rate = Field(description="No-op outcomes over raw outcomes.")
    prediction_errors: int = Field(ge=0)
    capped_unknown: int = Field(ge=0)
    candidate_count_distribution: Distribution
    latency_ms: Distribution = Field(description="Timing only: outside every determinism claim.")


class BySplit(MetricsModel):
    """One aggregate per split (invalid rows belong to none)."""

    train: Aggregate
    val: Aggregate
    test: Aggregate


class Headline(MetricsModel):
    """Which rows lead: ``held_out`` when any row is in-sample (from the rows' marks)."""

    basis: Literal["held_out", "overall"]
    held_out_splits: list[str]
    in_sample_splits: list[str] = Field(description="Splits with at least one in-sample row.")
    overall_includes_in_sample_rows: bool
    in_sample_rows: dict[str, int] = Field(description="In-sample rows per split.")
    in_sample_by_reason: dict[str, int] = Field(
        description="template_source or near_duplicate_of_source."
    )
    warnings: list[str] = Field(description="In-sample val or test rows, when any.")


class CorpusWarning(MetricsModel):
    """One counted corpus problem, as listed (the list is bounded, the counters exact)."""

    code: str
    line: int
    reaction_id: str | None
    message: str


class Corpus(MetricsModel):
    """The corpus schema version, its exact counters and the first warnings."""

    schema_version: int
    stats: dict[str, int]
    warnings: list[CorpusWarning]
    warnings_truncated: bool


class RefusedTemplate(MetricsModel):
    """A template that failed a recomputed check, and why."""

    template_id: str
    reason: str
    detail: str


class TemplateSources(MetricsModel):
    """Under ``train-extracted``: every template checked by recomputation."""

    verified: bool = Field(description="No template was refused.")
    method: Literal["rederived", "extracted_in_run"]
    source_reactions: int = Field(ge=0, description="Distinct sources of accepted templates.")
    split: str
    templates: int = Field(ge=0, description="Templates whose sources were checked.")
    templates_accepted: int = Field(ge=0)
    templates_refused: int = Field(ge=0)
    refused_by_reason: dict[str, int]
    refused: list[RefusedTemplate] = Field(description="The first refused templates.")
    checked_rules_file_sha256: str | None = Field(description="The rule file checked.")


class Rules(MetricsModel):
    """The rule set the run used."""

    rules_loaded: int = Field(ge=0)
    graph_rules_skipped: int = Field(ge=0)
    rules_content_sha256: str
    rules_file_sha256: str | None
    template_sources: TemplateSources | None


class Bootstrap(MetricsModel):
    """Seed and size of the MRR and nDCG@10 intervals (they decide the report, not rows)."""

    seed: int
    resamples: int = Field(ge=1)
    confidence: float = Field(gt=0, lt=1)
    method: str


class ReactionsBySource(MetricsModel):
    """Reactions taking part in an overlap, by where their group key came from."""

    explicit: int = Field(ge=0)
    fallback: int = Field(ge=0)


class SplitPair(MetricsModel):
    """Keys shared by one pair of splits and the reactions involved."""

    shared: int = Field(ge=0)
    reactions: ReactionsBySource


class ExampleLine(MetricsModel):
    """One corpus line of a shared key."""

    line: int
    reaction_id: str | None
    group_key_source: str


class LeakageExample(MetricsModel):
    """A key found in more than one split, with its lines per split."""

    smiles: str
    splits: dict[str, list[ExampleLine]]


class LeakageKind(MetricsModel):
    """The audit of one kind of key (reactant sets or products)."""

    distinct: int = Field(ge=0)
    shared_across_splits: int = Field(ge=0)
    by_split_pair: dict[str, SplitPair]
    examples: list[LeakageExample]
    examples_truncated: bool


class FrequentMolecule(MetricsModel):
    """A molecule frequent enough in the corpus to be a spectator."""

    smiles: str
    reactions: int = Field(ge=0)


class SpectatorRule(MetricsModel):
    """What near-duplicate comparison removes, with its threshold stated."""

    rule: str
    share_threshold: float
    min_reactions: int = Field(ge=0)
    reactions: int = Field(ge=0)
    frequent_molecules: list[FrequentMolecule]
    frequent_molecules_total: int = Field(ge=0)


class NearDuplicates(MetricsModel):
    """Keys shared across splits once spectators are removed and stereo ignored, counted only
    where the exact keys differ (apart from the exact counts)."""

    spectators: SpectatorRule
    reactant_sets: LeakageKind
    products: LeakageKind


class Leakage(MetricsModel):
    """Reactant sets and product multisets found in more than one split."""

    scheme: str
    reactant_sets: LeakageKind
    products: LeakageKind
    near_duplicates: NearDuplicates
    warnings: list[str]


class Diagnostics(MetricsModel):
    """Report-wide totals, each transcribed from an already computed source."""

    warning_counts_by_code: dict[str, int]
    template_application_errors: int = Field(ge=0)
    template_application_warnings: int = Field(ge=0)
    graph_rules_skipped: int = Field(ge=0)
    templates_attempted: int = Field(ge=0)
    templates_matched: int = Field(ge=0)
    invalid_outcomes_rejected: int = Field(ge=0)
    no_op_outcomes_rejected: int = Field(ge=0)
    raw_outcomes: int = Field(ge=0)
    prediction_errors: int = Field(ge=0)
    capped_unknown: int = Field(ge=0)
    input_invalid_by_reason: dict[str, int]
    template_parse_rejections_by_reason: dict[str, int]


class ForwardMetrics(MetricsModel):
    """The ``metrics`` block of a forward report (``chemgauge forward benchmark``)."""

    corpus: Corpus
    rules: Rules
    bootstrap: Bootstrap
    headline: Headline
    held_out: Aggregate = Field(description="The val and test rows that are not in-sample.")
    overall: Aggregate
    by_split: BySplit
    leakage: Leakage
    breakdowns: dict[str, dict[str, Aggregate]] = Field(
        description="One aggregate per bucket of each breakdown dimension."
    )
    diagnostics: Diagnostics
    conventions: dict[str, Any] | None = Field(
        default=None,
        description="An outside system's run only: its answers (answered, missing, error) and "
        "every ranking convention's top-k, MRR and nDCG@10 with intervals, by name, with the "
        "headline convention the rows are scored on.",
    )


def write_schema(path: Path) -> None:
    """Write the shipped JSON Schema of :class:`ForwardMetrics` to ``path``."""
    write_metrics_schema(ForwardMetrics, "chemgauge forward metrics", path)


if __name__ == "__main__":  # python -m chemgauge.families.forward.metrics_model
    from chemgauge.families.forward.family import FAMILY

    write_schema(FAMILY.metrics_schema_path())
