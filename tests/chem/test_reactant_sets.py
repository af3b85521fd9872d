"""The reactant-set scorer: multisets, not sets, under every matcher; placeholders invalid."""

from __future__ import annotations

import pytest

from chemgauge.chem.reactant_sets import INVALIDITY_REASONS, ReactantSetScorer

POLICIES = ("exact", "stereo_ignored", "inchi", "inchikey", "strict_key", "parity")


@pytest.mark.parametrize("policy", POLICIES)
def test_a_repeated_reactant_counts_under_every_matcher(policy: str) -> None:
    comparison = ReactantSetScorer([policy]).compare(
        ["CCO", "CCO"], ["CCO", "CCO.CCO.CCO", "OCC.CCO", "CCO.CC"]
    )
    assert comparison.correct[policy] == (False, False, True, False)


@pytest.mark.parametrize("output", ["*", "[*]", "C[1*]", "CC(=O)O.*", "[2*]CC"])
def test_a_dummy_atom_output_is_invalid_with_its_reason(output: str) -> None:
    comparison = ReactantSetScorer(["exact", "parity"]).compare(["CC(=O)O"], [output, "CC(=O)O"])
    assert comparison.valid == (False, True)
    assert comparison.invalid_reasons == ("dummy_atom",)
    assert "dummy_atom" in INVALIDITY_REASONS
    assert comparison.correct["exact"] == (False, True)


def test_a_dummy_atom_truth_matches_nothing() -> None:
    comparison = ReactantSetScorer(["exact"]).compare(["*C"], ["*C", "C"])
    assert comparison.correct["exact"] == (False, False)
    assert comparison.truth_unsupported["exact"]
