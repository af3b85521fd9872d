"""The typed ``metrics`` block of a p2s ``report.json`` (family schema version 2).

Every rate is the one :class:`~chemgauge.eval.metrics.Rate` shape (Wilson interval at the
claim's confidence) and every paired difference an :class:`~chemgauge.eval.metrics.Estimate`
(paired bootstrap; its seed and resamples are the report's ``config.claim``). The report
writer validates the block it built through :class:`P2SMetrics` before writing, and the
report loader refuses a report whose block does not validate. The published JSON Schema is
``metrics.v2.schema.json`` beside this module; a test keeps it equal to the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from chemgauge.eval.metrics import Estimate, MetricsModel, Rate, write_metrics_schema

__all__ = [
    "Condition",
    "CounterfactualFlip",
    "McNemar",
    "P2SMetrics",
    "PropertyMetrics",
    "ShuffleDrop",
    "UseClaim",
    "ViewMetrics",
    "write_schema",
]

#: The three views of a property directory (:data:`chemgauge.families.p2s.spec.CONDITIONS`).
Condition = Literal["correct", "shuffled", "counterfactual"]


class Statuses(MetricsModel):
    """How the view's tasks were answered, every task once."""

    hit: int = Field(ge=0, description="The expected completion chosen.")
    miss: int = Field(ge=0, description="Another candidate chosen.")
    missing: int = Field(ge=0, description="No prediction for the task.")
    invalid: int = Field(ge=0, description="A prediction marked invalid or without an index.")
    out_of_range: int = Field(ge=0, description="An index outside the candidate list.")


class ViewMetrics(MetricsModel):
    """Accuracy of one view over all its tasks, with chance beside it."""

    accuracy: Rate = Field(description="Hits over every task of the view (n: the view's tasks).")
    chance: float | None = Field(description="Mean of 1/K over the view's tasks; null if none.")
    statuses: Statuses


class McNemar(MetricsModel):
    """Exact McNemar test on the discordant pairs of a paired comparison."""

    only_a: int = Field(ge=0, description="Pairs where only the first side is right.")
    only_b: int = Field(ge=0, description="Pairs where only the second side is right.")
    p_value: float = Field(ge=0, le=1, description="Two-sided exact p (1 with no discordance).")


class ClaimAccuracy(MetricsModel):
    """Accuracy on the records the shuffle drop pairs: own property, shuffled property."""

    correct: Rate
    shuffled: Rate


class ShuffleDrop(MetricsModel):
    """Accuracy with the record's own property minus accuracy with a shuffled one."""

    compares: str = Field(description="What the difference subtracts from what.")
    difference: Estimate = Field(description="Paired bootstrap difference (n: paired records).")
    mcnemar: McNemar
    holds: bool = Field(description="difference > 0 and McNemar p < alpha.")


class CounterfactualFlip(MetricsModel):
    """How often the donor is picked given the donor's property vs the record's own."""

    flip_rate: Rate = Field(description="Counterfactuals whose donor was picked.")
    donor_pick_rate_under_correct: Rate = Field(
        description="Their base records that picked the same donor given their own property."
    )
    compares: str = Field(description="What the difference subtracts from what.")
    difference: Estimate = Field(description="Paired bootstrap difference (n: counterfactuals).")
    mcnemar: McNemar
    holds: bool = Field(description="difference > 0 and McNemar p < alpha.")


class UseClaim(MetricsModel):
    """Does the supplied property change the choice the way the evidence implies?"""

    accuracy: ClaimAccuracy
    shuffle_drop: ShuffleDrop
    counterfactual_flip: CounterfactualFlip
    use_claim: bool = Field(description="Both the shuffle drop and the flip hold.")


class PropertyMetrics(MetricsModel):
    """One property directory: accuracy per view run, the use claim when all three were."""

    views: dict[Condition, ViewMetrics]
    claim: UseClaim | None = Field(description="null unless all three views were run.")


class SystemDescription(MetricsModel):
    """The system as it describes itself (name and the settings that decide its answers)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str


class DataView(MetricsModel):
    """The SHA-256 of one view's task and label files."""

    tasks_sha256: str
    labels_sha256: str


class DataRecord(MetricsModel):
    """The data folder scored against, pinned by its views' hashes."""

    path: str = Field(description="The data folder (absolute, where it was when scored).")
    sha256: str = Field(description="SHA-256 of the canonical JSON of ``views``.")
    views: dict[str, DataView] = Field(description="By ``<property>/<condition>``.")


class PredictionRecord(MetricsModel):
    """One prediction file of the run folder and what the scorer could not attribute."""

    path: str = Field(description="Relative to the run folder.")
    sha256: str
    unknown_records: int = Field(ge=0, description="Record ids not in the view's task file.")
    unattributable_lines: int = Field(ge=0, description="Lines naming no record.")


class P2SMetrics(MetricsModel):
    """The ``metrics`` block of a p2s run report."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="chemgauge p2s report metrics")

    rows: int = Field(ge=0, description="Rows of rows.jsonl: one per task and view.")
    properties: dict[str, PropertyMetrics] = Field(description="By property directory.")
    model: SystemDescription
    data: DataRecord
    predictions: dict[str, PredictionRecord] = Field(description="By ``<property>/<condition>``.")


def write_schema(path: Path | None = None) -> Path:
    """Write the published JSON Schema (``metrics.v<N>.schema.json`` beside this module)."""
    from chemgauge.families.p2s.family import FAMILY

    target = path or FAMILY.metrics_schema_path()
    write_metrics_schema(P2SMetrics, str(P2SMetrics.model_config.get("title")), target)
    return target
