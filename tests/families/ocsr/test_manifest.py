"""Manifest and cohort: references checked at build, hashes verified at load, clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chemgauge.chem.render import embedded_molecule
from chemgauge.errors import ChemgaugeError, InputFileError
from chemgauge.families.ocsr.cohort import COHORT, CohortEntry, build_cohort
from chemgauge.families.ocsr.manifest import Manifest, load_manifest


def test_cohort_cases_references_and_variants(small_cohort: Manifest) -> None:
    cases = small_cohort.by_id
    assert list(cases) == [
        "ethanol",
        "ethanol_11x5",
        "gly_l_ala",
        "gly_l_ala_lowres",
        "gly_l_ala_lowcontrast",
        "gly_l_ala_crop",
        "boc_l_ala_sodium",
        "boc_l_ala_sodium_lowres",
    ]
    assert cases["ethanol_11x5"].reference is None
    assert (cases["ethanol_11x5"].width, cases["ethanol_11x5"].height) == (11, 5)
    assert "cropped" in str(cases["gly_l_ala_crop"].no_reference_reason)
    assert cases["gly_l_ala_lowres"].reference == cases["gly_l_ala"].reference
    assert cases["gly_l_ala_lowres"].parent == "gly_l_ala"
    boc = cases["boc_l_ala_sodium"].reference
    assert boc is not None and boc.abbreviations == ["Boc"]
    assert boc.checks["formula"] == "C8H14NNaO4" and boc.checks["fragments"] == 2
    assert "SUP" in (small_cohort.root / boc.molfile).read_text()
    for case in small_cohort.cases:
        assert embedded_molecule(small_cohort.image_path(case).read_bytes()) is None


def test_default_cohort_has_the_seed_cases() -> None:
    ids = {entry.id for entry in COHORT}
    assert {"ethanol", "gly_l_ala", "cyclo_gly4", "boc_l_ala_sodium"} <= ids
    assert len(ids) >= 7


def test_build_is_deterministic(small_cohort: Manifest, tmp_path: Path) -> None:
    again = build_cohort(tmp_path, COHORT[:1])
    first = small_cohort.by_id["ethanol"]
    assert again.cases[0].sha256 == first.sha256


def test_authored_checks_must_hold(tmp_path: Path) -> None:
    wrong = CohortEntry("bad", "CCO", "C2H6O", 3, 2, 1, cip=("R",))
    with pytest.raises(ChemgaugeError, match="fails its authored checks"):
        build_cohort(tmp_path, (wrong,))


def _copy(small_cohort: Manifest, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(small_cohort.root, target)
    return target / "manifest.json"


def test_changed_image_is_caught(small_cohort: Manifest, tmp_path: Path) -> None:
    path = _copy(small_cohort, tmp_path)
    assert len(load_manifest(path).cases) == 8
    (path.parent / "images" / "ethanol.png").write_bytes(b"changed")
    with pytest.raises(InputFileError, match=r"case 'ethanol': image images/ethanol.png changed"):
        load_manifest(path)


def test_bad_manifest_values_name_file_and_field(small_cohort: Manifest, tmp_path: Path) -> None:
    path = _copy(small_cohort, tmp_path)
    data = json.loads(path.read_text())
    data["cases"][0]["sha256"] = "xyz"
    path.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=r"manifest.json: invalid manifest at cases.0.sha256"):
        load_manifest(path)
    data["cases"][0]["sha256"] = small_cohort.cases[0].sha256
    data["cases"][1]["no_reference_reason"] = None
    path.write_text(json.dumps(data))
    with pytest.raises(
        InputFileError, match="exactly one of 'reference' and 'no_reference_reason'"
    ):
        load_manifest(path)
    path.write_text("{not json")
    with pytest.raises(InputFileError, match="not valid JSON"):
        load_manifest(path)


def test_reference_smiles_must_match_molfile(small_cohort: Manifest, tmp_path: Path) -> None:
    path = _copy(small_cohort, tmp_path)
    data = json.loads(path.read_text())
    data["cases"][0]["reference"]["smiles"] = "CCC"
    path.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match="reference molfile gives 'CCO'"):
        load_manifest(path)
