"""The check shared by the validity-screen tests: the screen agrees with a full parse."""

from __future__ import annotations

from collections.abc import Iterable


def invalid_after_checking_screen(texts: Iterable[str]) -> int:
    """Assert that the screen gives each text the validity and invariant a full parse gives,
    and that an invalidity reason it records for free is the one a full diagnosis gives;
    return how many texts are invalid (so a test can show both kinds were exercised)."""
    from chemgauge.chem.reactant_sets import screen_component, structure_invariant
    from chemgauge.chem.smiles import parse_failure_kind, try_parse_smiles

    invalid = 0
    for text in texts:
        full = try_parse_smiles(text)
        expected = None if full is None else structure_invariant(full)
        failures: dict[str, str] = {}
        assert screen_component(text, failures) == expected, text
        if full is None:
            invalid += 1
            if text in failures:
                assert failures[text] == parse_failure_kind(text), text
        else:
            assert not failures, text
    return invalid
