"""The typed ``metrics`` block of a retro report (``family_schema_version`` 3).

Every rate is a :class:`~chemgauge.eval.metrics.Rate` (a top-k rate a
:class:`~chemgauge.eval.metrics.RateAtK`), MRR an :class:`~chemgauge.eval.metrics.Estimate`.
The block names what it holds (``conventions``, ``matchers``, ``k``) and the model checks
that ``accuracy`` and every class of ``by_class`` hold exactly that grid, so a reader finds a
number by those fields, never by parsing a metric's name. The published JSON Schema
(``metrics.v3.schema.json`` beside this module) is generated from :class:`RetroMetrics`::

    python -c "from chemgauge.families.retro.metrics_model import write_schema; write_schema()"
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from chemgauge.eval.metrics import Estimate, MetricsModel, Rate, RateAtK, write_metrics_schema

__all__ = [
    "Accuracy",
    "RankBlock",
    "RetroMetrics",
    "write_schema",
]


class RankBlock(MetricsModel):
    """Accuracy of one (convention, matcher) pair over ``n`` targets."""

    n: int = Field(ge=0, description="Targets (every target, a miss included).")
    top_k: list[RateAtK] = Field(description="Cumulative top-k rates, one per reported k.")
    curve: list[float | None] = Field(
        description="Top-k rate for k = 1..num_top_results (values only; null when n == 0)."
    )
    mrr: Estimate = Field(description="Mean reciprocal rank, 1/(rank+1), 0 for a miss.")
    misses: int = Field(ge=0, description="Targets with no correct output.")


#: convention -> matcher -> :class:`RankBlock`.
Accuracy = dict[str, dict[str, RankBlock]]


class FlaggedAtRank(MetricsModel):
    """Outputs flagged (invalid, or duplicate) among those present at one rank."""

    rank: int = Field(ge=1, description="1-based raw rank.")
    share: Rate = Field(description="Flagged outputs over outputs present at this rank.")


class CountDistribution(MetricsModel):
    """Per-target output counts: nearest-rank percentiles, mean (nulls when n == 0)."""

    n: int = Field(ge=0)
    min: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    max: float | None
    mean: float | None


class Outputs(MetricsModel):
    """What the model returned, over every output of every scored target."""

    total: int = Field(ge=0, description="Outputs scored (after the num_top_results cut).")
    invalid_rate: Rate = Field(description="Invalid outputs over all outputs.")
    invalid_by_reason: dict[str, int] = Field(description="Invalid outputs by reason.")
    duplicate_rate: Rate = Field(description="Repeated reactant sets over all outputs.")
    product_in_reactants_rate: Rate = Field(
        description="Outputs listing the product among their own reactants (still ranked)."
    )
    cut_at_num_top_results: int = Field(ge=0, description="Outputs beyond num_top_results.")
    per_target_raw: CountDistribution
    per_target_valid_unique: CountDistribution
    invalid_by_rank: list[FlaggedAtRank]
    duplicate_by_rank: list[FlaggedAtRank]


class Unsupported(MetricsModel):
    """Outputs and truths one matcher could not key."""

    matcher: str
    outputs: int = Field(ge=0)
    targets_truth_unsupported: int = Field(ge=0)


class RoundTrip(MetricsModel):
    """Forward re-prediction of the proposals (present when a forward model checked them)."""

    definition: str
    max_rank_checked: int = Field(ge=1)
    round_trip_coverage: list[RateAtK] = Field(
        description="Targets with a round-tripping proposal among the first k, over all."
    )
    round_trip_proposal_rate: Rate = Field(
        description="Proposals round-tripping over proposals checked."
    )
    proposals_without_forward_candidates: int = Field(ge=0)


class LineDiagnostic(MetricsModel):
    """One rejected input line (bounded list)."""

    line: int
    reason: str
    excerpt: str
    detail: str


class LineCounts(MetricsModel):
    """Line accounting of an input file: accepted, rejected by reason, a few diagnostics."""

    accepted: int = Field(ge=0)
    rejected: int = Field(ge=0)
    rejections_by_reason: dict[str, int]
    diagnostics: list[LineDiagnostic]
    diagnostics_truncated: bool


class DataBlock(MetricsModel):
    """The fold file evaluated."""

    file: str
    format: str
    fold: str
    sha256: str
    limit: int | None
    targets: int = Field(ge=0)
    lines: LineCounts


class UnscoredBlock(MetricsModel):
    """Targets no outputs could be obtained or judged for (each still a miss)."""

    share: Rate = Field(description="Unscored targets over all targets.")
    max_share: float = Field(description="Share above which the command exits non-zero.")
    over_limit: bool
    by_status: dict[str, int]
    data_lines_rejected: int = Field(ge=0)
    prediction_lines_rejected: int = Field(ge=0)


class SyntheseusResultsBlock(MetricsModel):
    """The syntheseus-shaped results file written beside the report."""

    file: str
    convention: str = Field(description="The convention whose numbers the file holds.")
    notes: list[str]


class Divergence(MetricsModel):
    """One deliberate difference from syntheseus's code (each has a test), and how often it
    applied and changed a target's numbers in this run (absent in older reports)."""

    id: str
    divergence: str
    targets: int | None = Field(default=None, ge=0, description="Targets it applies to.")
    targets_changed: int | None = Field(
        default=None, ge=0, description="Targets whose numbers differ from syntheseus's."
    )
    stops_syntheseus: bool | None = Field(
        default=None, description="It applied, and syntheseus would have stopped (or may)."
    )


class InSampleBlock(MetricsModel):
    """Whether the model was trained on the evaluated fold (from its training evidence)."""

    checked: bool = Field(description="The model named its training data.")
    same_file: bool
    shared_reactions: int = Field(ge=0, description="Training reactions equal to targets.")
    targets: int = Field(ge=0, description="Evaluated targets among the training reactions.")
    allowed: bool = Field(description="--allow-in-sample was given.")
    evidence: str


class SyntheseusAgreement(MetricsModel):
    """chemgauge's convention against syntheseus's own verdicts, target by target."""

    convention: str
    changed_means: str
    targets_changed: int = Field(ge=0)
    unexplained: int = Field(
        ge=0, description="Changed targets no listed divergence applies to (a bug if > 0)."
    )


class RetroMetrics(MetricsModel):
    """The ``metrics`` block of a retro report."""

    conventions: list[str] = Field(description="Ranking conventions, side by side.")
    matchers: list[str] = Field(description="Identity policies, side by side.")
    k: list[int] = Field(description="The reported top-k cut-offs, ascending.")
    num_top_results: int = Field(ge=1, description="Outputs requested per target.")
    targets: int = Field(ge=0)
    status: dict[str, int] = Field(description="Targets by row status.")
    accuracy: Accuracy
    outputs: Outputs
    unsupported: list[Unsupported]
    by_class: dict[str, Accuracy] | None = Field(
        default=None, description="Accuracy per reaction class ('(none)': no class)."
    )
    round_trip: RoundTrip | None = None
    data: DataBlock
    model: dict[str, Any] = Field(description="The model's own description (open).")
    unscored: UnscoredBlock
    syntheseus_results: SyntheseusResultsBlock
    divergences_from_syntheseus: list[Divergence]
    syntheseus_agreement: SyntheseusAgreement | None = None
    in_sample: InSampleBlock | None = None
    statistics_notes: list[str] | None = Field(
        default=None, description="Conventions of the summary statistics (medians)."
    )

    @model_validator(mode="after")
    def _one_grid(self) -> RetroMetrics:
        grids = {"accuracy": self.accuracy} | {
            f"by_class.{c}": block for c, block in (self.by_class or {}).items()
        }
        for where, grid in grids.items():
            _check_grid(where, grid, self.conventions, self.matchers, self.k)
        return self


def _check_grid(
    where: str,
    grid: Mapping[str, Mapping[str, RankBlock]],
    conventions: list[str],
    matchers: list[str],
    ks: list[int],
) -> None:
    """``grid`` holds exactly conventions x matchers, each with one top-k rate per k (the
    report's keys are sorted, so the order of the grid is the order of the lists)."""
    if sorted(grid) != sorted(conventions):
        raise ValueError(f"{where}: conventions {sorted(grid)} are not {conventions}")
    for convention, per_matcher in grid.items():
        if sorted(per_matcher) != sorted(matchers):
            raise ValueError(
                f"{where}.{convention}: matchers {sorted(per_matcher)} are not {matchers}"
            )
        for matcher, block in per_matcher.items():
            if [r.k for r in block.top_k] != ks:
                raise ValueError(f"{where}.{convention}.{matcher}.top_k: k is not {ks}")


def write_schema(path: Path | None = None) -> Path:
    """Write the published schema (default: ``metrics.v<N>.schema.json`` of the family)."""
    from chemgauge.families.retro.family import FAMILY

    target = path or FAMILY.metrics_schema_path()
    write_metrics_schema(RetroMetrics, "chemgauge retro metrics", target)
    return target
