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
