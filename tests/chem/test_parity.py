"""The parity lens between two structures: stereo forgiven, never stricter than strict_key,
fail-closed on what cannot be standardized, and the tautomer search run only when needed."""

from __future__ import annotations

import pytest

from chemgauge.chem import get_matcher, try_parse_smiles
from chemgauge.chem import parity as parity_module
from chemgauge.chem.parity import (
    ParityVerdict,
    keyed_structure,
    parity_form,
    parity_verdict,
    skeleton_of,
)
from chemgauge.chem.standardize import (
    DEFAULT_SETTINGS,
    StandardizeSettings,
    tautomer_key,
    try_parity_key,
)

SAME, DIFFERENT = ParityVerdict.SAME, ParityVerdict.DIFFERENT


def verdict(a: str, b: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> ParityVerdict:
    forward = parity_verdict(keyed_structure(a), keyed_structure(b), settings)
    backward = parity_verdict(keyed_structure(b), keyed_structure(a), settings)
    assert forward is backward, "the verdict must be symmetric"
    return forward


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CC[C@H](C)Cl", "CC[C@@H](C)Cl"),  # inversion, away from any tautomeric atom
        ("CC[C@H](C)Cl", "CCC(C)Cl"),  # omission
        ("CCC(C)Cl", "CC[C@@H](C)Cl"),  # addition
        ("C/C=C/C", "C/C=C\\C"),  # E/Z swap
        ("C/C=C/C", "CC=CC"),  # E/Z omitted
        ("C[C@@H](N)C(=O)O", "C[C@H](N)C(=O)O"),  # inversion at a tautomeric atom
    ],
)
def test_stereo_is_forgiven(a: str, b: str) -> None:
    assert verdict(a, b) is SAME
    assert get_matcher("parity").match(a, b) is True
    assert get_matcher("parity").key(a) == get_matcher("parity").key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CC#[O+]", "C[C+]=O"),  # acylium resonance forms (strict_key accepts them)
        ("[O+]#Cc1cccc(C#[O+])n1", "N1=C(C=CC=C1[C+]=O)[C+]=O"),
        ("C[Hg+]", "[CH3].[Hg+]"),  # an organometallic drawn bonded and disconnected
        ("ClC(Cl)Cl", "Cl[12CH](Cl)Cl"),  # isotope label
        ("CC(C)=O", "CC(O)=C"),  # keto/enol, wider than InChI mobile H
        ("CC(=O)[O-].[Na+]", "CC(=O)O"),  # salt and charge state
        ("Oc1ccccn1", "O=c1cccc[nH]1"),
    ],
)
def test_what_strict_accepts_and_more_is_the_same(a: str, b: str) -> None:
    assert verdict(a, b) is SAME


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CCO", "CO"),  # another composition
        ("CCCO", "CC(C)O"),  # an isomer: another skeleton
        ("CCO", "*CC"),  # a read-back with a dummy atom has no InChI: never the same
        ("CC", "*CC"),
        ("c1ccccc1O", "C1CCCCC1O"),  # same skeleton, another hydrogen count
    ],
)
def test_different_structures_differ(a: str, b: str) -> None:
    assert verdict(a, b) is DIFFERENT
    assert get_matcher("parity").match(a, b) is False


def test_skeleton_ignores_what_the_tautomer_search_can_change() -> None:
    def skeleton(smiles: str) -> str:
        mol = try_parse_smiles(smiles)
        assert mol is not None
        return skeleton_of(mol)

    assert skeleton("CC(C)=O") == skeleton("CC(O)=C") == skeleton("C[13CH](C)[O-]")
    assert skeleton("C[Hg]C") == skeleton("[CH3].[CH3].[Hg]"), "bonds to metals do not count"
    assert skeleton("CCCO") != skeleton("CC(C)O")
    assert skeleton("CCO") != skeleton("CCN")


def test_different_skeletons_never_run_the_tautomer_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(*args: object) -> object:
        raise AssertionError("tautomer search run where a cheaper key decides")

    monkeypatch.setattr(parity_module, "tautomer_key", forbidden)
    assert verdict("CCCC(C)=O", "CCC(=O)CC") is DIFFERENT  # same formula, other skeleton
    assert verdict("CCO", "CCN") is DIFFERENT
    assert verdict("CC[C@H](C)Cl", "CCC(C)Cl") is SAME  # strict_key decides
    assert verdict("CC(=O)O", "CC(=O)[O-]") is SAME  # one neutral parent


def test_what_cannot_be_standardized_is_never_credited() -> None:
    # Uncharging hexafluorophosphate writes an H on a six-valent P, which RDKit cannot read:
    # the structure has no parity form, and a pair strict_key does not settle is undecided.
    assert parity_form("F[P-](F)(F)(F)(F)F") is None
    assert try_parity_key("F[P-](F)(F)(F)(F)F") is None
    assert verdict("F[P-](F)(F)(F)(F)F", "FP(F)(F)(F)F") is ParityVerdict.NOT_STANDARDIZABLE
    # strict_key accepts an identical spelling, so parity does too.
    assert verdict("F[P-](F)(F)(F)(F)F", "F[P-](F)(F)(F)(F)F") is SAME
    assert verdict("", "") is ParityVerdict.NOT_STANDARDIZABLE
    assert verdict("C1CC", "CCC") is ParityVerdict.NOT_STANDARDIZABLE
    assert get_matcher("parity").match("", "") is False


def test_a_capped_search_only_proves_a_match() -> None:
    # Two keto/enol spellings of a polyketone, with the search capped at 2 tautomers: the
    # capped canonical forms differ, which proves nothing, so the pair is undecided.
    capped = StandardizeSettings(max_tautomers=2)
    keto, enol = "CC(=O)CC(=O)CC(=O)CC(=O)C", "CC(O)=CC(=O)CC(=O)CC(=O)C"
    assert verdict(keto, enol) is SAME
    assert not tautomer_key(parity_form(keto, capped).neutral, capped).complete  # type: ignore[union-attr]
    assert verdict(keto, enol, capped) is ParityVerdict.TAUTOMER_CAP
    # The same molecule spelled twice has one neutral parent: no search needed.
    assert verdict(keto, "O=C(C)CC(=O)CC(=O)CC(C)=O", capped) is SAME


def test_keyed_structure_keys_equal_the_registered_matchers() -> None:
    for smiles in ("CCO", "C[C@@H](N)C(=O)O", "[NH3+]CC(=O)[O-]", "*CC", "C1CC", "", "[2H]C"):
        keyed = keyed_structure(smiles)
        assert keyed.inchikey == get_matcher("inchikey").key(smiles)
        assert keyed.strict_key == get_matcher("strict_key").key(smiles)
