"""``ocsr import``: every reference checked, missing and invalid ones apart, abbreviations read,
authored expectations checked, and an over-limit image recorded (the run refuses it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rdkit import Chem
from tests.reliability.family_readers import ETHANOL_MOLFILE, png_bytes
from typer.testing import CliRunner

from chemgauge.chem import parse_smiles
from chemgauge.chem.molfile import add_abbreviation, mol_to_molfile
from chemgauge.cli.app import app
from chemgauge.errors import InputFileError
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
from chemgauge.families.ocsr.external import build_import
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.ocsr.runner import run_attempts

BOC_ALA = "CC(C)(C)OC(=O)N[C@@H](C)C(=O)O"


def _image_set(folder: Path) -> tuple[Path, Path]:
    """Images and references covering every import outcome (see the test below)."""
    images, references = folder / "images", folder / "references"
    images.mkdir(parents=True)
    references.mkdir()
    for stem in ("boc", "ethanol", "missing", "invalid", "unsupported"):
        (images / f"{stem}.png").write_bytes(png_bytes(40, 30))
    (images / "huge.png").write_bytes(png_bytes(60_000, 60_000, idat=b"x"))  # declares 3.6 GP
    (images / "text.png").write_bytes(b"not an image at all\n")
    boc = add_abbreviation(parse_smiles(BOC_ALA), "Boc", range(7))
    (references / "boc.mol").write_text(mol_to_molfile(boc))
    for stem in ("ethanol", "huge", "text", "orphan"):
        (references / f"{stem}.mol").write_text(ETHANOL_MOLFILE)
    pentavalent = Chem.MolFromSmiles("CC(C)(C)(C)C", sanitize=False)
    (references / "invalid.mol").write_text(Chem.MolToMolBlock(pentavalent))
    (references / "unsupported.mol").write_text(mol_to_molfile(parse_smiles("*CCO")))
    return images, references


def _build(folder: Path, **options: Any) -> Any:
    images, references = _image_set(folder)
    return build_import(
        images,
        references,
        folder / "manifest.json",
        name="x",
        attribution="a",
        licence="l",
        **options,
    )


def test_import_reports_each_outcome_apart(tmp_path: Path) -> None:
    imported = _build(tmp_path)
    summary = imported.summary
    assert summary.images == 7 and summary.with_reference == 4
    assert summary.missing_reference == ["missing"]
    assert list(summary.invalid_reference) == ["invalid"]
    assert "Explicit valence for atom # 1 C, 5" in summary.invalid_reference["invalid"]
    assert list(summary.unsupported_reference) == ["unsupported"]
    assert summary.references_without_image == ["orphan"]
    assert sorted(summary.refused_images) == ["huge", "text"]
    assert "declares 60000 x 60000 pixels" in summary.refused_images["huge"]
    assert "not an image format" in summary.refused_images["text"]
    cases = imported.manifest.by_id
    assert cases["boc"].reference is not None
    assert cases["boc"].reference.abbreviations == ["Boc"]  # read from the SUP group
    assert cases["boc"].reference.checks["formula"] == "C8H15NO4"
    assert cases["ethanol"].reference.abbreviations == []
    assert cases["missing"].no_reference_reason == "no reference file"
    assert cases["invalid"].no_reference_reason.startswith("reference is not a valid graph")
    # The refused images are cases like any other; the run records them not_run.
    assert (cases["huge"].width, cases["huge"].height) == (60_000, 60_000)
    assert (cases["text"].width, cases["text"].height) == (None, None)
    manifest = load_manifest(tmp_path / "manifest.json")
    RECOGNIZERS.register("test_import_ethanol", lambda image: "CCO", replace=True)
    rows = run_attempts(manifest, PythonRecognizer("test_import_ethanol"), RunConfig(), tmp_path)
    by_case = {row["case_id"]: row for row in rows}
    assert by_case["huge"]["status"] == by_case["text"]["status"] == "not_run"
    assert by_case["huge"]["not_run_reason"].startswith("image refused: image declares 60000")
    assert by_case["ethanol"]["status"] == "completed"


def _expect(folder: Path, table: dict[str, Any]) -> Path:
    path = folder / "expected.json"
    path.write_text(json.dumps(table))
    return path


def test_authored_expectations_are_checked(tmp_path: Path) -> None:
    expectations = {
        "boc": {"formula": "C8H15NO4", "heavy_atoms": 13, "bonds": 12, "cip": ["S"]},
        "ethanol": {"formula": "C2H6O", "cip": ["R"]},  # the molfile has no stereocentre
        "missing": {"formula": "C2H6O"},  # no reference to check: counted, not an error
    }
    imported = _build(tmp_path, expectations=_expect(tmp_path, expectations))
    summary = imported.summary
    assert summary.expectations_checked == 2 and summary.expectations_unchecked == ["missing"]
    assert summary.failed_expectations == {"ethanol": "cip expected ['R'], molfile gives []"}
    boc = imported.manifest.by_id["boc"].reference
    assert boc is not None and boc.checks["expectations"] == expectations["boc"]
    ethanol = imported.manifest.by_id["ethanol"]
    assert ethanol.reference is None
    assert ethanol.no_reference_reason == (
        "reference fails its authored expectations: cip expected ['R'], molfile gives []"
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"nosuch": {"formula": "C"}}, "expectations for 'nosuch': no image with that stem"),
        ({"boc": {"formul": "C"}}, "expectations for 'boc': unknown field 'formul'"),
        ({"boc": {"bonds": "12"}}, "expectations for 'boc': bonds must be an integer"),
        ({"boc": {"cip": "S"}}, "expectations for 'boc': cip must be a list of labels"),
        ([1], "expectations must be a JSON object of image stem -> expected facts"),
    ],
)
def test_bad_expectations_name_file_and_stem(tmp_path: Path, table: Any, message: str) -> None:
    path = _expect(tmp_path, table)
    with pytest.raises(InputFileError, match=message) as info:
        _build(tmp_path, expectations=path)
    assert "expected.json" in str(info.value)


def test_cli_import_prints_each_outcome(tmp_path: Path) -> None:
    images, references = _image_set(tmp_path)
    args = [
        "ocsr", "import", "--images", str(images), "--references", str(references),
        "--name", "x", "--attribution", "a", "--licence", "l",
    ]  # fmt: skip
    quiet = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "q.json"), "-q"])
    assert quiet.exit_code == 0 and quiet.output == "" and (tmp_path / "q.json").is_file()
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "q.json").read_bytes()
    out = result.output
    assert "7 images, 4 with a usable reference" in out
    assert "1 without a reference file" in out
    assert "1 with an invalid reference (invalid: sanitization failed" in out
    assert "1 with unsupported features" in out
    assert "2 images refused by the image limits (recorded; the run records them not_run)" in out
    assert "1 reference file(s) without an image (orphan)" in out
