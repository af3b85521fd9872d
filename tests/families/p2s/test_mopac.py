"""The mopac provider: real INDO/S-CIS excitations, ordered as measured spectra are."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import require_program

from chemgauge.errors import MissingDependencyError
from chemgauge.families.p2s.engine.mopac import MopacProvider, parse_excitations
from chemgauge.families.p2s.engine.registry import get_provider
from chemgauge.families.p2s.spec import validate_property_value

from .conftest import small_build_claims

OUTPUT = """
  CI trans.  energy frequency wavelength oscillator--------- polarization---------
 st.  symm.    eV      cm - 1       nm      strength       x          y         z

   2      4.7217845    38084.    262.58  0.000000                       0.000021
   4      6.7847904    54723.    182.74  1.027938  -0.216047   0.976341   0.009076

 Polarizability (au  ) xx=    0.00
"""


def test_parse_excitations_reads_wavelength_and_strength() -> None:
    assert parse_excitations(OUTPUT) == [(262.58, 0.0), (182.74, 1.027938)]
    assert parse_excitations("no CI here") == []


def test_missing_program_says_what_to_install() -> None:
    with pytest.raises(MissingDependencyError, match="apt-get install mopac"):
        MopacProvider(program="no-such-mopac-program")


@pytest.fixture(scope="module")
def mopac() -> MopacProvider:
    require_program("mopac")
    provider = get_provider("mopac")
    assert isinstance(provider, MopacProvider)
    return provider


def spectrum(provider: MopacProvider, smiles: str) -> list[dict[str, float]]:
    result = provider.compute_one(smiles)
    assert result.error is None, result.error
    value = result.values["ultraviolet_visible"]
    assert validate_property_value("ultraviolet_visible", value) is None
    return list(value["peaks"])


def strongest(peaks: list[dict[str, float]]) -> float:
    return max(peaks, key=lambda p: p["intensity"])["position"]


@pytest.mark.external
def test_conjugation_moves_the_strong_band_to_longer_wavelengths(mopac: MopacProvider) -> None:
    benzene = spectrum(mopac, "c1ccccc1")
    hexatriene = spectrum(mopac, "C=CC=CC=C")
    octatetraene = spectrum(mopac, "C=CC=CC=CC=C")
    # measured: benzene 184 nm (E1u), hexatriene 258 nm, octatetraene 290 nm
    assert 170 < strongest(benzene) < 215
    assert 240 < strongest(hexatriene) < 275
    assert strongest(benzene) < strongest(hexatriene) < strongest(octatetraene)
    # benzene's first excitation (measured 255 nm, B2u) is symmetry-forbidden
    assert 240 < benzene[0]["position"] < 280 and benzene[0]["intensity"] < 0.01


@pytest.mark.external
def test_carbonyl_n_to_pi_star_is_weak_and_red_of_the_strong_band(mopac: MopacProvider) -> None:
    acetone = spectrum(mopac, "CC(C)=O")
    first = acetone[0]
    assert first["intensity"] < 0.01  # n -> pi*, measured 275 nm with f ~ 0.0004
    assert first["position"] > strongest(acetone) + 100
    aniline = spectrum(mopac, "Nc1ccccc1")
    assert 260 < aniline[0]["position"] < 300  # measured 280 nm


@pytest.mark.external
def test_element_without_parameters_is_a_counted_failure(mopac: MopacProvider) -> None:
    result = mopac.compute_one("O=[As](O)(O)CO")
    assert result.error == "MOPAC failed: Parameters for some elements are missing"


@pytest.mark.external
def test_same_molecule_same_bytes(mopac: MopacProvider) -> None:
    again = get_provider("mopac")
    assert spectrum(again, "O=Cc1ccccc1") == spectrum(mopac, "O=Cc1ccccc1")


@pytest.mark.external
@pytest.mark.slow
def test_mopac_built_views_separate_the_oracle_from_structure(
    mopac: MopacProvider, tmp_path: Path
) -> None:
    verdicts = small_build_claims(tmp_path, mopac, "mopac", "ultraviolet_visible")
    assert verdicts["property_oracle"]["accuracy"]["correct"]["value"] == 1.0
    assert verdicts["property_oracle"]["use_claim"] is True
    assert verdicts["structure_only"]["use_claim"] is False
