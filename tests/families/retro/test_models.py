"""The retro systems registry (one factory shape, open to plugins) and the built-in models."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tests.conftest import require_module

from chemgauge.errors import BackendError, ConfigError, InputFileError, UnknownNameError
from chemgauge.families.retro.engine.base import (
    CallableRetroModel,
    RetroModel,
    RetroModelOptions,
)
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.engine.registry import (
    RETRO_SYSTEMS,
    build_retro_model,
    retro_model_names,
)


def _at(path: str | Path) -> RetroModelOptions:
    return RetroModelOptions(model_dir=Path(path))


def test_names_and_did_you_mean() -> None:
    assert retro_model_names()[:5] == [
        "predictions",
        "templates",
        "neuralsym",
        "similarity",
        "syntheseus:<ModelClass>",
    ]
    assert RETRO_SYSTEMS.kind == "retro system" and RETRO_SYSTEMS.group == "chemgauge.retro_systems"
    with pytest.raises(
        UnknownNameError, match=r"unknown retro system 'predictons'\. Did you mean 'predictions'"
    ):
        build_retro_model("predictons")


def test_a_plugin_factory_gets_the_one_options_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third-party model registers ``factory(options)`` under chemgauge.retro_systems."""
    seen: list[RetroModelOptions] = []

    def factory(options: RetroModelOptions) -> RetroModel:
        seen.append(options)
        return CallableRetroModel(lambda ps: [["CC"] for _ in ps], "mine")

    monkeypatch.setitem(RETRO_SYSTEMS._entries, "mine", factory)
    options = RetroModelOptions(model_dir=tmp_path, num_gpus=0, model_kwargs={"beam": 4})
    model = build_retro_model("mine", options)
    assert model.name == "mine" and seen == [options]
    with pytest.raises(ConfigError, match="has no variants, got predictions:x"):
        build_retro_model("predictions:x", _at(tmp_path))


def test_a_factory_returning_no_model_is_named() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(RETRO_SYSTEMS._entries, "broken", lambda options: "not a model")
        with pytest.raises(ConfigError, match="factory 'broken' returned str, not a RetroModel"):
            build_retro_model("broken")


def test_the_syntheseus_factory_needs_its_model_class() -> None:
    with pytest.raises(ConfigError, match=r"needs its model class: syntheseus:<ModelClass>"):
        build_retro_model("syntheseus")


def test_callable_model_cuts_and_counts_outputs() -> None:
    calls: list[list[str]] = []

    def fn(products: list[str]) -> list[list[str]]:
        calls.append(products)
        return [[f"{p}.O"] * 5 for p in products]

    model = CallableRetroModel(fn, "five")
    out = model.predict(["CC", "CN", "CC"], num_results=3)
    assert calls == [["CC", "CN"]]  # inputs deduplicated before the back-end sees them
    assert [o.outputs for o in out] == [("CC.O",) * 3, ("CN.O",) * 3, ("CC.O",) * 3]
    assert out[0].returned == 5


def test_a_back_end_returning_the_wrong_shape_is_an_error() -> None:
    with pytest.raises(BackendError, match="returned 1 output lists for 2 products"):
        CallableRetroModel(lambda ps: [["C"]]).predict(["CC", "CN"], 3)
    with pytest.raises(BackendError, match="list of SMILES strings"):
        CallableRetroModel(lambda ps: ["CC" for _ in ps]).predict(["CC"], 3)


def test_predictions_file_matches_any_spelling_and_counts_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"product": "C(C)NC(C)=O", "predictions": ["CCN.CC(=O)O", "x"]}\n'
        '{"product": "CCNC(C)=O", "predictions": ["CCN.CC(=O)O", "x"]}\n'
        '{"product": "CC", "predictions": "CC"}\n'
        '{"product": "C1CC", "predictions": []}\n'
    )
    model = build_retro_model("predictions", _at(path))
    assert isinstance(model, PredictionsFileModel)
    (out,) = model.predict(["CCNC(=O)C"], 10)
    assert out.outputs == ("CCN.CC(=O)O", "x")
    assert model.has("O=C(C)NCC") and not model.has("CCO")
    assert model.predict(["CCO"], 10)[0].outputs == ()
    assert model.stats.to_dict()["rejections_by_reason"] == {
        "bad_schema": 1,
        "unparsable_product": 1,
    }


def test_conflicting_lines_for_one_product_name_both(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"product": "CCO", "predictions": ["C"]}\n{"product": "OCC", "predictions": ["N"]}\n'
    )
    model = build_retro_model("predictions", _at(path))  # products are keyed at prepare()
    with pytest.raises(InputFileError, match=r"p.jsonl, line 2: product also on line 1"):
        model.prepare()


def test_expected_products_are_not_canonicalized_again(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"product": "CCO", "predictions": ["C"]}\n{"product": "CC(=O)O", "predictions": ["N"]}\n'
    )
    model = build_retro_model("predictions", _at(path))
    assert isinstance(model, PredictionsFileModel)
    model.expect_product("CCO")  # canonical, and spelled exactly so in the file
    model.expect_product("c1ccccc1")  # not in the file: nothing to remember
    model.prepare()
    assert model._canon.misses == 1  # only CC(=O)O was canonicalized
    assert [o.outputs for o in model.predict(["OCC", "CC(O)=O"], 5)] == [("C",), ("N",)]


def test_predictions_folder_must_hold_one_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"exactly one \*.jsonl"):
        build_retro_model("predictions", _at(tmp_path))
    (tmp_path / "a.jsonl").write_text("")
    assert isinstance(build_retro_model("predictions", _at(tmp_path)), PredictionsFileModel)


def test_syntheseus_model_class_names_are_checked() -> None:
    require_module("syntheseus")  # a failure under CI=true, never a silent pass
    with pytest.raises(ConfigError, match="Did you mean 'LocalRetro'"):
        build_retro_model("syntheseus:LocalRetr")
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(ConfigError, match=r"pip install 'syntheseus\[local-retro\]'"):
            build_retro_model("syntheseus:LocalRetro", _at("/nonexistent"))


def test_a_missing_syntheseus_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "syntheseus", None)  # import syntheseus raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'chemgauge\[syntheseus\]'"):
        build_retro_model("syntheseus:LocalRetro")


def test_predictions_are_read_back_whatever_the_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(
        b'{"product": "CCO", "predictions": ["C"]}\r'
        b'{"product": "CC(=O)O", "predictions": ["N", "O"]}\r\n'
        b'{"product": "CCN", "predictions": []}\n'
    )
    model = build_retro_model("predictions", _at(path))
    outputs = [o.outputs for o in model.predict(["OCC", "CC(O)=O", "NCC"], 5)]
    assert outputs == [("C",), ("N", "O"), ()]
    assert isinstance(model, PredictionsFileModel) and model.stats.accepted == 3


def test_the_static_syntheseus_class_list_is_syntheseus_own() -> None:
    require_module("syntheseus")
    from syntheseus.reaction_prediction.inference.config import BackwardModelClass

    from chemgauge.families.retro.engine.syntheseus_model import SYNTHESEUS_BACKWARD_CLASSES

    assert [c.name for c in BackwardModelClass] == list(SYNTHESEUS_BACKWARD_CLASSES)


def test_a_syntheseus_model_is_built_as_eval_single_step_builds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through syntheseus's real model interface, with a weight-free model class standing in
    for LocalRetro (the injected boundary: the real one needs torch and a checkpoint)."""
    require_module("syntheseus")
    import enum
    from typing import Any

    import syntheseus.reaction_prediction.inference.config as syntheseus_config
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.utils.inference import (
        process_raw_smiles_outputs_backwards,
    )

    from chemgauge.families.retro import RetroEvalConfig, run_retro_eval

    built: dict[str, Any] = {}

    class StandIn(BackwardReactionModel):  # type: ignore[misc]
        def __init__(self, *, model_dir: str | None, device: str = "default", **kwargs: Any):
            super().__init__(**kwargs)
            built.update(model_dir=model_dir, device=device, **kwargs)

        def _get_reactions(self, inputs: list[Any], num_results: int) -> list[Any]:
            raw = ["C1CC", "CN.CC(=O)O", "CC(O)=O.CN", "CCO"][:num_results]
            return [process_raw_smiles_outputs_backwards(m, raw, [{}] * len(raw)) for m in inputs]

        def get_parameters(self) -> list[Any]:
            return []

    fake = enum.Enum("BackwardModelClass", {"LocalRetro": StandIn})
    monkeypatch.setattr(syntheseus_config, "BackwardModelClass", fake)
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\n")
    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(data),
            "model_class": "LocalRetro",  # bare, as syntheseus's command line takes it
            "model_dir": str(tmp_path),
            "num_gpus": "0",
            "skip_repeats": "False",
            "num_top_results": "10",
            "out": str(tmp_path / "out"),
            "executor": "serial",
        }
    )
    run = run_retro_eval(config)
    assert built == {"model_dir": str(tmp_path), "device": "cpu", "remove_duplicates": False}
    [row] = run.rows
    # syntheseus dropped the invalid output; the repeat reached chemgauge
    assert row["n_outputs"] == 3 and row["duplicate_ranks"] == [1]
    assert row["hits"]["syntheseus_keep_repeats"]["exact"] == 0
    assert run.report["metrics"]["model"]["name"] == "syntheseus:LocalRetro"
    written = (tmp_path / "out" / "syntheseus_results.json").read_text()
    assert '"model_class":"StandIn"' in written and '"num_params":0' in written
