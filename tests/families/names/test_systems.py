"""Namers, the names family's systems under test: one registry, one factory shape, the
``command`` namer built in, and the sources of a run checked before anything is written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import BackendError, ConfigError, UnknownNameError
from chemgauge.families.names.api import check_source
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.engine.namer import CommandNamer
from chemgauge.families.names.listing import entries
from chemgauge.families.names.systems import NAMES_SYSTEMS, Namer, build_namer


class _Counting:
    """A namer answering from a dict, abstaining (``None``) on anything else."""

    def __init__(self, names: dict[str, str], extra: int = 0) -> None:
        self.names, self.extra = names, extra

    def name(self, smiles: Sequence[str]) -> list[str | None]:
        return [self.names.get(s) for s in smiles] + ["spare"] * self.extra


def test_the_registry_is_the_families_systems_registry() -> None:
    assert NAMES_SYSTEMS.kind == "names system"
    assert NAMES_SYSTEMS.group == "chemgauge.names_systems"
    assert NAMES_SYSTEMS.names()[0] == "command"
    assert entries()[0] == (
        "names system",
        "command",
        "any program: SMILES on stdin, one name a line on stdout (--namer-cmd)",
        "built in",
    )


def test_the_command_namer_is_built_from_the_config() -> None:
    config = CoverageConfig(namer_cmd="my-namer --batch 'two words'", namer_timeout=5.0)
    namer = build_namer(config)
    assert isinstance(namer, CommandNamer) and isinstance(namer, Namer)
    assert namer.argv == ("my-namer", "--batch", "two words") and namer.timeout_s == 5.0
    with pytest.raises(ConfigError, match="--namer-cmd is empty"):
        build_namer(CoverageConfig(namer_cmd=""))


def test_a_factory_that_returns_no_namer_is_refused() -> None:
    NAMES_SYSTEMS.register("test_not_a_namer", lambda config: object(), replace=True)
    with pytest.raises(ConfigError, match="returned object, not a Namer"):
        build_namer(CoverageConfig(model="test_not_a_namer"))


def _files(tmp_path: Path) -> tuple[Path, Path]:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("smiles\tname\nCCO\tethanol\n")
    smiles = tmp_path / "in.smi"
    smiles.write_text("CCO\nc1ccccc1\n")
    return pairs, smiles


@pytest.mark.parametrize(
    ("use_pairs", "use_smiles", "flags", "error", "message"),
    [
        (False, False, {}, ConfigError, "give exactly one of --input"),
        (True, False, {"namer_cmd": "x"}, ConfigError, "give exactly one of --input"),
        (True, True, {}, ConfigError, "--smiles is read only by a namer"),
        (False, False, {"namer_cmd": "x"}, ConfigError, "--namer-cmd needs --smiles FILE"),
        (False, False, {"model": "test_echo"}, ConfigError, "--model test_echo needs --smiles"),
        (False, True, {"model": "comand"}, UnknownNameError, "Did you mean 'command'?"),
    ],
)
def test_sources_are_checked_naming_flags(
    tmp_path: Path,
    use_pairs: bool,
    use_smiles: bool,
    flags: dict[str, str],
    error: type[Exception],
    message: str,
) -> None:
    pairs, smiles = _files(tmp_path)
    config = CoverageConfig(**flags)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        check_source(pairs if use_pairs else None, smiles if use_smiles else None, config)


def test_a_namer_giving_the_wrong_number_of_names_fails_naming_it(tmp_path: Path) -> None:
    _, smiles = _files(tmp_path)
    NAMES_SYSTEMS.register("test_spare", lambda config: _Counting({}, extra=1), replace=True)
    run = tmp_path / "run"
    args = ["names", "coverage", "-m", "test_spare", "--smiles", str(smiles), "-o", str(run)]
    result = CliRunner().invoke(app, [*args, "-q"])
    assert isinstance(result.exception, BackendError)
    assert "--model test_spare returned 3 names for 2 structures" in str(result.exception)
    assert not (run / "rows.jsonl").exists() and not (run / "report.json").exists()


@pytest.mark.external
def test_a_registered_namer_is_scored_by_its_name(tmp_path: Path) -> None:
    """Adding a namer is one registration; ``--model`` then scores it like any other."""
    _, smiles = _files(tmp_path)
    NAMES_SYSTEMS.register("test_dict", lambda config: _Counting({"CCO": "ethanol"}), replace=True)
    run = tmp_path / "run"
    args = ["names", "coverage", "--model", "test_dict", "--smiles", str(smiles), "-o", str(run)]
    result = CliRunner().invoke(app, [*args, "-q", "-j", "1"])
    assert result.exit_code == 0, result.output
    rows = (run / "rows.jsonl").read_text().splitlines()
    assert ['"name":"ethanol"' in r and '"strict":"rt_valid"' in r for r in rows] == [True, False]
    assert '"name":null' in rows[1] and '"strict":"abstained"' in rows[1]
    report = json.loads((run / "report.json").read_text())
    assert report["provenance"]["backends"]["namer"] == {"model": "test_dict"}
    assert "namer" not in report["config"]["coverage"], "which namer never changes a class"
