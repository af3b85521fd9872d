"""Reaction SMILES splitting with reagents kept apart, on a real USPTO-50k line."""

from __future__ import annotations

import pytest

from chemgauge.chem import canonicalize_reaction, split_reaction_smiles
from chemgauge.errors import SmilesError

USPTO_LINE = (
    "CC(C)(C)OC(=O)O[C:6]([O:5][C:2]([CH3:1])([CH3:3])[CH3:4])=[O:7]."
    "[CH3:8][C:9](=[O:10])[c:11]1[cH:12][cH:13][c:14]2[nH:15][cH:16][cH:17][c:18]2[cH:19]1>>"
    "[CH3:1][C:2]([CH3:3])([CH3:4])[O:5][C:6](=[O:7])[n:15]1[c:14]2[cH:13][cH:12]"
    "[c:11]([C:9]([CH3:8])=[O:10])[cH:19][c:18]2[cH:17][cH:16]1"
)


def test_split_keeps_reagents_apart() -> None:
    parts = split_reaction_smiles("CC(=O)O.NCc1ccccc1>CN(C)C=O>CC(=O)NCc1ccccc1")
    assert parts.reagents == "CN(C)C=O"
    assert parts.reactants == "CC(=O)O.NCc1ccccc1"


def test_cxsmiles_extension_is_ignored() -> None:
    assert split_reaction_smiles("CCO.O>>CCO |f:0.1|").products == "CCO"


@pytest.mark.parametrize("bad", ["CCO>CC", "CCO", "a>b>c>d", ""])
def test_wrong_separator_count_is_an_error(bad: str) -> None:
    with pytest.raises(SmilesError):
        split_reaction_smiles(bad)


def test_uspto_line_is_unmapped_and_canonical() -> None:
    reaction = canonicalize_reaction(USPTO_LINE)
    assert reaction.products == ("CC(=O)c1ccc2c(ccn2C(=O)OC(C)(C)C)c1",)
    assert len(reaction.reactants) == 2
    assert all(":" not in s for s in reaction.reactants + reaction.products)
    assert reaction.reagents == ()
    assert reaction.to_smiles().count(">") == 2


def test_unparsable_side_names_the_side() -> None:
    with pytest.raises(SmilesError, match="unparsable products"):
        canonicalize_reaction("CCO>>C1CC")
