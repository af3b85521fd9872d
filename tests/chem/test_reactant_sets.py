"""The reactant-set scorer: multisets, not sets, under every matcher."""

from __future__ import annotations

import pytest

from chemgauge.chem.reactant_sets import ReactantSetScorer

POLICIES = ("exact", "stereo_ignored", "inchi", "inchikey", "strict_key", "parity")


@pytest.mark.parametrize("policy", POLICIES)
def test_a_repeated_reactant_counts_under_every_matcher(policy: str) -> None:
    comparison = ReactantSetScorer([policy]).compare(
        ["CCO", "CCO"], ["CCO", "CCO.CCO.CCO", "OCC.CCO", "CCO.CC"]
    )
    assert comparison.correct[policy] == (False, False, True, False)


@pytest.mark.parametrize("policy", ["exact", "stereo_ignored", "inchi", "inchikey", "parity"])
def test_dummy_atom_outputs_are_invalid_with_their_reason(policy: str) -> None:
    """A placeholder ('*', '[1*]', '[*:1]C') is no reactant anyone can buy: invalid under
    every matcher, with the reason, and never correct even against a truth that holds one."""
    outputs = ["*", "[1*]C.CN", "[*:1]C(C)=O.CN", "CN.CC(=O)O"]
    comparison = ReactantSetScorer([policy]).compare(["CC(=O)O", "CN"], outputs)
    assert comparison.valid == (False, False, False, True)
    assert comparison.invalid_reasons == ("dummy_atom",) * 3
    assert comparison.correct[policy] == (False, False, False, True)
    placeholder = ReactantSetScorer([policy]).compare(["*C(C)=O", "CN"], ["*C(C)=O.CN"])
    assert placeholder.correct[policy] == (False,)
