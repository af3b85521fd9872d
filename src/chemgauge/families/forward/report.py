"""The forward benchmark's report: its results wrapped in the shared run envelope.

The envelope's ``config`` is the deterministic configuration, so its ``config_sha256`` is the
same value every row's provenance carries; the corpus, a rule file and a template manifest
are the recorded inputs; ``provenance`` is the one duplicated onto every row (minus the row
hash, which the envelope holds at the top level) plus the installed dependency versions.
The runner checks the ``metrics`` block (:func:`check_metrics`) before it writes the rows, so
a run whose report would not keep its published schema writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    InputRecord,
    RunEnvelope,
    build_envelope,
)
from chemgauge.families.forward.corpus import CorpusStream
from chemgauge.families.forward.family import FAMILY
from chemgauge.families.forward.metrics_model import ForwardMetrics
from chemgauge.families.forward.provenance import ROW_HASH_EXCLUDES, dependency_versions

if TYPE_CHECKING:
    from chemgauge.families.forward.config import BenchmarkConfig
    from chemgauge.families.forward.sources import LoadedRules

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "STATUS_FIELD",
    "ForwardReport",
    "check_metrics",
    "forward_envelope",
    "status_tally",
]

#: ``family_schema_version`` of the reports written now (the family's one source).
REPORT_SCHEMA_VERSION = FAMILY.schema_version
#: The row field the envelope's ``counts.by_status`` counts.
STATUS_FIELD = "failure_reason"
#: Corpus counters whose records produce no row (every other rejection is an invalid row).
_NO_ROW = ("malformed_json", "duplicate_records_merged")
#: Row-provenance fields the envelope keeps at its top level instead.
_TOP_LEVEL = ("chemgauge_version", "reproducibility_sha256", "reproducibility_excludes")


def check_metrics(metrics: Mapping[str, Any]) -> None:
    """Refuse a ``metrics`` block that is not what :class:`ForwardMetrics` publishes (a
    pydantic ``ValidationError`` naming the first wrong field)."""
    ForwardMetrics.model_validate(metrics)


def status_tally() -> CountsTally:
    """A tally of rows by ``failure_reason`` for the envelope's counts."""
    return CountsTally(STATUS_FIELD)


@dataclass(frozen=True)
class ForwardReport:
    """What the finished run knows that the envelope needs."""

    config: BenchmarkConfig
    corpus: CorpusStream
    loaded: LoadedRules
    provenance: Mapping[str, Any]
    digest: str
    counts: CountsTally


def _recorded(role: str, path: str | None, sha256: str | None) -> list[InputRecord]:
    """An input the run already hashed (never hashed twice), with its size; none if absent."""
    if path is None or sha256 is None:
        return []
    try:
        size: int | None = os.stat(path).st_size
    except OSError:
        size = None
    return [InputRecord(role=role, path=path, sha256=sha256, size=size)]


def _inputs(report: ForwardReport) -> list[InputRecord]:
    loaded = report.loaded
    return [
        *_recorded("corpus", str(report.config.corpus), report.corpus.sha256),
        *_recorded("templates", loaded.rules_file, loaded.rules_file_sha256),
        *_recorded("template_manifest", loaded.manifest_file, loaded.manifest_sha256),
    ]


def forward_envelope(
    report: ForwardReport, metrics: Mapping[str, Any], timing: Mapping[str, Any]
) -> RunEnvelope:
    """The run's report: ``metrics`` (see :func:`check_metrics`) and ``timing`` in the shared
    envelope."""
    config = report.config
    provenance = {k: v for k, v in report.provenance.items() if k not in _TOP_LEVEL}
    outside = provenance.get("outside_system")
    provenance["backends"] = {
        "forward_predictor": (
            {"name": f"outside system {outside['name']}", "template_source": "outside"}
            if outside is not None
            else {
                "name": "chemgauge template predictor",
                "template_source": report.loaded.template_source,
                "rules_content_sha256": report.loaded.rules.content_sha256,
            }
        )
    }
    provenance["dependency_versions"] = dependency_versions()
    stats = report.corpus.stats.counters()
    return build_envelope(
        EnvelopeParts(
            family=FAMILY.name,
            family_schema_version=REPORT_SCHEMA_VERSION,
            config=config.deterministic_config(),
            inputs=_inputs(report),
            provenance=provenance,
            rows_path=config.rows_path,
            reproducibility_sha256=report.digest,
            reproducibility_excludes=ROW_HASH_EXCLUDES,
            timing=timing,
            counts=report.counts.result({k: stats.get(k, 0) for k in _NO_ROW}),
            metrics=metrics,
        ),
        config.report_path,
    )
