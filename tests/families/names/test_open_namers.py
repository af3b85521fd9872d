"""The three real open namers driven through chemgauge, each in its own environment
(``make namers`` installs them): names, an abstention, a timeout and a crash per molecule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import missing

from chemgauge.errors import ConfigError
from chemgauge.families.names import coverage
from chemgauge.families.names.namer_envs import find_env

pytestmark = pytest.mark.external

NAMERS = ("orthonym", "openclatura", "nispo")
# ethanol and paracetamol are named by all three; a bare iron atom is declined by Orthonym
# and openclatura (nispo names it 'iron'); the last one is where the crash is provoked.
STRUCTURES = ["CCO", "CC(=O)Nc1ccc(O)cc1", "[Fe]", "c1ccccc1"]


def _env(name: str) -> None:
    try:
        find_env(name)
    except ConfigError as error:
        missing(f"namer environment {name}", str(error))


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", NAMERS)
def test_a_real_namer_names_abstains_and_a_crash_is_that_molecules_alone(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _env(name)
    smiles = tmp_path / "in.smi"
    smiles.write_text("\n".join(STRUCTURES) + "\n")
    monkeypatch.setenv("CHEMGAUGE_NAMER_EXIT_ON", "c1ccccc1")  # the child dies on benzene
    report = coverage(smiles=smiles, out=tmp_path / "run", namer=name, jobs=1)
    rows = _rows(tmp_path / "run")
    statuses = [r["namer_status"] for r in rows]
    assert statuses[:2] == ["named", "named"]
    assert statuses[3] == "crashed" and rows[3]["name"] is None
    assert rows[3]["strict"] == "abstained"  # not emitted, still in the denominator
    if name != "nispo":
        assert statuses[2] == "abstained" and rows[2]["strict"] == "abstained"
    assert [r["strict"] for r in rows[:2]] == ["rt_valid", "rt_valid"]
    assert report["metrics"]["total"] == 4
    strict = report["metrics"]["lenses"]["strict"]
    assert strict["coverage"]["n"] == 4 and strict["abs_rt_valid"]["n"] == 4
    namer = report["provenance"]["backends"]["namer"]
    assert namer["namer"] == name and namer["version"] == namer["runtime_version"]
    assert len(namer["env_sha256"]) == 64 and namer["outcomes"]["crashed"] == 1


@pytest.mark.parametrize("name", NAMERS)
def test_a_molecule_over_the_timeout_is_the_namers_timeout(name: str, tmp_path: Path) -> None:
    _env(name)
    smiles = tmp_path / "in.smi"
    # a mid-sized drug: no namer answers it within a tenth of a millisecond
    smiles.write_text(
        "CC(C)c1c(C(=O)Nc2ccccc2)c(-c2ccccc2)c(-c2ccc(F)cc2)n1CC[C@@H](O)C[C@@H](O)CC(=O)O\n"
    )
    report = coverage(
        smiles=smiles, out=tmp_path / "run", namer=name, jobs=1, molecule_timeout=0.0001
    )
    rows = _rows(tmp_path / "run")
    assert [r["namer_status"] for r in rows] == ["timeout"]
    assert report["metrics"]["lenses"]["strict"]["coverage"]["n"] == 1
