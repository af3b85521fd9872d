"""The typed metrics block: the shipped schema is the model's, every rate is the one Rate
shape, and the loader refuses a block of the older shape."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError
from tests.report.conftest import NAMES_B, make_names_run

from chemgauge.errors import InputFileError
from chemgauge.eval.metrics import metrics_json_schema
from chemgauge.families.names.family import FAMILY
from chemgauge.families.names.metrics_model import NamesMetrics, write_schema
from chemgauge.report.loading import load_run


def test_the_shipped_schema_is_the_models(tmp_path: Path) -> None:
    shipped = FAMILY.metrics_schema_path()
    assert shipped.name == "metrics.v4.schema.json"
    fresh = write_schema(tmp_path / "schema.json")
    assert json.loads(shipped.read_text()) == json.loads(fresh.read_text()), (
        "regenerate it: python -c 'from chemgauge.families.names.metrics_model import "
        "write_schema; write_schema()'"
    )
    assert json.loads(shipped.read_text()) == json.loads(
        orjson.dumps(metrics_json_schema(NamesMetrics, "chemgauge names metrics"))
    )


def test_a_written_block_is_the_model_and_every_rate_has_the_one_shape(tmp_path: Path) -> None:
    run = make_names_run(tmp_path / "b", NAMES_B)
    metrics = json.loads((run / "report.json").read_text())["metrics"]
    assert NamesMetrics.model_validate(metrics).model_dump(mode="json") == metrics
    exact = metrics["lenses"]["exact"]["abs_rt_valid"]
    assert exact == {
        "count": 4,
        "n": 10,
        "value": 0.4,
        "interval": exact["interval"],
        "method": "wilson95",
    }
    assert exact["interval"] == pytest.approx([0.16818, 0.68732], abs=1e-5)


def test_a_block_of_the_older_shape_is_refused(tmp_path: Path) -> None:
    run = make_names_run(tmp_path / "b", NAMES_B)
    path = run / "report.json"
    report = json.loads(path.read_text())
    block = report["metrics"]["lenses"]["strict"]["coverage"]
    block["rate"], block["ci95"] = block.pop("value"), block.pop("interval")
    block.pop("method")
    with pytest.raises(ValidationError):
        NamesMetrics.model_validate(report["metrics"])
    path.write_text(json.dumps(report))
    with pytest.raises(InputFileError, match="names metrics schema"):
        load_run(run)
    report["family_schema_version"] = 2
    path.write_text(json.dumps(report))
    with pytest.raises(InputFileError, match="family schema version 2; this chemgauge reads"):
        load_run(run)
