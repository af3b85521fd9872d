"""Round trip through chemgauge's forward engine, under its named definition."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.errors import UnknownNameError
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.roundtrip import build_forward_function


def test_forward_engine_re_predicts_an_amide() -> None:
    forward = build_forward_function("chemgauge")
    (candidates,) = forward(["O=C(O)c1ccccc1.C1COCCN1"])
    assert "O=C(c1ccccc1)N1CCOCC1" in candidates[0].split(".")
    assert forward(["C1CC"]) == [[]]  # unparsable reactants: no candidates, no crash
    with pytest.raises(UnknownNameError, match="Did you mean 'chemgauge'"):
        build_forward_function("chemguage")


def test_round_trip_coverage_and_proposal_rate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text(
        "O=C(O)c1ccccc1.C1COCCN1>>O=C(c1ccccc1)N1CCOCC1\nCC(=O)O.CN>>CNC(C)=O\n"
    )
    outputs = {
        # rank 0 does not round-trip, rank 1 (the true set) does; the invalid one holds no rank
        "O=C(c1ccccc1)N1CCOCC1": ["CCCC", "C1CC", "OC(=O)c1ccccc1.N1CCOCC1"],
        "CNC(C)=O": ["CCCC"],
    }
    model = CallableRetroModel(lambda ps: [outputs[p] for p in ps], "fixed")
    config = RetroEvalConfig(
        data_dir=str(data),
        model_class="fixed",
        num_top_results=3,
        k=(1, 2, 3),
        round_trip="chemgauge",
        out=str(tmp_path / "out"),
        executor="serial",
    )
    run = run_retro_eval(config, model=model)
    first, second = run.rows
    assert first["round_trip"] == {
        "checked": 2,
        "round_trips": 1,
        "first_rank": 1,
        "no_candidates": 1,
    }
    assert second["round_trip"]["round_trips"] == 0
    block = run.report["metrics"]["round_trip"]
    coverage = {rate["k"]: rate for rate in block["round_trip_coverage"]}
    assert coverage[1]["count"] == 0
    assert (coverage[2]["count"], coverage[2]["n"], coverage[2]["value"]) == (1, 2, 0.5)
    proposals = block["round_trip_proposal_rate"]
    assert (proposals["count"], proposals["n"], proposals["value"]) == (1, 3, 1 / 3)
    assert block["proposals_without_forward_candidates"] == 2
    assert "syntheseus back-translation top-k" in block["definition"]
