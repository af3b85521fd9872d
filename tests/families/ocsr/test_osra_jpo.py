"""The real OSRA path end to end: ``ocsr import`` and ``ocsr run -m osra --run`` on real
JPO images, checked against the 2020 review's stored OSRA output for the same images.

The five images are ones where OSRA 2.1.3 prints the same molfile as the review's archived
OSRA run, coordinates included (checked here too): three exact answers (one with E/Z
stereo), one wrong graph and one graph that fails validation, so statuses, validation,
identity verdicts and the exact count are all exercised.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path, PurePosixPath

import pytest
from tests.conftest import require_program, shared_file
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.families.ocsr.review import iter_tar_molfiles
from chemgauge.families.ocsr.scoring import compare_keys, text_keys

pytestmark = [pytest.mark.slow, pytest.mark.external]

#: image stem -> (status, exact verdict) of OSRA 2.1.3, equal to the archived OSRA output's.
EXPECTED = {
    "2008163035_4_chem": ("completed", "match"),
    "2008247887_253_chem": ("completed", "match"),
    "2008208139_31_chem": ("completed", "match"),  # C/C=C1\SC(=S)NC1=O: E/Z kept
    "2008156347_5_chem": ("completed", "mismatch"),
    "2008247887_263_chem": ("completed", "no_candidate"),  # OSRA's graph does not sanitize
}


def _extract(archive: Path, folder: Path, suffix: str) -> Path:
    """Only the chosen images' members of a review archive, flat in ``folder``."""
    folder.mkdir(parents=True)
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            name = PurePosixPath(member.name)
            if member.isfile() and name.stem in EXPECTED and name.suffix == suffix:
                handle = tar.extractfile(member)
                assert handle is not None
                (folder / name.name).write_bytes(handle.read())
    assert len(list(folder.iterdir())) == len(EXPECTED)
    return folder


def test_osra_run_on_real_jpo_images_agrees_with_the_review(tmp_path: Path) -> None:
    require_program("osra")
    assets = "ocsr_review/assets"
    images = _extract(shared_file(f"{assets}/images/JPO.tar.gz"), tmp_path / "img", ".png")
    references = _extract(
        shared_file(f"{assets}/reference/JPO_mol_ref.tar.gz"), tmp_path / "ref", ".sdf"
    )
    archived = {
        stem: text
        for folder, stem, text in iter_tar_molfiles(shared_file(f"{assets}/results/JPO.tar.gz"))
        if folder == "osra" and stem in EXPECTED
    }
    runner = CliRunner()
    manifest = tmp_path / "manifest.json"
    imported = runner.invoke(
        app,
        [
            "ocsr", "import", "--images", str(images), "--references", str(references),
            "--out", str(manifest), "--name", "JPO sample", "--attribution", "JPO",
            "--licence", "MIT",
        ],
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert "5 images, 5 with a usable reference" in imported.output
    out = tmp_path / "out"
    run = runner.invoke(
        app,
        [
            "ocsr", "run", "--manifest", str(manifest), "--model", "osra", "-o", str(out), "--run",
            "--jobs", "2", "--per-workflow-seconds", "120", "--quiet", "--no-html",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    rows = {
        row["case_id"]: row
        for row in map(json.loads, (out / "scored.jsonl").read_text().splitlines())
    }
    assert set(rows) == set(EXPECTED)
    for stem, (status, verdict) in EXPECTED.items():
        row = rows[stem]
        assert (row["status"], row["identity"]["exact"]) == (status, verdict), stem
        assert row["recognition"]["backend_version"].startswith("osra 2.1")
        # The live molfile is the review's archived one (below the header line that carries
        # a timestamp), so it scores the same.
        live = row["recognition"]["candidate_text"].splitlines()[3:]
        assert live == archived[stem].splitlines()[3:], stem
        stored, _ = text_keys(archived[stem], "molfile")
        assert row["candidate"].get("smiles") == stored.smiles, stem
        reference, _ = text_keys((references / f"{stem}.sdf").read_text(), "molfile")
        assert compare_keys(reference, stored)["exact"] == verdict, stem
    assert rows["2008247887_263_chem"]["candidate"]["accepted"] is False
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["finite_reference"]["policies"]["exact"]["completed_exact"] == 3
    assert report["config"]["backend"]["programs"]["osra"] != "missing"
    assert report["provenance"]["backends"]["recognizer"]["programs"]["osra"] != "missing"
    assert runner.invoke(app, ["verify", str(out)]).exit_code == 0
