"""The retro metrics model: its published JSON Schema is the model's, and it refuses a block
whose grid is not the one it names."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from chemgauge.eval.metrics import metrics_json_schema
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.family import FAMILY
from chemgauge.families.retro.metrics_model import RetroMetrics, write_schema

REGENERATE = (
    'python -c "from chemgauge.families.retro.metrics_model import write_schema; write_schema()"'
)


def test_the_shipped_schema_is_the_model() -> None:
    path = FAMILY.metrics_schema_path()
    assert path.name == f"metrics.v{FAMILY.schema_version}.schema.json" == "metrics.v3.schema.json"
    expected = metrics_json_schema(RetroMetrics, "chemgauge retro metrics")
    assert json.loads(path.read_text()) == expected, (
        f"stale schema: regenerate it with {REGENERATE}"
    )


def test_write_schema_writes_what_is_shipped(tmp_path: Path) -> None:
    written = write_schema(tmp_path / "schema.json")
    assert written.read_bytes() == FAMILY.metrics_schema_path().read_bytes()


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("retro-metrics")
    (root / "data").mkdir()
    (root / "data" / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\n")
    config = RetroEvalConfig(
        data_dir=str(root / "data"),
        model_class="fixed",
        num_top_results=3,
        out=str(root / "out"),
        executor="serial",
    )
    model = CallableRetroModel(lambda ps: [["CN.CC(=O)O"] for _ in ps], "fixed")
    report: dict[str, Any] = run_retro_eval(config, model=model).report
    return report["metrics"]


def test_a_written_block_validates(metrics: dict[str, Any]) -> None:
    model = RetroMetrics.model_validate(metrics)
    assert model.k == [1, 3] and model.conventions == ["syntheseus", "raw_slots"]
    assert model.accuracy["syntheseus"]["exact"].top_k[0].k == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m["accuracy"].pop("raw_slots"), "accuracy: conventions"),
        (lambda m: m["accuracy"]["syntheseus"].pop("exact"), "accuracy.syntheseus: matchers"),
        (lambda m: m["accuracy"]["syntheseus"]["exact"]["top_k"].pop(), "top_k: k is not"),
        (lambda m: m.update(k=[1, 5]), "top_k: k is not [1, 5]"),
        (lambda m: m["outputs"].update(invalid_rate=0.1), "invalid_rate"),
        (lambda m: m.update(surprise=1), "surprise"),
    ],
)
def test_a_block_that_does_not_hold_its_grid_is_refused(
    metrics: dict[str, Any], edit: Any, message: str
) -> None:
    edited = copy.deepcopy(metrics)
    edit(edited)
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        RetroMetrics.model_validate(edited)
