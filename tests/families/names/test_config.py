"""The one config of ``names coverage``: every check names its flag, only what decides a
row's class is hashed, and the command line and the Python API build the same object."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.eval.executors import MAX_LOCAL_JOBS
from chemgauge.families.names.config import CoverageConfig


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"jobs": 0}, f"--jobs must be between 1 and {MAX_LOCAL_JOBS} on this machine"),
        ({"jobs": 65}, f"--jobs must be between 1 and {MAX_LOCAL_JOBS} on this machine"),
        ({"timeout": 0.0}, "--timeout must be a positive number of seconds"),
        ({"namer_timeout": math.inf}, "--namer-timeout must be a positive number of seconds"),
        ({"max_opsin_errors": 1.5}, "--max-opsin-errors must be between 0 and 1"),
        ({"model": "other", "namer_cmd": "x"}, "it cannot go with --model other"),
        ({"model": "command"}, "--model command needs --namer-cmd CMD"),
    ],
)
def test_every_refused_value_names_its_flag(flags: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        CoverageConfig(**flags)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert "Config" not in str(caught.value), "a flag, never an internal class"


def test_the_command_reports_a_bad_jobs_value_by_its_flag(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("smiles\tname\nCCO\tethanol\n")
    run = tmp_path / "run"
    args = ["names", "coverage", "-i", str(pairs), "-o", str(run), "--jobs", "0"]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception).startswith(f"--jobs must be between 1 and {MAX_LOCAL_JOBS}")
    assert str(result.exception).endswith("got 0")
    assert not run.exists(), "refused before any output was claimed"


def test_the_namer_is_the_model_or_command_for_a_namer_command() -> None:
    assert CoverageConfig().namer is None
    assert CoverageConfig(namer_cmd="my-namer").namer == "command"
    assert CoverageConfig(model="command", namer_cmd="my-namer").namer == "command"
    assert CoverageConfig(model="orthonym").namer == "orthonym"
    assert CoverageConfig(namer_cmd="my-namer").namer_flag == "--namer-cmd"
    assert CoverageConfig(model="orthonym").namer_flag == "--model orthonym"


def test_only_what_decides_a_class_is_described() -> None:
    base = CoverageConfig(abstain_marker=("n/a", "?", "n/a"), pin_pct=97.5)
    described = base.describe()
    assert described == {
        "abstain_markers": ["?", "n/a"],
        "pin_pct": 97.5,
        "lenses": {"parity": "parity", "strict": "strict_key", "exact": "inchikey"},
        "reference_lenses": False,
        "max_opsin_errors": 0.01,
    }
    timing = CoverageConfig(
        abstain_marker=("?", "n/a"), pin_pct=97.5, jobs=4, timeout=5.0, restart=True
    )
    assert timing.describe() == described
    assert CoverageConfig(abstain_marker=("?",), pin_pct=97.5).describe() != described


def test_the_reference_lenses_are_opt_in_and_part_of_the_config() -> None:
    off, on = CoverageConfig(), CoverageConfig(reference_lenses=True)
    assert off.lenses == ("parity", "strict", "exact")
    assert on.lenses == ("parity", "strict", "exact", "reference_parity", "reference_strict")
    assert on.describe()["lenses"] == {
        "parity": "parity",
        "strict": "strict_key",
        "exact": "inchikey",
        "reference_parity": "orthonym_reference.parity",
        "reference_strict": "orthonym_reference.strict",
    }
    assert on.describe()["reference_lenses"] is True
    # The flag changes the rows, so it changes the run's config hash (no resume across it).
    assert on.describe() != off.describe()
    assert CoverageConfig.from_flags({"reference_lenses": True}) == on


def test_the_api_flags_are_checked_by_name() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'jobs'"):
        CoverageConfig.from_flags({"job": 1})
    single = CoverageConfig.from_flags({"abstain_marker": "n/a", "jobs": 1})
    assert single == CoverageConfig(abstain_marker=("n/a",), jobs=1)
    assert CoverageConfig.from_flags({"abstain_marker": ["a", "b"]}).abstain_marker == ("a", "b")
