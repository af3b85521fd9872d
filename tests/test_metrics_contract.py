"""One metrics contract: every rate and every interval estimate in every family's report has
one of the three shapes of :mod:`chemgauge.eval.metrics`, every report validates against the
envelope's and its family's JSON Schema, and every family's fresh run boards and verifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import assert_valid_report

from chemgauge.eval.metrics import INTERVAL_KEYS, Estimate, Rate, RateAtK, rate, rate_objects
from chemgauge.families import BUILT_IN, FAMILIES, get_family
from chemgauge.report.board import BoardConfig, build_leaderboard
from chemgauge.report.board_json import leaderboard_to_dict
from chemgauge.report.entrants import enter_runs
from chemgauge.report.loading import load_run
from chemgauge.report.verify import verify_run

SHAPES = {
    frozenset(Rate.model_fields): Rate,
    frozenset(RateAtK.model_fields): RateAtK,
    frozenset(Estimate.model_fields): Estimate,
}


def shape_problems(document: Any) -> list[str]:
    """Every rate-like object of a document that is not exactly one of the three shapes."""
    problems = []
    for where, block in rate_objects(document):
        model = SHAPES.get(frozenset(block))
        if model is None:
            problems.append(f"{where}: keys {sorted(block)}")
            continue
        try:
            model.model_validate(block)
        except ValidationError as exc:
            problems.append(f"{where}: {exc.errors()[0]['msg']}")
    return problems


def test_the_walker_finds_every_other_shape() -> None:
    report = {
        "a": rate(3, 4),
        "b": [{"k": 5, **rate(1, 2)}],
        "c": {"hits": 2, "rate": 0.5, "low": 0.1, "high": 0.9},
        "d": {"value": 0.5, "numerator": 1, "denominator": 2, "wilson95": [0.1, 0.9]},
        "e": {"n": 4, "value": 0.2, "interval": [0.1, 0.3], "method": "bootstrap95"},
        "f": {**rate(1, 2), "value": 0.9},
    }
    assert shape_problems(report) == [
        ".c: keys ['high', 'hits', 'low', 'rate']",
        ".d: keys ['denominator', 'numerator', 'value', 'wilson95']",
        ".f: Value error, value 0.9 is not count / n = 1/2",
    ]
    assert {"interval", "wilson95", "ci95"} <= INTERVAL_KEYS


def test_every_built_in_family_is_registered_with_its_schema() -> None:
    assert list(FAMILIES.names())[: len(BUILT_IN)] == list(BUILT_IN)
    for name in BUILT_IN:
        family = get_family(name)
        assert family.metrics, f"{name}: no metrics model"
        model = family.metrics_model()
        shipped = json.loads(family.metrics_schema_path().read_text())
        assert shipped["title"] and shipped["properties"] == model.model_json_schema()["properties"]


@pytest.mark.slow
@pytest.mark.external
@pytest.mark.parametrize("family", BUILT_IN)
def test_every_report_holds_one_rate_shape(family: str, family_runs: dict[str, Path]) -> None:
    folder = family_runs[family]
    report = assert_valid_report(folder / "report.json")
    assert shape_problems(report) == []
    assert rate_objects(report["metrics"]), f"{family}: the report holds no rate"


@pytest.mark.slow
@pytest.mark.external
@pytest.mark.parametrize("family", BUILT_IN)
def test_every_family_run_verifies_and_boards(family: str, family_runs: dict[str, Path]) -> None:
    run = load_run(family_runs[family])
    assert verify_run(run).ok
    result = leaderboard_to_dict(
        build_leaderboard(enter_runs([family_runs[family]]), BoardConfig())
    )
    assert result["refused"] == []
    (board,) = result["boards"]
    assert board["family"] == family
    assert board["notes"][-1] == "One run: nothing to compare it with."
    standing = board["rankings"][0]["standings"][0]
    assert standing["letters"] == "a" and board["rankings"][0]["description"]
