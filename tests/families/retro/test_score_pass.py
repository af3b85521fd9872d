"""The scoring pass: a model with a replica predicts on the workers, with the same rows."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest

from chemgauge.errors import BackendError
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.replica import Replica
from chemgauge.families.retro.engine.templates import TemplateRetroModel, extract_templates
from chemgauge.families.retro.runner import JOURNAL_JSONL, ROWS_JSONL

MAPPED = [
    "[CH3:1][C:2](=[O:3])[Cl:9].[NH2:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:4][CH2:5][CH3:6]",
    "[CH3:1][CH2:7][C:2](=[O:3])[Cl:9].[NH2:4][CH3:6]>>[CH3:1][CH2:7][C:2](=[O:3])[NH:4][CH3:6]",
    "[CH3:1][C:2](=[O:3])[OH:9].[OH:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[O:4][CH2:5][CH3:6]",
]
TARGETS = [
    "CC(=O)Cl.CCCN>>CCCNC(C)=O",
    "CC(=O)O.CCCO>>CCCOC(C)=O",
    "CCC(=O)Cl.CN>>CCC(=O)NC",
    "Cc1ccccc1.Br>>Cc1ccc(Br)cc1",
    "CC(=O)Cl.NCc1ccccc1>>CC(=O)NCc1ccccc1",
    "CC(=O)O.OCC(C)C>>CC(=O)OCC(C)C",
    "CC(=O)Cl.NC1CC1>>CC(=O)NC1CC1",
]


class _InMainProcess(TemplateRetroModel):
    """The same templates, predicting in the main process (no replica)."""

    def replica(self) -> None:  # type: ignore[override]
        return None


class _Failing(TemplateRetroModel):
    """Templates whose every model call raises (a back-end that broke)."""

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        raise RuntimeError("weights unreadable")

    def replica(self) -> Replica:
        return Replica.of(self, partial(_Failing, self.templates))


def _unbuildable() -> RetroModel:
    raise RuntimeError("model folder gone")


class _Unbuildable(TemplateRetroModel):
    """A model a worker cannot build (its files vanished under the run)."""

    def replica(self) -> Replica:
        return Replica.of(self, _unbuildable)


def _templates() -> Any:
    return extract_templates(MAPPED)


def _config(tmp_path: Path, out: str, **extra: Any) -> RetroEvalConfig:
    data = tmp_path / "data"
    if not data.exists():
        data.mkdir()
        (data / "test.smi").write_text("\n".join(TARGETS) + "\n")
    options = {
        "data_dir": str(data),
        "model_class": "templates",
        "num_top_results": 5,
        "out": str(tmp_path / out),
        "executor": "serial",
        "batch_size": 2,
        "quiet": True,
        **extra,
    }
    return RetroEvalConfig.from_options(options)


def _rows(tmp_path: Path, out: str) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (tmp_path / out / ROWS_JSONL).read_bytes().splitlines()]


def test_workers_predict_a_replicated_model_with_the_same_rows(tmp_path: Path) -> None:
    run_retro_eval(_config(tmp_path, "main"), model=_InMainProcess(_templates()))
    run_retro_eval(_config(tmp_path, "serial"), model=TemplateRetroModel(_templates()))
    given = TemplateRetroModel(_templates())
    pooled = run_retro_eval(_config(tmp_path, "pool", executor="local", jobs=2), model=given).report
    expected = (tmp_path / "main" / ROWS_JSONL).read_bytes()
    assert (tmp_path / "serial" / ROWS_JSONL).read_bytes() == expected
    assert (tmp_path / "pool" / ROWS_JSONL).read_bytes() == expected
    # the workers predicted: the model given to the run was never asked, yet calls are counted
    assert given.products_predicted == 0
    assert pooled["timing"]["model_calls"] == 4  # 7 targets in batches of 2
    hits = [r["hits"]["syntheseus"]["exact"] for r in _rows(tmp_path, "pool")]
    assert hits[:3] == [0, 0, 0] and hits[3] is None  # rank of the recorded reactants


def test_a_worker_that_cannot_build_the_model_gives_model_errors_and_a_resume_asks_again(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, "out", executor="local", jobs=2)
    run_retro_eval(config, model=_Unbuildable(_templates()))
    rows = _rows(tmp_path, "out")
    assert len(rows) == len(TARGETS)
    assert {r["status"] for r in rows} == {"model_error"}
    assert {r["error"]["detail"] for r in rows} == {"RuntimeError: model folder gone"}
    assert len((tmp_path / "out" / JOURNAL_JSONL).read_bytes().splitlines()) == 1  # header
    run_retro_eval(config, model=TemplateRetroModel(_templates()))
    run_retro_eval(_config(tmp_path, "fresh"), model=TemplateRetroModel(_templates()))
    assert _rows(tmp_path, "out") == _rows(tmp_path, "fresh")


def test_a_failing_model_stops_a_strict_run_from_a_worker_with_the_batch_named(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, "out", executor="local", jobs=2, strict=True)
    with pytest.raises(BackendError, match=r"failed on a batch of 2 products .*weights unread"):
        run_retro_eval(config, model=_Failing(_templates()))


def test_a_failing_model_without_strict_gives_a_model_error_per_product(tmp_path: Path) -> None:
    run_retro_eval(_config(tmp_path, "out", executor="local", jobs=2), model=_Failing(_templates()))
    rows = _rows(tmp_path, "out")
    assert [r["status"] for r in rows] == ["model_error"] * len(TARGETS)
    assert rows[0]["error"] == {"reason": "RuntimeError", "detail": "weights unreadable"}


def test_a_target_whose_scoring_fails_gets_an_error_row_and_the_rest_are_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.families.retro import score_pass

    real = score_pass.score_chunk

    def flaky(items: list[Any]) -> list[dict[str, Any]]:
        if items[0][0].target["product"] == "CCCOC(C)=O":
            raise ValueError("scorer broke")
        return real(items)

    monkeypatch.setattr(score_pass, "score_chunk", flaky)
    run_retro_eval(_config(tmp_path, "out"), model=TemplateRetroModel(_templates()))
    rows = _rows(tmp_path, "out")
    broken = [r for r in rows if r["status"] == "error"]
    assert [r["product"] for r in broken] == ["CCCOC(C)=O"]
    assert broken[0]["error"] == {"reason": "exception", "detail": "ValueError: scorer broke"}
    assert broken[0]["n_outputs"] == 1
    assert sum(r["status"] != "error" for r in rows) == len(TARGETS) - 1
