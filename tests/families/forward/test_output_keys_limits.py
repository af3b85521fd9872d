"""Output keys keep the structure limits under both identities: an outside model's output is
a structure entering chemgauge like any other (a 1,001-atom chain or a 6,000-character
string is invalid, never parsed into a key, under ``as_written`` as under ``exact``)."""

from __future__ import annotations

import pytest

from chemgauge.families.forward.output_keys import OUTPUT_IDENTITIES, OutputKeys


@pytest.mark.parametrize("identity", OUTPUT_IDENTITIES)
def test_an_output_over_the_structure_limits_has_no_key(identity: str) -> None:
    keys = OutputKeys(identity)
    assert keys("CCO") is not None
    assert keys("C" * 1_001) is None  # over the 500-atom default
    assert keys("CCO." + "C" * 1_001) is None  # one component over: the output is invalid
    assert keys("C" * 6_000) is None  # over the 5,000-character default
