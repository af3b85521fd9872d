"""The xtb provider: real GFN2-xTB numbers through tblite, and a clear message without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.conftest import require_module

from chemgauge.errors import MissingDependencyError
from chemgauge.families.p2s.engine.properties import ProviderOptions
from chemgauge.families.p2s.engine.registry import get_provider

from .conftest import small_build_claims


def test_missing_tblite_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tblite", None)
    monkeypatch.setitem(sys.modules, "tblite.interface", None)
    with pytest.raises(MissingDependencyError, match=r"pip install chemgauge\[xtb\]"):
        get_provider("xtb")


@pytest.fixture(scope="module")
def xtb() -> object:
    require_module("tblite.interface")
    return get_provider("xtb")


def values(provider: object, smiles: str) -> dict[str, float]:
    result = provider.compute_one(smiles)  # type: ignore[attr-defined]
    assert result.error is None, result.error
    return {k: v["value"] for k, v in result.values.items() if "value" in v}


@pytest.mark.slow
def test_dipoles_and_gaps_are_physical(xtb: object) -> None:
    benzene = values(xtb, "c1ccccc1")
    water = values(xtb, "O")
    acetone = values(xtb, "CC(C)=O")
    nitrile = values(xtb, "N#Cc1ccccc1")
    phenol = values(xtb, "Oc1ccccc1")
    assert benzene["dipole"] < 0.05  # symmetric
    assert 1.8 < water["dipole"] < 2.7  # experiment 1.85 D
    assert 2.4 < acetone["dipole"] < 3.6  # experiment 2.88 D
    assert nitrile["dipole"] > 2 * phenol["dipole"]  # 4.18 D vs 1.22 D measured
    assert water["gap"] > benzene["gap"] > 2.0  # conjugation narrows the gap
    again = get_provider("xtb")
    assert values(again, "CC(C)=O") == acetone  # same geometry seed, same rounded numbers


@pytest.mark.slow
def test_infrared_bands_from_the_numerical_hessian() -> None:
    require_module("tblite.interface")
    provider = get_provider("xtb", ProviderOptions(infrared=True))
    # GFN2-xTB's harmonic C#N stretch sits near 2380 cm-1 (measured 2229): the window is the
    # triple-bond region, apart from C-H stretches (> 2800) and the fingerprint region.
    for smiles, low, high in (("N#Cc1ccccc1", 2150, 2450), ("CC(C)=O", 1600, 1800)):
        result = provider.compute_one(smiles)
        peaks = result.values["infrared"]["peaks"]
        strongest = max(peaks, key=lambda p: p["intensity"])
        assert low < strongest["position"] < high, (smiles, strongest)


def band(peaks: list[dict[str, float]], low: float, high: float) -> dict[str, float]:
    """The strongest peak in a window (there must be one)."""
    found = [p for p in peaks if low < p["position"] < high]
    assert found, (low, high, peaks)
    return max(found, key=lambda p: p["intensity"])


@pytest.mark.slow
def test_raman_activities_follow_the_selection_rules() -> None:
    require_module("tblite.interface")
    provider = get_provider("xtb", ProviderOptions(infrared=True, raman=True))
    co2 = provider.compute_one("O=C=O").values
    infrared, raman = co2["infrared"]["peaks"], co2["raman"]["peaks"]
    # CO2: the symmetric stretch (measured 1388 cm-1) is Raman-active and IR-silent; the
    # antisymmetric stretch (2349) and the bend (667) are IR-active and Raman-silent.
    symmetric, antisymmetric = (1200, 1600), (2200, 2700)
    assert band(raman, *symmetric)["intensity"] == 1.0
    assert band(infrared, *symmetric)["intensity"] < 0.01
    assert band(infrared, *antisymmetric)["intensity"] == 1.0
    assert band(raman, *antisymmetric)["intensity"] < 0.01
    assert all(p["intensity"] < 0.01 for p in raman if p["position"] < 800)
    # Benzene is centrosymmetric too: no band is strong in both spectra (mutual exclusion),
    # and the ring breathing mode (measured 992 cm-1) is Raman-only.
    benzene = provider.compute_one("c1ccccc1").values
    ir_by_position = {p["position"]: p["intensity"] for p in benzene["infrared"]["peaks"]}
    for peak in benzene["raman"]["peaks"]:
        if peak["intensity"] > 0.02:
            assert ir_by_position[peak["position"]] < 0.01, peak
    assert band(benzene["raman"]["peaks"], 950, 1100)["intensity"] > 0.02


@pytest.mark.slow
def test_xtb_built_dipole_views_separate_the_oracle_from_structure(
    xtb: object, tmp_path: Path
) -> None:
    verdicts = small_build_claims(tmp_path, xtb, "xtb", "dipole")  # type: ignore[arg-type]
    oracle = verdicts["property_oracle"]
    assert oracle["accuracy"]["correct"]["value"] == 1.0
    assert oracle["use_claim"] is True
    assert verdicts["structure_only"]["use_claim"] is False
