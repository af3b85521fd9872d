"""What could not be scored is said out loud: warnings, the report block and the exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from chemgauge.errors import BackendError, DataQualityError
from chemgauge.eval.metrics import rate
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.journal import JOURNAL_JSONL
from chemgauge.families.retro.unscored import MAX_UNSCORED_SHARE, Unscored

REACTIONS = [
    "CC(=O)O.CN>>CNC(C)=O",
    "CC(=O)Cl.NCC>>CCNC(C)=O",
    "C[C@H](N)C(=O)O.CO>>COC(=O)[C@H](C)N",
    "not a reaction",
    "Brc1ccccc1.OB(O)c1ccccc1>>c1ccc(-c2ccccc2)cc1",
    "CCO.CC(=O)O>>CCOC(C)=O",
    "CCN.CC(=O)O>>CCNC(C)=O",
]
PRODUCTS = ["CNC(C)=O", "CCNC(C)=O", "COC(=O)[C@H](C)N", "c1ccc(-c2ccccc2)cc1", "CCOC(C)=O"]


def _data(tmp_path: Path, *, clean: bool = False) -> Path:
    """The reactions in a data folder (``clean``: without the line that is no reaction)."""
    data = tmp_path / ("clean" if clean else "data")
    data.mkdir(exist_ok=True)
    reactions = [r for r in REACTIONS if ">>" in r] if clean else REACTIONS
    (data / "test.smi").write_text("\n".join(reactions) + "\n")
    return data


def _predictions(tmp_path: Path, products: list[str], extra: str = "") -> Path:
    path = tmp_path / "preds.jsonl"
    lines = [json.dumps({"product": p, "predictions": ["CCO.O"]}) for p in products]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def _cli(
    tmp_path: Path, predictions: Path, *flags: str, clean: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "chemgauge",
            "retro",
            "eval",
            f"data_dir={_data(tmp_path, clean=clean)}",
            "model_class=predictions",
            f"model_dir={predictions}",
            "num_top_results=3",
            "executor=serial",
            *flags,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )


def test_a_predictions_file_covering_a_third_warns_with_the_count_and_fails(tmp_path: Path) -> None:
    # 6 targets (CCNC(C)=O twice), a line for 2 of the 5 products: 4 targets missing
    preds = _predictions(tmp_path, PRODUCTS[:1] + PRODUCTS[4:])
    proc = _cli(tmp_path, preds, "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert (
        "warning: 4 of 6 targets (66.7%) have no line in the predictions file preds.jsonl"
        in proc.stderr
    )
    assert "warning: 1 data line of test.smi rejected (not_a_reaction: 1)" in proc.stderr
    assert "error: 4 of 6 targets (66.7%) could not be scored, more than the 10%" in proc.stderr
    assert "Traceback" not in proc.stderr
    report = orjson.loads((tmp_path / "out" / "report.json").read_bytes())  # nothing lost
    assert report["metrics"]["unscored"] == {
        "share": rate(4, 6),
        "max_share": MAX_UNSCORED_SHARE,
        "over_limit": True,
        "by_status": {"missing_from_predictions": 4, "model_error": 0, "error": 0},
        "data_lines_rejected": 1,
        "prediction_lines_rejected": 0,
    }

    allowed = _cli(tmp_path, preds, f"results_dir={tmp_path / 'allowed'}", "--allow-missing")
    assert allowed.returncode == 0, allowed.stderr
    assert "warning: 4 of 6 targets (66.7%) have no line" in allowed.stderr


def test_strict_refuses_missing_targets_before_scoring_with_their_count(tmp_path: Path) -> None:
    preds = _predictions(tmp_path, PRODUCTS[:2])
    proc = _cli(tmp_path, preds, f"results_dir={tmp_path / 'out'}", "--strict", clean=True)
    assert proc.returncode == 2
    assert "3 of 6 targets have no line in the predictions file (first: data line 3)" in (
        proc.stderr
    )
    assert not (tmp_path / "out" / "rows.jsonl").exists()
    assert (tmp_path / "out" / JOURNAL_JSONL).read_bytes().count(b"\n") == 1  # header only


def test_rejected_prediction_lines_warn_and_fail_a_strict_run(tmp_path: Path) -> None:
    preds = _predictions(tmp_path, PRODUCTS, extra='{"product": 1}\nnot json\n')
    proc = _cli(tmp_path, preds, f"results_dir={tmp_path / 'out'}")
    assert proc.returncode == 0, proc.stderr  # every target scored
    assert (
        "warning: 2 lines of the predictions file preds.jsonl rejected "
        "(bad_schema: 1, malformed_json: 1)" in proc.stderr
    )
    strict = _cli(tmp_path, preds, f"results_dir={tmp_path / 'strict'}", "--strict", clean=True)
    assert strict.returncode == 2
    assert "preds.jsonl, line 6: bad_schema" in strict.stderr
    assert not (tmp_path / "strict" / "rows.jsonl").exists()


def _failing_model(bad: set[str], calls: list[list[str]]) -> CallableRetroModel:
    def fn(products: list[str]) -> list[list[str]]:
        calls.append(list(products))
        if bad & set(products):
            raise RuntimeError(f"cannot handle {sorted(bad & set(products))}")
        return [["CCO.O"] for _ in products]

    return CallableRetroModel(fn, "flaky")


def _config(tmp_path: Path, out: str, *, clean: bool = False, **extra: Any) -> RetroEvalConfig:
    return RetroEvalConfig.from_options(
        {
            "data_dir": str(_data(tmp_path, clean=clean)),
            "model_class": "flaky",
            "num_top_results": 3,
            "out": str(tmp_path / out),
            "executor": "serial",
            "batch_size": 4,
            **extra,
        }
    )


def test_a_failing_model_call_loses_only_the_product_that_fails(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    run = run_retro_eval(_config(tmp_path, "out"), model=_failing_model({PRODUCTS[1]}, calls))
    rows = {r["target"]: r for r in run.rows}
    # the batch of four failed; retried one by one, only CCNC(C)=O (two targets) still fails
    statuses = [r["status"] for r in rows.values()]
    assert statuses == ["ok", "model_error", "ok", "ok", "ok", "model_error"]
    assert rows["test:2"]["error"] == {
        "reason": "RuntimeError",
        "detail": "cannot handle ['CCNC(C)=O']",
    }
    assert run.unscored.by_status["model_error"] == 2
    assert run.report["metrics"]["accuracy"]["syntheseus"]["exact"]["n"] == 6  # still counted
    assert any("the model call failed" in line for line in run.unscored.warnings())
    # not journaled: a resumed run asks the model again for exactly those targets
    calls.clear()
    again = run_retro_eval(_config(tmp_path, "out"), model=_failing_model(set(), calls))
    assert calls == [[PRODUCTS[1]]]
    assert again.unscored.count == 0

    with pytest.raises(BackendError, match=r"model 'flaky' failed on a batch of 4 products"):
        run_retro_eval(
            _config(tmp_path, "strict", clean=True, strict="true"),
            model=_failing_model({PRODUCTS[1]}, []),
        )


@pytest.mark.parametrize(("unscored", "over"), [(0, False), (10, False), (11, True)])
def test_the_limit_is_a_share_above_ten_percent(unscored: int, over: bool) -> None:
    summary = Unscored.from_counts(
        {"ok": 100 - unscored, "missing_from_predictions": unscored},
        data_file="test.csv",
        data_lines={},
    )
    assert summary.over_limit is over
    if over:
        with pytest.raises(DataQualityError, match="pass --allow-missing"):
            summary.check(allow_missing=False, out="out")
    summary.check(allow_missing=True, out="out")
    assert bool(summary.warnings()) is bool(unscored)
