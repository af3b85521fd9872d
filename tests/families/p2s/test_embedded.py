"""The embedded release: what `chemgauge p2s` runs on without a data argument."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from tests.conftest import require_module
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.families.p2s.audit import audit_dataset
from chemgauge.families.p2s.build import MANIFEST
from chemgauge.families.p2s.embedded import (
    DEFAULT_DIRECTORIES,
    DEFAULT_RECORDS,
    DEFAULT_SOURCES,
    default_data,
    nci_sources,
)
from chemgauge.families.p2s.publicattack import chi_square_sf
from chemgauge.families.p2s.release import release_files
from chemgauge.families.p2s.taskfile import load_directory

runner = CliRunner()


def test_the_release_is_what_the_build_script_asks_for() -> None:
    data = default_data()
    manifest = json.loads((data / MANIFEST).read_text())
    config = manifest["config"]
    assert tuple(config["directories"]) == DEFAULT_DIRECTORIES
    assert (config["records"], config["draw_sources"], config["seed"]) == (
        DEFAULT_RECORDS,
        True,
        0,
    )
    assert config["provider"]["name"] == "xtb"
    scaffolds = "".join(f"{s}\n" for s in nci_sources(DEFAULT_SOURCES)).encode()
    digest = hashlib.sha256(scaffolds).hexdigest()
    assert manifest["provenance"]["input_sha256"]["sources"] == digest
    assert manifest["audit"]["passed"] is True
    assert len(manifest["secret_sha256"]) == 64
    # the release alone: no source list, build records, journal or secret beside it
    shipped = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    assert shipped == sorted(release_files(DEFAULT_DIRECTORIES))
    for directory in DEFAULT_DIRECTORIES:
        # the seed's correct/shuffled size, exactly
        assert manifest["tasks"][directory]["correct"] == DEFAULT_RECORDS
        assert manifest["tasks"][directory]["shuffled"] == DEFAULT_RECORDS


def test_counterfactual_offsets_are_uniform() -> None:
    """(counterfactual label - correct label) mod K over 1..K-1: chi-square at 0.05."""
    for directory in DEFAULT_DIRECTORIES:
        view = load_directory(default_data(), directory)["counterfactual"]
        counts = Counter(
            (lab.label - (lab.source_label or 0)) % len(task.candidates)
            for task in view.tasks
            for lab in [view.labels[task.record_id]]
        )
        assert counts[0] == 0 and len(view.tasks) >= 2 * DEFAULT_RECORDS - 10
        expected = len(view.tasks) / 3
        statistic = sum((counts[o] - expected) ** 2 / expected for o in (1, 2, 3))
        assert chi_square_sf(statistic, 2) > 0.05, (directory, counts)


def test_no_public_rule_earns_a_claim_on_it() -> None:
    report = audit_dataset(default_data())
    assert report["passed"], report["failures"]
    public = report["public_knowledge"]
    assert public["claim_attacks_with_unadjusted_use_claim"] == []
    for directory in DEFAULT_DIRECTORIES:
        attacks = public["directories"][directory]["claim_attacks"]
        assert len(attacks) == 13 and not any(a["use_claim"] for a in attacks.values())
    for view, block in report["views"].items():
        assert not block["leaks"]["known_molecule"]["beats_chance"], view


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


@pytest.mark.slow
def test_property_oracle_earns_the_claim_on_every_directory(tmp_path: Path) -> None:
    require_module("tblite.interface")
    for per_view in ([], ["--per-view"]):
        out = tmp_path / ("per_view" if per_view else "blind")
        args = ["p2s", "run", "-m", "property_oracle", "-o", str(out), "-q", *per_view]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        report = json.loads((out / "property_oracle" / "report.json").read_text())
        for directory in DEFAULT_DIRECTORIES:
            assert report["metrics"]["properties"][directory]["claim"]["use_claim"] is True


def test_the_build_secret_ships_nowhere_in_the_package() -> None:
    """The secret is 64 hex digits whose commitment the manifest publishes: no 64-hex token in
    any file of the package's p2s folder commits to it, and no private-folder file ships."""
    import re

    from chemgauge.families.p2s.build import RECORDS, secret_commitment
    from chemgauge.families.p2s.compute import PROPERTY_JOURNAL
    from chemgauge.families.p2s.release import SECRET_FILE

    commitment = json.loads((default_data() / MANIFEST).read_text())["secret_sha256"]
    package = default_data().parents[1]
    tokens = 0
    for path in package.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        assert path.name not in (SECRET_FILE, RECORDS, PROPERTY_JOURNAL), path
        for token in re.findall(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", path.read_bytes()):
            tokens += 1
            assert secret_commitment(token.decode()) != commitment, path
    assert tokens > 0  # the scan saw the manifest's own hashes
