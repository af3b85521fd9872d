"""Spelling helpers used to build outputs that differ only in text."""

from __future__ import annotations

from chemgauge.chem import canonical_smiles, try_parse_smiles
from chemgauge.chem.spelling import (
    Speller,
    corrupt_smiles,
    random_spellings,
    stereo_free_spelling,
)


def test_random_spellings_are_the_same_molecule_and_reproducible() -> None:
    smiles = "CC(C)(C)OC(=O)N1CC[C@H](O)C1"
    spellings = random_spellings(smiles, 5, seed=3)
    assert spellings == random_spellings(smiles, 5, seed=3)
    assert len(set(spellings)) > 1
    assert {canonical_smiles(s) for s in spellings} == {canonical_smiles(smiles)}
    speller = Speller()
    assert speller.spell(smiles, 11) == speller.spell(smiles, 11)
    assert canonical_smiles(speller.spell("[CH3:1]O", 1)) == "CO"  # maps dropped


def test_corruptions_never_parse() -> None:
    for smiles in ("CCO", "c1ccccc1", "C(=O)O", "[Na+].[Cl-]"):
        for variant in range(3):
            bad = corrupt_smiles(smiles, variant)
            assert try_parse_smiles(bad) is None, bad


def test_stereo_free_spelling() -> None:
    assert canonical_smiles(stereo_free_spelling("C[C@H](N)C(=O)O") or "") == "CC(N)C(=O)O"
    assert stereo_free_spelling("C/C=C/C") == "CC=CC"
    assert stereo_free_spelling("CCO") is None  # no stereo to remove
    assert stereo_free_spelling("C1CC") is None
