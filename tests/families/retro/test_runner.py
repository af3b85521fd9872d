"""End-to-end runs: files, determinism across executors, resume, refusal of mixed configs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import require_module

from chemgauge.errors import ConfigError, DataQualityError
from chemgauge.eval.envelope import without_timing
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.runner import JOURNAL_JSONL, REPORT_JSON, ROWS_JSONL

REACTIONS = [
    "CC(=O)O.CN>>CNC(C)=O",
    "CC(=O)Cl.NCC>>CCNC(C)=O",
    "C[C@H](N)C(=O)O.CO>>COC(=O)[C@H](C)N",
    "Brc1ccccc1.OB(O)c1ccccc1>>c1ccc(-c2ccccc2)cc1",
    "not a reaction",
    "CCO.CC(=O)O>>CCOC(C)=O",
]
OUTPUTS = {
    "CNC(C)=O": ["C1CC", "CC(O)=O.CN", "OC(C)=O.NC"],
    "CCNC(C)=O": ["CC(=O)O.CCN", "CC(=O)Cl.NCC"],
    "COC(=O)[C@H](C)N": ["CC(N)C(=O)O.CO", "C[C@@H](N)C(=O)O.CO", "C[C@H](N)C(=O)O.CO"],
    "c1ccc(-c2ccccc2)cc1": [],
}


def _data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "test.smi").write_text("\n".join(REACTIONS) + "\n")
    return folder


def _model(fail_after: int | None = None) -> CallableRetroModel:
    seen = {"calls": 0}

    def fn(products: list[str]) -> list[list[str]]:
        seen["calls"] += 1
        if fail_after is not None and seen["calls"] > fail_after:
            raise KeyboardInterrupt
        return [OUTPUTS.get(p, ["CCO.O"]) for p in products]

    return CallableRetroModel(fn, "fixed")


def _config(tmp_path: Path, out: str, **extra: Any) -> RetroEvalConfig:
    options = {
        "data_dir": str(_data(tmp_path) if not (tmp_path / "data").exists() else tmp_path / "data"),
        "model_class": "fixed",
        "num_top_results": 3,
        "out": str(tmp_path / out),
        "executor": "serial",
        "batch_size": 2,
        **extra,
    }
    return RetroEvalConfig.from_options(options)


def _stable(report: dict[str, Any]) -> dict[str, Any]:
    return without_timing(report)


def test_run_writes_rows_report_and_journal(tmp_path: Path) -> None:
    run = run_retro_eval(_config(tmp_path, "out"), model=_model())
    out = tmp_path / "out"
    rows = [orjson.loads(line) for line in (out / ROWS_JSONL).read_bytes().splitlines()]
    assert [r["target"] for r in rows] == ["test:1", "test:2", "test:3", "test:4", "test:6"]
    assert [r["hits"]["syntheseus"]["exact"] for r in rows] == [0, 1, 2, None, None]
    assert [r["hits"]["raw_slots"]["exact"] for r in rows] == [1, 1, 2, None, None]
    assert [r["hits"]["syntheseus"]["stereo_ignored"] for r in rows] == [0, 1, 0, None, None]
    assert rows[3]["status"] == "no_outputs"
    report = orjson.loads((out / REPORT_JSON).read_bytes())
    assert report == orjson.loads(orjson.dumps(run.report))
    assert report["metrics"]["data"]["lines"]["rejections_by_reason"] == {"not_a_reaction": 1}
    assert report["counts"]["rejected_by_reason"] == {"not_a_reaction": 1}
    assert report["metrics"]["data"]["targets"] == report["counts"]["items"] == 5
    top1, top3 = report["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"]
    assert (top1["k"], top1["count"], top1["n"], top1["value"]) == (1, 1, 5, 0.2)
    assert top3["k"] == 3
    assert report["config"]["k"] == report["metrics"]["k"] == [1, 3]
    assert report["metrics"]["conventions"] == ["syntheseus", "raw_slots"]
    assert report["family_schema_version"] == 3
    assert report["inputs"][0]["sha256"] == report["metrics"]["data"]["sha256"]
    journal = (out / JOURNAL_JSONL).read_bytes().splitlines()
    assert len(journal) == 1 + 5  # header + one line per target
    entry = orjson.loads(journal[1])
    assert entry["outputs"] == OUTPUTS["CNC(C)=O"] and "timing" in entry


def test_same_inputs_same_bytes_across_runs_and_executors(tmp_path: Path) -> None:
    first = run_retro_eval(_config(tmp_path, "a"), model=_model())
    second = run_retro_eval(
        _config(tmp_path, "b", executor="local", jobs=2, chunk_size=1), model=_model()
    )
    assert (tmp_path / "a" / ROWS_JSONL).read_bytes() == (tmp_path / "b" / ROWS_JSONL).read_bytes()
    assert _stable(first.report) == _stable(second.report)
    assert first.report["reproducibility_sha256"] == second.report["reproducibility_sha256"]


def test_resume_after_interruption_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    fresh = run_retro_eval(_config(tmp_path, "fresh", chunk_size=1), model=_model())
    config = _config(tmp_path, "resumed", chunk_size=1)
    with pytest.raises(KeyboardInterrupt):
        run_retro_eval(config, model=_model(fail_after=1))
    journal = tmp_path / "resumed" / JOURNAL_JSONL
    assert len(journal.read_bytes().splitlines()) == 1 + 2  # one batch of two finished
    with open(journal, "ab") as handle:  # a crash in the middle of writing a line
        handle.write(b'{"target": "test:3", "outp')
    calls: list[list[str]] = []
    model = _model()
    inner = model._fn

    def spy(products: list[str]) -> list[list[str]]:
        calls.append(products)
        return inner(products)

    model._fn = spy
    resumed = run_retro_eval(config, model=model)
    assert [p for batch in calls for p in batch] == [
        "COC(=O)[C@H](C)N",
        "c1ccc(-c2ccccc2)cc1",
        "CCOC(C)=O",
    ]
    assert resumed.report["timing"]["resumed_targets"] == 2
    assert resumed.report["timing"]["journal_truncated_bytes"] > 0
    lines = [orjson.loads(x) for x in journal.read_bytes().splitlines()[1:]]
    assert sorted(x["target"] for x in lines) == ["test:1", "test:2", "test:3", "test:4", "test:6"]
    assert (tmp_path / "fresh" / ROWS_JSONL).read_bytes() == (
        tmp_path / "resumed" / ROWS_JSONL
    ).read_bytes()
    assert _stable(fresh.report) == _stable(resumed.report)


def test_a_journal_from_another_configuration_is_refused(tmp_path: Path) -> None:
    run_retro_eval(_config(tmp_path, "out"), model=_model())
    with pytest.raises(ConfigError, match="another configuration"):
        run_retro_eval(_config(tmp_path, "out", num_top_results=2, k="1"), model=_model())
    again = run_retro_eval(
        _config(tmp_path, "out", num_top_results=2, k="1", restart="true"), model=_model()
    )
    assert again.report["timing"]["resumed_targets"] == 0


def test_changing_k_reuses_the_journal(tmp_path: Path) -> None:
    run_retro_eval(_config(tmp_path, "out"), model=_model())
    again = run_retro_eval(_config(tmp_path, "out", k="1,2,3"), model=_model(fail_after=0))
    assert again.report["timing"]["scored_now"] == 0
    top_k = again.report["metrics"]["accuracy"]["raw_slots"]["exact"]["top_k"]
    assert [rate["k"] for rate in top_k] == [1, 2, 3]


def test_predictions_model_reports_targets_missing_from_the_file(tmp_path: Path) -> None:
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"product": "CC(=O)NC", "predictions": ["CN.CC(=O)O"]}\n')
    config = _config(tmp_path, "out", model_class="predictions", model_dir=str(preds))
    run = run_retro_eval(config)
    assert run.report["metrics"]["status"] == {"missing_from_predictions": 4, "ok": 1}
    assert run.report["metrics"]["model"]["file_sha256"]
    with pytest.raises(DataQualityError, match="line 5: not_a_reaction"):
        run_retro_eval(
            _config(tmp_path, "strict", model_class="predictions", model_dir=str(preds), strict="1")
        )
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\nCCO.CC(=O)O>>CCOC(C)=O\n")
    with pytest.raises(DataQualityError, match=r"no line in the predictions file.*CCOC"):
        run_retro_eval(
            _config(
                tmp_path,
                "strict2",
                model_class="predictions",
                model_dir=str(preds),
                strict="1",
                data_dir=str(clean),
            )
        )


@pytest.mark.external
def test_ray_executor_gives_the_same_rows(tmp_path: Path) -> None:
    require_module("ray")
    serial = run_retro_eval(_config(tmp_path, "serial"), model=_model())
    on_ray = run_retro_eval(
        _config(tmp_path, "ray", executor="ray", jobs=2, chunk_size=1, ray_address="local"),
        model=_model(),
    )
    assert on_ray.report["timing"]["executor"]["executor"] == "ray"
    assert "ray_address" not in on_ray.report["config"]  # where it ran is not part of the result
    rows_serial = (tmp_path / "serial" / ROWS_JSONL).read_bytes()
    assert rows_serial == (tmp_path / "ray" / ROWS_JSONL).read_bytes()
    assert serial.report["reproducibility_sha256"] == on_ray.report["reproducibility_sha256"]


def test_the_journal_is_never_named_like_syntheseus_predictions(tmp_path: Path) -> None:
    run_retro_eval(_config(tmp_path, "out"), model=_model())
    assert (tmp_path / "out" / JOURNAL_JSONL).is_file()
    assert not (tmp_path / "out" / "predictions.jsonl").exists()


def test_a_syntheseus_predictions_file_in_the_results_folder_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    record = b'{"input": "CNC(C)=O", "ground_truth": "CC(=O)O.CN>>CNC(C)=O"}\n'
    (out / "predictions.jsonl").write_bytes(record)  # syntheseus's PredictionRecord schema
    run = run_retro_eval(_config(tmp_path, "out"), model=_model())
    assert (out / "predictions.jsonl").read_bytes() == record
    assert run.report["timing"]["scored_now"] == 5
