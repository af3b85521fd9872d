"""The typed ``metrics`` block of an OCSR report: what ``ocsr run`` and ``ocsr score`` write.

Every rate is a :class:`~chemgauge.eval.metrics.Rate` (count, n, value, Wilson interval);
each denominator is named beside it (planned attempts with a finite reference, attempted
ones, reference groups, images). The report writer validates the block through
:class:`OcsrMetrics` before writing, and the JSON Schema shipped beside this module
(``metrics.v<N>.schema.json``) is generated from it::

    python -m chemgauge.families.ocsr.metrics_model
"""

from __future__ import annotations

from pydantic import Field

from chemgauge.eval.metrics import MetricsModel, Rate, write_metrics_schema

__all__ = ["SCHEMA_TITLE", "OcsrMetrics", "write_schema"]

SCHEMA_TITLE = "chemgauge ocsr metrics"


class Statuses(MetricsModel):
    """Attempts per status (every status listed, zeros included)."""

    completed: int = Field(ge=0)
    provisional: int = Field(ge=0, description="A preview without a finished result.")
    clarification: int = Field(ge=0)
    failure: int = Field(ge=0)
    timeout: int = Field(ge=0)
    not_run: int = Field(ge=0, description="What a budget, the request cap or a guard stopped.")


class ManifestInfo(MetricsModel):
    """The manifest the run read."""

    name: str
    images: int = Field(ge=0)


class AllAttempts(MetricsModel):
    """Every planned attempt, with or without a reference."""

    planned: int = Field(ge=0)
    statuses: Statuses
    not_run_reasons: dict[str, int] = Field(
        default_factory=dict, description="Why attempts were not run, commonest first."
    )


class PolicyExactness(MetricsModel):
    """Completed exact graphs under one identity policy (same denominator for every policy)."""

    claim: str = Field(description="What the policy forgives, as the code claims it.")
    completed_exact: int = Field(ge=0)
    provisional_exact: int = Field(ge=0, description="Exact previews, counted apart.")
    unsupported: int = Field(ge=0, description="A reference feature the policy cannot judge.")
    completed_exact_over_planned: Rate = Field(description="The headline rate.")
    completed_exact_over_attempted: Rate


class FiniteReference(MetricsModel):
    """The planned attempts whose image has a unique complete reference."""

    planned: int = Field(ge=0)
    attempted: int = Field(ge=0)
    completed: int = Field(ge=0)
    provisional: int = Field(ge=0)
    not_run: int = Field(ge=0)
    not_run_reasons: dict[str, int] = Field(
        default_factory=dict, description="Why attempts were not run, commonest first."
    )
    statuses: Statuses
    policies: dict[str, PolicyExactness] = Field(description="Per identity policy.")


class QualitativeAttempt(MetricsModel):
    """One attempt on an image without a unique reference (reported, never scored)."""

    attempt_id: str
    case_id: str
    no_reference_reason: str | None
    status: str
    message: str
    candidate_smiles: str | None
    empty_candidate: bool


class NoReference(MetricsModel):
    """The attempts on images without a unique reference."""

    planned: int = Field(ge=0)
    statuses: Statuses
    attempts: list[QualitativeAttempt]


class LabelCounts(MetricsModel):
    """One abbreviation label: reference groups and those recalled in completed answers."""

    planned: int = Field(ge=0)
    recalled: int = Field(ge=0)


class Abbreviations(MetricsModel):
    """Label recall of the references' abbreviation (superatom) groups."""

    planned_groups: int = Field(ge=0)
    attempted_groups: int = Field(ge=0)
    recalled: int = Field(ge=0, description="Groups recalled in completed answers.")
    provisional_recalled: int = Field(ge=0, description="Recalled in provisional answers.")
    label_recall_over_planned: Rate
    label_recall_over_attempted: Rate
    by_label: dict[str, LabelCounts]


class RepeatRates(MetricsModel):
    """Finite-reference images exact in all their planned repeats and in at least one."""

    exact_in_all: Rate
    exact_in_any: Rate


class Repeats(MetricsModel):
    """Repeat reliability per policy (completed attempts only)."""

    repeats: int = Field(ge=0, description="The most attempts planned for one image.")
    cases: int = Field(ge=0, description="Images with a finite reference (the denominator).")
    policies: dict[str, RepeatRates]


class ValidationCounts(MetricsModel):
    """Whether the returned graphs sanitize, counted apart from exactness."""

    attempts: int = Field(ge=0)
    with_graph: int = Field(ge=0)
    accepted: int = Field(ge=0)
    rejected_reasons: dict[str, int]


class Validation(MetricsModel):
    """Graph validation of completed and of provisional finite-reference attempts."""

    completed: ValidationCounts
    provisional: ValidationCounts


class CategoryCount(MetricsModel):
    """A localized error category and the attempts showing it."""

    category: str
    attempts: int = Field(ge=0)


class LocalizedErrors(MetricsModel):
    """Graph-diff errors of completed and provisional finite-reference attempts."""

    diff_status: dict[str, int]
    attempts_with_category: dict[str, int]
    errors_by_category: dict[str, int]
    commonest: list[CategoryCount] = Field(description="At most ten, commonest first.")


class ConsistencyEntry(MetricsModel):
    """An image attempted at least twice: same status, same graph?"""

    case_id: str
    statuses: list[str]
    same_status: bool
    distinct_graphs: list[str]
    same_graph: bool


class Served(MetricsModel):
    """Who served the attempts, as the back-end echoed it, and a back-end's stop."""

    models: dict[str, int]
    reasoning_efforts: dict[str, int]
    service_tiers: dict[str, int]
    stop_reason: str | None
    requested_effort: str | None = None
    effort_unverified: int = 0


class ImageInputs(MetricsModel):
    """What the recognizer received: pixels only; metadata stripped and leaks flagged."""

    attempts_sent: int
    attempts_with_metadata_stripped: int
    attempts_with_metadata_molecule: int
    cases_with_metadata_molecule: list[str]


class ReviewEntry(MetricsModel):
    """One attempt's own visual review by the back-end."""

    attempt_id: str
    case_id: str
    status: str
    review: str


class ModelReview(MetricsModel):
    """A model's own visual review of its answers: reported apart, never ground truth."""

    note: str
    attempts_with_review: int
    reviews: list[ReviewEntry]


class OcsrMetrics(MetricsModel):
    """The ``metrics`` block of an OCSR report."""

    manifest: ManifestInfo
    headline_policy: str
    policies: list[str]
    all_attempts: AllAttempts
    finite_reference: FiniteReference
    no_reference: NoReference
    abbreviations: Abbreviations
    repeats: Repeats
    validation: Validation
    localized_errors: LocalizedErrors
    consistency: list[ConsistencyEntry]
    served: Served
    token_usage: str
    image_inputs: ImageInputs | None = None
    model_review: ModelReview | None = None


def write_schema() -> None:
    """Write the shipped JSON Schema of :class:`OcsrMetrics` beside the family's modules."""
    from chemgauge.families.ocsr.family import FAMILY

    write_metrics_schema(OcsrMetrics, SCHEMA_TITLE, FAMILY.metrics_schema_path())


if __name__ == "__main__":
    write_schema()
