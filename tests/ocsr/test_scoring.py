"""Identity policies for recognized graphs: the seed's normalizations and strictness."""

from __future__ import annotations

import pytest

from chemgauge.benchmarks.ocsr.scoring import POLICY_CLAIMS, compare_keys, graph_keys, text_keys
from chemgauge.chem import parse_smiles
from chemgauge.chem.molfile import mol_to_molfile


def verdicts(ref: str, pred: str) -> dict[str, str]:
    return compare_keys(graph_keys(parse_smiles(ref)), graph_keys(parse_smiles(pred)))


@pytest.mark.parametrize(
    ("ref", "pred"),
    [
        ("c1ccccc1O", "OC1=CC=CC=C1"),  # aromatic vs Kekule
        ("C[C@H](N)C(=O)O", "[CH3][C@H]([NH2])C(O)=O"),  # explicit vs implicit H
    ],
)
def test_spelling_normalizes_under_every_policy(ref: str, pred: str) -> None:
    assert set(verdicts(ref, pred).values()) == {"match"}


@pytest.mark.parametrize(
    ("ref", "pred", "lenient"),
    [
        ("Oc1ccccn1", "O=c1cccc[nH]1", {"inchi", "legacy"}),  # tautomer: InChI merges
        ("CC(=O)O", "CC(=O)[O-]", set()),  # protonation/charge
        ("CCO", "[13CH3]CO", set()),  # isotope
        ("CC[O]", "CCO", set()),  # radical
        ("C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O", {"stereo_ignored"}),  # enantiomer
        ("C[C@H](N)C(=O)O", "CC(N)C(=O)O", {"stereo_ignored"}),  # stereo missing
        ("C/C=C/C", "C/C=C\\C", {"stereo_ignored"}),  # E/Z
    ],
)
def test_exact_stays_strict(ref: str, pred: str, lenient: set[str]) -> None:
    result = verdicts(ref, pred)
    assert result["exact"] == "mismatch"
    assert {p for p, v in result.items() if v == "match"} == lenient


def test_missing_or_empty_graphs_never_match() -> None:
    empty = graph_keys(None)
    assert set(compare_keys(empty, empty).values()) == {"no_candidate"}
    ref = graph_keys(parse_smiles("CCO"))
    assert set(compare_keys(ref, None).values()) == {"no_candidate"}
    bad, reading = text_keys("C1CC", "smiles")
    assert not reading.accepted
    assert set(compare_keys(ref, bad).values()) == {"no_candidate"}


def test_unsupported_reference_is_not_a_match_of_placeholders() -> None:
    ref = graph_keys(parse_smiles("*c1ccccc1"))
    result = compare_keys(ref, graph_keys(parse_smiles("*c1ccccc1")))
    assert result["exact"] == result["inchi"] == result["stereo_ignored"] == "unsupported"


def test_legacy_reads_only_the_first_record() -> None:
    text = (
        mol_to_molfile(parse_smiles("CCO"))
        + "$$$$\n"
        + mol_to_molfile(parse_smiles("C"))
        + "$$$$\n"
    )
    keys, reading = text_keys(text, "molfile")
    assert reading.smiles == "C.CCO"
    result = compare_keys(graph_keys(parse_smiles("CCO")), keys)
    assert result == {
        "exact": "mismatch",
        "inchi": "mismatch",
        "stereo_ignored": "mismatch",
        "legacy": "match",
    }


@pytest.mark.parametrize(
    ("hypervalent", "separated"),
    [
        ("O=N(=O)c1ccccc1", "O=[N+]([O-])c1ccccc1"),  # nitro
        ("O=n1ccccc1", "[O-][n+]1ccccc1"),  # pyridine N-oxide
        ("CN=N#N", "CN=[N+]=[N-]"),  # azide
        ("O=Cl(=O)(=O)[O-]", "[O-][Cl+3]([O-])([O-])[O-]"),  # perchlorate
    ],
)
def test_hypervalent_spellings_are_the_charge_separated_group(
    hypervalent: str, separated: str
) -> None:
    """The claim says these are one group drawn two ways, and every policy agrees."""
    assert set(verdicts(separated, hypervalent).values()) == {"match"}
    assert "nitro" in POLICY_CLAIMS["exact"] and "charge-separated" in POLICY_CLAIMS["exact"]


def test_hypervalent_nitro_in_a_molfile_matches_the_charge_separated_reference() -> None:
    from rdkit import Chem

    raw = Chem.MolFromSmiles("O=N(=O)c1ccccc1", sanitize=False)
    block = Chem.MolToMolBlock(raw, kekulize=False)
    assert "CHG" not in block  # the candidate really draws a neutral pentavalent nitrogen
    keys, reading = text_keys(block, "molfile")
    assert reading.accepted
    result = compare_keys(graph_keys(parse_smiles("O=[N+]([O-])c1ccccc1")), keys)
    assert result["exact"] == "match"


def test_other_charges_stay_strict() -> None:
    """Only the listed hypervalent spellings merge: a real charge difference does not."""
    assert verdicts("C[N+](C)(C)C", "CN(C)C")["exact"] == "mismatch"
    assert verdicts("[O-][N+](=O)c1ccccc1", "O=Nc1ccccc1")["exact"] == "mismatch"  # nitroso
    assert verdicts("CC(=O)[O-].[Na+]", "CC(=O)O[Na]")["exact"] == "mismatch"
