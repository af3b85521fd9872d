"""The typed OCSR metrics block: its shipped JSON Schema is the model's, and the report
writer refuses a block the model does not accept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from chemgauge.eval.metrics import metrics_json_schema
from chemgauge.families.ocsr.family import FAMILY
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.metrics_model import SCHEMA_TITLE, OcsrMetrics
from chemgauge.families.ocsr.report import REPORT_VERSION, report_metrics


def test_the_shipped_schema_is_the_models() -> None:
    shipped = json.loads(FAMILY.metrics_schema_path().read_text())
    assert shipped == metrics_json_schema(OcsrMetrics, SCHEMA_TITLE), (
        "regenerate: python -m chemgauge.families.ocsr.metrics_model"
    )
    assert FAMILY.metrics_model() is OcsrMetrics
    assert REPORT_VERSION == FAMILY.schema_version == 3


def test_a_run_writes_metrics_the_model_accepts(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    import chemgauge.families.ocsr
    from chemgauge.families.ocsr.config import RecognizerOptions, RunConfig

    name = answers({"ethanol": "CCO", "gly_l_ala": "CC"})
    report = chemgauge.families.ocsr.run(
        small_cohort.root / "manifest.json",
        model="python",
        out=tmp_path / "run",
        config=RunConfig(repeats=2),
        recognizer=RecognizerOptions(callable=name),
        html=False,
    )
    metrics = OcsrMetrics.model_validate(report["metrics"])
    with_reference = sum(case.reference is not None for case in small_cohort.cases)
    assert metrics.repeats.policies["exact"].exact_in_all.n == with_reference


def test_the_writer_refuses_a_block_the_model_does_not_accept() -> None:
    from chemgauge.families.ocsr.report import aggregate

    manifest = Manifest.model_construct(name="empty", cases=[])
    body = aggregate(manifest, [], ("exact",), {})
    report_metrics(body)  # an empty run is a valid block (every rate over n = 0)
    body["finite_reference"]["policies"] = {"exact": {"rate": 0.5}}
    with pytest.raises(ValidationError):
        report_metrics(body)
