"""The nmr provider: real GIAO shifts, symmetry-derived integration, degeneracy, assignment."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from tests.conftest import require_module

from chemgauge.errors import MissingDependencyError
from chemgauge.families.p2s.engine.nmr import NMR_PROPERTIES, NmrProvider
from chemgauge.families.p2s.engine.registry import get_provider
from chemgauge.families.p2s.spec import validate_property_value


def test_missing_pyscf_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyscf.prop.nmr.rhf", None)
    with pytest.raises(MissingDependencyError, match=r"pip install chemgauge\[nmr\]"):
        get_provider("nmr")


@pytest.fixture(scope="module")
def nmr() -> NmrProvider:
    require_module("pyscf.prop.nmr.rhf")
    provider = get_provider("nmr")
    assert isinstance(provider, NmrProvider)
    return provider


def spectra(provider: NmrProvider, smiles: str) -> dict[str, Any]:
    result = provider.compute_one(smiles)
    assert result.error is None, result.error
    assert set(result.values) == set(NMR_PROPERTIES)
    for name, value in result.values.items():
        assert validate_property_value(name, value) is None, (name, value)
    return {name: value["peaks"] for name, value in result.values.items()}


@pytest.mark.slow
def test_aldehyde_proton_far_downfield_of_alkyl_protons(nmr: NmrProvider) -> None:
    acetaldehyde = spectra(nmr, "CC=O")
    protons = acetaldehyde["proton_nmr_atom"]
    # CHO (measured 9.8 ppm) and CH3 (2.2 ppm): two peaks, highest shift first
    assert [p["atoms"] for p in protons] == [[1], [0]]
    aldehyde, methyl = protons[0]["shift"], protons[1]["shift"]
    assert 9.0 < aldehyde < 12.0 and 1.0 < methyl < 3.0
    integration = acetaldehyde["proton_nmr_integration"]
    assert [p["integration"] for p in integration] == [1, 3]
    carbons = acetaldehyde["carbon_nmr_atom"]
    assert carbons[0]["atoms"] == [1] and carbons[0]["shift"] > 180  # measured 200 ppm
    assert 10 < carbons[1]["shift"] < 45  # measured 31 ppm


@pytest.mark.slow
def test_symmetry_gives_degeneracy_and_integration(nmr: NmrProvider) -> None:
    acetone = spectra(nmr, "CC(C)=O")
    assert acetone["proton_nmr_integration"] == [
        {"shift": acetone["proton_nmr_peaks"][0]["shift"], "integration": 6}
    ]
    degeneracy = {p["degeneracy"]: p["shift"] for p in acetone["carbon_nmr_degeneracy"]}
    assert set(degeneracy) == {1, 2}
    assert degeneracy[1] > 190 and degeneracy[2] < 50  # C=O (measured 207) and the methyls
    ethanol = spectra(nmr, "CCO")
    by_atom = {tuple(p["atoms"]): p["shift"] for p in ethanol["proton_nmr_atom"]}
    assert by_atom[(1,)] > by_atom[(0,)] + 1.0  # OCH2 (3.7 ppm) is downfield of CH3 (1.2)
