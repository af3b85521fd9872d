"""Options: seed-style key=value, aliases, and validation before any work."""

from __future__ import annotations

import pytest

from chemgauge.errors import ConfigError
from chemgauge.families.retro.config import RetroEvalConfig


def test_key_value_strings_are_converted() -> None:
    config = RetroEvalConfig.from_options(
        {
            "data_dir": "d",
            "model_class": "predictions",
            "num_top_results": "10",
            "k": "[1, 3,5]",
            "matchers": "stereo_ignored",
            "strict": "true",
            "model_kwargs": '{"a": 1}',
            "limit": "none",
        }
    )
    assert config.num_top_results == 10
    assert config.k == (1, 3, 5)
    assert config.matchers == ("exact", "stereo_ignored")  # exact is always reported
    assert config.strict is True
    assert dict(config.model_kwargs) == {"a": 1}
    assert config.limit is None


def test_default_k_never_exceeds_num_top_results() -> None:
    # syntheseus crashes after scoring when num_top_results < 50 with default print_idxs
    config = RetroEvalConfig.from_options(
        {"data_dir": "d", "model_class": "m", "num_top_results": "7"}
    )
    assert config.k == (1, 3, 5, 7)


def test_k_beyond_num_top_results_fails_before_work() -> None:
    with pytest.raises(ConfigError, match=r"k=20 is outside 1..num_top_results \(10\)"):
        RetroEvalConfig.from_options(
            {"data_dir": "d", "model_class": "m", "num_top_results": 10, "k": "1,20"}
        )


def test_syntheseus_aliases() -> None:
    config = RetroEvalConfig.from_options(
        {"data_dir": "d", "model_class": "m", "num_dataset_truncation": "5", "print_idxs": "[1,2]"}
    )
    assert config.limit == 5 and config.k == (1, 2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"data_dir": "d", "model_class": "m", "num_top_result": "5"},
            "Did you mean 'num_top_results'",
        ),
        ({"data_dir": "d", "model_class": "m", "fodl": "test"}, "Did you mean 'fold'"),
        ({"model_class": "m"}, "missing required option data_dir"),
        ({"data_dir": "d", "model_class": "m", "num_top_results": "x"}, "must be an integer"),
        (
            {"data_dir": "d", "model_class": "m", "matchers": "stereo_ignord"},
            "Did you mean 'stereo_ignored'",
        ),
        ({"data_dir": "d", "model_class": "m", "conventions": "raw"}, "unknown convention 'raw'"),
        ({"data_dir": "d", "model_class": "m", "strict": "maybe"}, "true or false"),
        ({"data_dir": "d", "model_class": "m", "model_kwargs": "[1]"}, "JSON object"),
        ({"data_dir": "d", "model_class": "m", "executor": "gpu"}, "serial, local, ray"),
        (
            {"data_dir": "d", "model_class": "m", "executor": "local", "ray_address": "auto"},
            "needs executor=ray",
        ),
    ],
)
def test_bad_options_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RetroEvalConfig.from_options(options)


def test_row_affecting_options_exclude_k_and_paths() -> None:
    a = RetroEvalConfig(data_dir="a", model_class="m", k=(1,), out="x", jobs=1)
    b = RetroEvalConfig(data_dir="b", model_class="m", k=(1, 5), out="y", jobs=2)
    assert a.row_affecting() == b.row_affecting()
    c = RetroEvalConfig(data_dir="a", model_class="m", num_top_results=10)
    assert a.row_affecting() != c.row_affecting()
