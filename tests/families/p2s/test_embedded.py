"""The embedded release: what `chemgauge p2s` runs on without a data argument."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.families.p2s.build import MANIFEST
from chemgauge.families.p2s.embedded import (
    DEFAULT_DIRECTORIES,
    DEFAULT_RECORDS,
    DEFAULT_SOURCES,
    default_data,
    nci_sources,
)

runner = CliRunner()


def test_the_release_is_what_the_build_script_asks_for() -> None:
    data = default_data()
    manifest = json.loads((data / MANIFEST).read_text())
    config = manifest["config"]
    assert tuple(config["directories"]) == DEFAULT_DIRECTORIES
    assert (config["max_records"], config["seed"], config["provider"]["name"]) == (
        DEFAULT_RECORDS,
        0,
        "xtb",
    )
    shipped = (data / "sources.smi").read_text().split()
    assert shipped == nci_sources(DEFAULT_SOURCES)
    digest = hashlib.sha256((data / "sources.smi").read_bytes()).hexdigest()
    assert manifest["provenance"]["input_sha256"]["sources"] == digest
    assert manifest["audit"]["passed"] is True
    assert not (data / "build_records.jsonl").exists()  # source names and lines stay out


def test_tasks_and_audit_run_on_it_without_a_data_argument() -> None:
    result = runner.invoke(app, ["p2s", "tasks"])
    assert result.exit_code == 0, result.output
    for directory in DEFAULT_DIRECTORIES:
        assert f"{directory}: correct " in result.output
    result = runner.invoke(app, ["p2s", "audit", "-q"])
    assert result.exit_code == 0, result.output
    assert "audit PASSED" in result.output


@pytest.mark.slow
def test_structure_only_and_random_run_on_it_and_make_no_use_claim(tmp_path: Path) -> None:
    for model in ("structure_only", "random"):
        result = runner.invoke(app, ["p2s", "run", "-m", model, "-o", str(tmp_path), "-q"])
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / model / "report.json").read_text())
        assert report["metrics"]["data"]["path"] == str(default_data().resolve())
        for directory in DEFAULT_DIRECTORIES:
            block = report["metrics"]["properties"][directory]
            assert block["views"]["correct"]["accuracy"]["n"] >= DEFAULT_RECORDS - 5
            assert block["claim"]["use_claim"] is False
    claim = runner.invoke(
        app, ["p2s", "claim", "--property", "dipole", "--run", str(tmp_path / "random")]
    )
    assert claim.exit_code == 0 and "use claim: no" in claim.output
