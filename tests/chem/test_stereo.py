"""Structural stereo flattening: collapses to the true canonical spelling, never falls back."""

from __future__ import annotations

import pytest
from rdkit import Chem

from chemgauge.chem import flatten_stereo, try_flatten_stereo
from chemgauge.chem import stereo as stereo_module
from chemgauge.errors import SmilesError


def test_tetrahedral_and_ez_collapse() -> None:
    assert flatten_stereo("C[C@H](N)C(=O)O") == flatten_stereo("C[C@@H](N)C(=O)O") == "CC(N)C(=O)O"
    assert flatten_stereo("C/C=C/C") == flatten_stereo("C/C=C\\C") == "CC=CC"


def test_bracket_atoms_collapse_to_organic_subset() -> None:
    # A text strip of '@' would leave "[CH]" behind; the structural clear gives plain "C".
    assert flatten_stereo("[C@@H](F)(Cl)Br") == Chem.MolToSmiles(Chem.MolFromSmiles("C(F)(Cl)Br"))
    assert "[" not in flatten_stereo("F[C@H](Cl)Br")
    assert flatten_stereo("[CH3:1]/[CH:2]=[CH:3]/[CH3:4]") == "CC=CC"


def test_isotopes_survive_flattening() -> None:
    assert flatten_stereo("[13CH3][C@H](N)C(=O)O") == "[13CH3]C(N)C(=O)O"


def test_ring_stereo_and_enhanced_stereo_groups_are_cleared() -> None:
    assert flatten_stereo("C[C@H]1CC[C@@H](C)CC1") == "CC1CCC(C)CC1"
    assert flatten_stereo("C[C@H](O)C(=O)O |o1:1|") == "CC(O)C(=O)O"


def test_unparsable_input_is_unsupported_not_a_fallback() -> None:
    assert try_flatten_stereo("C[C@H](N") is None
    with pytest.raises(SmilesError):
        flatten_stereo("C[C@H](N")


def test_failed_recheck_is_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    # If the flattened text does not re-parse, the answer is "unsupported" (None),
    # never the stereo-aware string.
    monkeypatch.setattr(stereo_module, "mol_to_canonical", lambda mol: "C1CC")
    assert try_flatten_stereo("C[C@H](N)C(=O)O") is None
