"""syntheseus ``eval-single-step`` keys, in syntheseus's spelling: one test per key."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from chemgauge.errors import ConfigError
from chemgauge.families.retro.config import RetroEvalConfig
from chemgauge.families.retro.engine.registry import RETRO_SYSTEMS, build_retro_model
from chemgauge.families.retro.syntheseus_options import SYNTHESEUS_KEYS

DEFAULT = ("syntheseus", "raw_slots")


def _config(**options: Any) -> RetroEvalConfig:
    return RetroEvalConfig.from_options({"data_dir": "d", "model_class": "m", **options})


@pytest.mark.usefixtures("syntheseus_installed")
def test_every_key_syntheseus_accepts_is_known() -> None:
    """A key a future syntheseus adds fails here until it is mapped or refused."""
    from syntheseus.cli.eval_single_step import EvalConfig

    assert {f.name for f in dataclasses.fields(EvalConfig)} == set(SYNTHESEUS_KEYS)


def test_defaults_follow_syntheseus_where_they_mean_the_same() -> None:
    config = _config()
    assert config.num_top_results == 100  # BaseEvalConfig.num_top_results
    assert config.skip_repeats is True
    assert config.k == (1, 3, 5, 10, 20, 50, 100)
    assert config.conventions == ("syntheseus", "raw_slots")


@pytest.mark.parametrize(
    ("spelling", "fold"),
    [
        ("TEST", "test"),
        ("VALIDATION", "val"),
        ("TRAIN", "train"),
        ("DataFold.TEST", "test"),
        ("test", "test"),
        ("val", "val"),
    ],
)
def test_fold_in_syntheseus_spelling(spelling: str, fold: str) -> None:
    assert _config(fold=spelling).fold == fold


def test_an_unknown_fold_is_refused_before_any_work() -> None:
    with pytest.raises(ConfigError, match=r"unknown fold 'Test'. Did you mean 'test'"):
        _config(fold="Test")  # syntheseus refuses it too (names are case-sensitive)


@pytest.mark.parametrize(
    ("value", "conventions", "picked"),
    [
        ("True", ("syntheseus", "raw_slots"), "syntheseus"),
        ("False", ("syntheseus_keep_repeats", *DEFAULT), "syntheseus_keep_repeats"),
        ("no", ("syntheseus_keep_repeats", *DEFAULT), "syntheseus_keep_repeats"),
    ],
)
def test_skip_repeats(value: str, conventions: tuple[str, ...], picked: str) -> None:
    config = _config(skip_repeats=value)
    assert config.conventions == conventions
    assert config.syntheseus_convention == picked


def test_skip_repeats_convention_is_always_computed() -> None:
    config = _config(skip_repeats="False", conventions="raw_slots")
    assert config.conventions == ("syntheseus_keep_repeats", "raw_slots")


@pytest.mark.parametrize(
    ("options", "matchers"),
    [
        ({"include_results_modulo_stereo": "True"}, ("exact", "stereo_ignored")),
        ({"include_results_modulo_stereo": "False"}, ("exact",)),
        (
            {"include_results_modulo_stereo": "true", "matchers": "exact,inchi"},
            ("exact", "inchi", "stereo_ignored"),
        ),
    ],
)
def test_include_results_modulo_stereo(options: dict[str, str], matchers: tuple[str, ...]) -> None:
    assert _config(**options).matchers == matchers


def test_include_results_modulo_stereo_false_contradicting_matchers_is_refused() -> None:
    with pytest.raises(ConfigError, match="contradicts matchers=exact,stereo_ignored"):
        _config(include_results_modulo_stereo="False", matchers="exact,stereo_ignored")


def test_num_top_results_and_print_idxs_and_num_dataset_truncation() -> None:
    config = _config(num_top_results="10", print_idxs="[1, 5, 10]", num_dataset_truncation="7")
    assert (config.num_top_results, config.k, config.limit) == (10, (1, 5, 10), 7)
    assert _config(num_dataset_truncation="null").limit is None


def test_batch_size_results_dir_model_dir_data_dir() -> None:
    config = _config(model_dir="ckpt", batch_size="16", results_dir="out")
    assert (config.data_dir, config.model_dir, config.batch_size, config.out) == (
        "d",
        "ckpt",
        16,
        "out",
    )


def test_model_kwargs_as_json_and_dotted() -> None:
    config = _config(**{"model_kwargs.beam_size": "20", "model_kwargs.use_fp16": "False"})
    assert dict(config.model_kwargs) == {"beam_size": 20, "use_fp16": False}
    both = _config(model_kwargs='{"a": 1}', **{"model_kwargs.b": "x"})
    assert dict(both.model_kwargs) == {"a": 1, "b": "x"}
    with pytest.raises(ConfigError, match="disagree on a"):
        _config(model_kwargs='{"a": 1}', **{"model_kwargs.a": "2"})


def test_model_class_bare_syntheseus_name_means_syntheseus_model() -> None:
    assert _config(model_class="LocalRetro").model_class == "syntheseus:LocalRetro"
    assert _config(model_class="RootAligned").model_class == "syntheseus:RootAligned"
    assert _config(model_class="syntheseus:MEGAN").model_class == "syntheseus:MEGAN"
    assert _config(model_class="predictions").model_class == "predictions"


def test_a_misspelt_syntheseus_model_class_suggests_the_syntheseus_name() -> None:
    with pytest.raises(ConfigError, match=r"Did you mean 'syntheseus:LocalRetro'"):
        build_retro_model("localretro")


def test_a_registered_model_named_like_a_syntheseus_class_wins(
    caplog: pytest.LogCaptureFixture,
) -> None:
    RETRO_SYSTEMS.register("MEGAN", lambda options: None)  # type: ignore[arg-type, return-value]
    try:
        assert _config(model_class="MEGAN").model_class == "MEGAN"
        assert "model_class=syntheseus:MEGAN" in caplog.text
    finally:
        RETRO_SYSTEMS._entries.pop("MEGAN")


def test_num_gpus_places_a_syntheseus_model_as_syntheseus_does() -> None:
    from chemgauge.families.retro.engine.syntheseus_model import syntheseus_device

    assert _config(num_gpus="0").num_gpus == 0
    assert [syntheseus_device(n) for n in (None, 0, 1)] == [None, "cpu", "cuda:0"]
    with pytest.raises(ConfigError, match="num_gpus=2: chemgauge drives a syntheseus model"):
        syntheseus_device(2)
    with pytest.raises(ConfigError, match="num_gpus must be >= 0"):
        _config(num_gpus="-1")


@pytest.mark.parametrize(("value", "restart"), [("True", False), ("False", True)])
def test_resumable(value: str, restart: bool) -> None:
    assert _config(resumable=value).restart is restart


def test_resumable_contradicting_restart_is_refused() -> None:
    assert _config(resumable="True", restart="false").restart is False  # the same request
    with pytest.raises(ConfigError, match=r"given twice \(resumable='True' and restart='true'\)"):
        _config(resumable="True", restart="true")


def test_filestring_names_the_syntheseus_results_file() -> None:
    assert _config(filestring="run7").filestring == "run7"
    with pytest.raises(ConfigError, match="path separator"):
        _config(filestring="../x")


def test_results_dir_is_the_run_folder_as_out_is() -> None:
    assert _config(results_dir="a").out == "a" == _config(out="a").out
    assert _config(results_dir="a", out="a").out == "a"  # the same request twice
    with pytest.raises(ConfigError, match=r"'out' given twice \(results_dir='a' and out='b'\)"):
        _config(results_dir="a", out="b")


def test_save_outputs_true_is_accepted_false_is_refused() -> None:
    assert _config(save_outputs="True").out == "runs/retro"
    with pytest.raises(ConfigError, match=r"save_outputs=False: chemgauge always writes"):
        _config(save_outputs="False")


def test_include_predictions_is_accepted_either_way() -> None:
    assert _config(include_predictions="False").include_predictions is False
    assert _config(include_predictions="True").include_predictions is True


def test_back_translation_keys() -> None:
    assert _config(back_translation_num_results="3").round_trip_num_results == 3
    for key in ("back_translation_config.model_class", "back_translation_config"):
        with pytest.raises(ConfigError, match="use round_trip=chemgauge"):
            _config(**{key: "Chemformer"})


@pytest.mark.usefixtures("syntheseus_installed")
def test_a_syntheseus_command_line_means_the_same_to_both() -> None:
    """The same argv through syntheseus's own config parser and through chemgauge's."""
    from syntheseus.cli.eval_single_step import EvalConfig
    from syntheseus.reaction_prediction.utils.config import get_config

    argv = [
        "data_dir=d",
        "model_class=LocalRetro",
        "fold=VALIDATION",
        "num_top_results=20",
        "skip_repeats=False",
        "include_results_modulo_stereo=True",
        "num_dataset_truncation=30",
        "print_idxs=[1,5,20]",
        "batch_size=8",
        "back_translation_num_results=2",
        "model_kwargs.beam=4",
    ]
    theirs = get_config(argv=argv, config_cls=EvalConfig)
    ours = RetroEvalConfig.from_options(dict(a.split("=", 1) for a in argv))
    assert ours.fold == theirs.fold.value
    assert ours.num_top_results == theirs.num_top_results
    assert ours.limit == theirs.num_dataset_truncation
    assert list(ours.k) == list(theirs.print_idxs)
    assert ours.batch_size == theirs.batch_size
    assert ours.skip_repeats == theirs.skip_repeats
    assert ("stereo_ignored" in ours.matchers) == theirs.include_results_modulo_stereo
    assert ours.round_trip_num_results == theirs.back_translation_num_results
    assert dict(ours.model_kwargs) == dict(theirs.model_kwargs)
    assert ours.model_class == f"syntheseus:{theirs.model_class.name}"
