"""The forward metrics contract: the shipped schema is the model's, and a block off the model
is refused before any row is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from chemgauge.eval.metrics import metrics_json_schema
from chemgauge.families import get_family
from chemgauge.families.forward import report as report_module
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.metrics_model import ForwardMetrics
from chemgauge.families.forward.runner import run_benchmark

from .conftest import FIXTURE_CORPUS


def test_the_shipped_schema_is_the_models() -> None:
    family = get_family("forward")
    assert family.metrics_model() is ForwardMetrics
    path = family.metrics_schema_path()
    assert path.name == f"metrics.v{family.schema_version}.schema.json"
    shipped = json.loads(path.read_text())
    expected = metrics_json_schema(ForwardMetrics, "chemgauge forward metrics")
    assert shipped == json.loads(json.dumps(expected)), (
        f"regenerate: python -m chemgauge.families.forward.metrics_model (writes {path})"
    )


def test_a_fresh_report_validates_and_every_rate_has_one_shape(tmp_path: Path) -> None:
    config = BenchmarkConfig(corpus=FIXTURE_CORPUS, out=tmp_path, executor="serial")
    metrics = run_benchmark(config).report["metrics"]
    model = ForwardMetrics.model_validate(metrics)
    assert model.overall.end_to_end.top1_hit_rate.k == 1
    assert model.overall.end_to_end.mrr.method == "bootstrap95"
    assert metrics["overall"]["end_to_end"]["top1_hit_rate"]["value"] == pytest.approx(0.3)


def test_an_off_schema_block_is_refused_before_the_rows_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = report_module.ForwardMetrics.model_validate

    def with_a_stray_key(metrics: dict) -> object:  # type: ignore[type-arg]
        return real({**metrics, "mrr_bootstrap95": [0.0, 1.0]})

    monkeypatch.setattr(report_module.ForwardMetrics, "model_validate", with_a_stray_key)
    config = BenchmarkConfig(corpus=FIXTURE_CORPUS, out=tmp_path, executor="serial")
    with pytest.raises(ValidationError, match="mrr_bootstrap95"):
        run_benchmark(config)
    assert not config.rows_path.exists() and not config.report_path.exists()
