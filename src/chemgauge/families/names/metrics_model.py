"""The typed ``metrics`` block of a names report, published as ``metrics.v4.schema.json``.

The report writer builds the block (:class:`~chemgauge.families.names.metrics.CoverageTally`
plus the input statistics and the bounded listings) and validates it through
:class:`NamesMetrics` before writing; the loader validates every report it reads against the
same model. Every rate is the one :class:`~chemgauge.eval.metrics.Rate` shape.

Regenerate the schema file after changing a model here::

    python -c "from chemgauge.families.names.metrics_model import write_schema; write_schema()"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from chemgauge.eval.metrics import MetricsModel, Rate, write_metrics_schema

__all__ = [
    "Diagnostic",
    "DifferenceEntry",
    "InputStats",
    "LensCounts",
    "LensMetrics",
    "Lenses",
    "NamesMetrics",
    "OpsinErrorEntry",
    "WrongEntry",
    "write_schema",
]


class LensCounts(MetricsModel):
    """Rows of each class under one lens; they add up to ``total``."""

    abstained: int = Field(ge=0)
    rt_valid: int = Field(ge=0)
    confidently_wrong: int = Field(ge=0)
    unparseable: int = Field(ge=0)
    unscorable: int = Field(ge=0)
    opsin_error: int = Field(ge=0)


class LensMetrics(MetricsModel):
    """The rates under one identity lens, every one over all rows (``total``)."""

    matcher: str = Field(description="The registered identity policy the lens compares by.")
    coverage: Rate = Field(description="Names emitted / all rows.")
    of_emitted_rt: Rate = Field(description="Round-trip valid / names emitted.")
    confidently_wrong: Rate = Field(description="Parsed to another structure / all rows.")
    unparseable: Rate = Field(description="Not interpretable or refused / all rows.")
    abs_rt_valid: Rate = Field(description="Round-trip valid / all rows.")
    opsin_error: Rate = Field(description="OPSIN failed on a well-formed name / all rows.")
    unscorable: int = Field(ge=0, description="Rows the lens cannot judge (never credited).")
    unscorable_reasons: dict[str, int] = Field(description="Unscorable rows by reason.")
    counts: LensCounts


class Lenses(MetricsModel):
    """The lenses side by side, over the same rows; the reference lenses only when the run
    computed them (``--reference-lenses``)."""

    parity: LensMetrics
    strict: LensMetrics
    exact: LensMetrics
    reference_parity: LensMetrics | None = Field(
        default=None,
        description=(
            "orthonym.metrics.coverage_metrics's parity matcher, as written; absent unless "
            "the run was given --reference-lenses."
        ),
    )
    reference_strict: LensMetrics | None = Field(
        default=None,
        description=(
            "orthonym.metrics.coverage_metrics's strict matcher, as written; absent unless "
            "the run was given --reference-lenses."
        ),
    )

    @model_serializer(mode="wrap")
    def _computed_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A lens the run did not compute has no key (never a null)."""
        return {k: v for k, v in handler(self).items() if v is not None}


class Diagnostic(MetricsModel):
    """One rejected input line (the first ones are kept)."""

    line: int
    reason: str
    excerpt: str
    detail: str


class InputStats(MetricsModel):
    """Accepted and rejected input lines, by reason."""

    accepted: int = Field(ge=0)
    rejected: int = Field(ge=0)
    rejections_by_reason: dict[str, int]
    diagnostics: list[Diagnostic]
    diagnostics_truncated: bool


class WrongEntry(MetricsModel):
    """A confidently wrong row: both structures and the lenses it is wrong under."""

    id: str
    smiles: str
    name: str | None
    opsin_smiles: str | None
    wrong_under: list[str]


class OpsinErrorEntry(MetricsModel):
    """A name OPSIN failed on, with OPSIN's status and message."""

    id: str
    name: str | None
    opsin_status: str | None
    opsin_error: str | None


class DifferenceEntry(MetricsModel):
    """A row where ``parity`` and ``reference_parity`` disagree, and why."""

    id: str
    smiles: str
    name: str | None
    opsin_smiles: str | None
    parity: str
    reference_parity: str
    difference: str = Field(description="One of chemgauge.families.names.reference's classes.")


class NamesMetrics(MetricsModel):
    """The ``metrics`` block of ``chemgauge names coverage``'s report."""

    total: int = Field(ge=0, description="Rows (accepted input pairs).")
    opsin_error: int = Field(
        ge=0, description="Rows OPSIN failed on (well-formed name): in total, never credited."
    )
    emitted: int = Field(ge=0, description="Rows with a name (not abstained).")
    abstained: int = Field(ge=0)
    opsin_parsed: int = Field(ge=0, description="Names OPSIN read back to a structure.")
    unparseable: int = Field(ge=0, description="Names not interpretable or refused.")
    unparseable_by_reason: dict[str, int] = Field(
        description="Unparseable names by reason (a refusal's code, or OPSIN's failure)."
    )
    opsin_error_share: float = Field(ge=0, description="opsin_error / emitted.")
    max_opsin_errors: float = Field(ge=0, le=1, description="--max-opsin-errors.")
    complete: bool = Field(description="opsin_error_share is at most max_opsin_errors.")
    lenses: Lenses
    pin_pct: float | None = Field(description="--pin-pct, carried verbatim (never derived).")
    input_stats: InputStats
    confidently_wrong_rows: list[WrongEntry] = Field(description="The first 200 wrong rows.")
    confidently_wrong_total: int = Field(ge=0)
    confidently_wrong_listed_truncated: bool
    opsin_error_rows: list[OpsinErrorEntry] = Field(description="The first 200 OPSIN errors.")
    opsin_error_by_status: dict[str, int]
    opsin_error_listed_truncated: bool
    parity_reference_differences: list[DifferenceEntry] | None = Field(
        description=(
            "The first 200 rows where parity and reference_parity differ; null when the "
            "reference lenses were not computed."
        )
    )
    parity_reference_by_class: dict[str, int] | None = Field(
        description="Every difference by class; null when the reference lenses were not computed."
    )
    parity_reference_listed_truncated: bool | None
    complete_lists: str = Field(description="Where every listed kind of row is in full.")


def write_schema(path: Path | None = None) -> Path:
    """Write the published schema of :class:`NamesMetrics` (default: beside this module)."""
    from chemgauge.families.names.family import FAMILY

    target = path or FAMILY.metrics_schema_path()
    write_metrics_schema(NamesMetrics, "chemgauge names metrics", target)
    return target
