"""Identity policies for recognized graphs: the seed's normalizations and strictness."""

from __future__ import annotations

import pytest
from rdkit import Chem

from chemgauge.chem import parse_smiles
from chemgauge.chem.molfile import add_abbreviation, mol_to_molfile
from chemgauge.families.ocsr.scoring import (
    POLICY_CLAIMS,
    compare_keys,
    graph_keys,
    label_recall,
    text_keys,
)


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


ALL = ("exact", "inchi", "stereo_ignored", "legacy")


def only(matching: set[str]) -> dict[str, str]:
    """The verdict of every policy: ``match`` for those named, ``mismatch`` for the rest."""
    return {p: "match" if p in matching else "mismatch" for p in ALL}


@pytest.mark.parametrize(
    ("ref", "pred", "expected"),
    [
        # exact graph, spelled differently: atom order, ring closures, written stereo order
        ("OCC(=O)c1ccccc1", "c1ccc(cc1)C(=O)CO", only(set(ALL))),
        ("C[C@H](N)C(=O)O", "N[C@@H](C)C(=O)O", only(set(ALL))),  # same L-alanine
        ("F/C=C/F", "F\\C=C\\F", only(set(ALL))),  # the same E double bond
        # a one-atom graph is a graph (methane), and one atom is not another
        ("C", "C", only(set(ALL))),
        ("C", "N", only(set())),
        # stereo: InChI keeps it, only the flattening lens forgives it
        ("C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O", only({"stereo_ignored"})),
        ("F/C=C/F", "F/C=C\\F", only({"stereo_ignored"})),
        # charges: exact keeps them; standard InChI disconnects the metal of a salt drawn
        # covalently and neutralizes a zwitterion (its H is mobile), so both InChI lenses merge
        ("CC(=O)[O-].[Na+]", "CC(=O)O[Na]", only({"inchi", "legacy"})),
        ("[NH3+]CC(=O)[O-]", "NCC(=O)O", only({"inchi", "legacy"})),
        ("C[N+](C)(C)C", "CN(C)C", only(set())),  # a real charge: a different formula
        # fragments: order does not matter, a missing or extra fragment does
        ("CC(=O)[O-].[Na+]", "[Na+].CC(=O)[O-]", only(set(ALL))),
        ("CC(=O)[O-].[Na+]", "CC(=O)[O-]", only(set())),
        ("CCO.O", "CCO", only(set())),  # solvate drawn without its water
        ("c1ccccc1.c1ccccc1", "c1ccccc1", only(set())),  # two copies are not one
    ],
)
def test_every_policy_verdict_on_hand_checked_pairs(
    ref: str, pred: str, expected: dict[str, str]
) -> None:
    assert verdicts(ref, pred) == expected


def test_legacy_reads_the_first_record_even_when_a_later_one_is_broken() -> None:
    """The review's rule (RDKit's MolFromMolBlock) sees only record 1: a second record with a
    six-valent carbon rejects the whole graph for every other policy (no candidate), but the
    legacy key is the first record's and matches ethanol."""
    broken = Chem.MolToMolBlock(Chem.MolFromSmiles("CC(C)(C)(C)(C)C", sanitize=False))
    text = mol_to_molfile(parse_smiles("CCO")) + "$$$$\n" + broken + "$$$$\n"
    keys, reading = text_keys(text, "molfile")
    assert not reading.accepted and reading.records == 2
    assert keys.smiles is None
    assert keys.keys == {
        "exact": None,
        "inchi": None,
        "stereo_ignored": None,
        "legacy": "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3",
    }
    result = compare_keys(graph_keys(parse_smiles("CCO")), keys)
    assert result == {
        "exact": "no_candidate",
        "inchi": "no_candidate",
        "stereo_ignored": "no_candidate",
        "legacy": "match",
    }
    assert compare_keys(graph_keys(parse_smiles("CCC")), keys)["legacy"] == "mismatch"


def test_text_keys_computes_only_the_policies_asked_for() -> None:
    """Asked for ``exact`` alone, a multi-record or broken output gets no legacy key."""
    broken = Chem.MolToMolBlock(Chem.MolFromSmiles("CC(C)(C)(C)(C)C", sanitize=False))
    sdf = mol_to_molfile(parse_smiles("CCO")) + "$$$$\n" + broken + "$$$$\n"
    assert text_keys(sdf, "molfile", ("exact",))[0].keys == {"exact": None}
    keys, _ = text_keys("CCO\nC\n", "smiles", ("exact", "legacy"))
    # two SMILES lines are one two-fragment graph; the legacy rule reads the first line
    assert keys.keys == {"exact": "C.CCO", "legacy": "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3"}
    assert text_keys("CCO\n", "smiles", ("exact",))[0].keys == {"exact": "CCO"}


def test_an_empty_graph_gets_a_legacy_key_only_when_legacy_is_asked_for() -> None:
    """A graph that failed whole but whose first record the legacy rule reads: the legacy
    key appears under ``legacy`` alone, never as an extra key of other policies."""
    first = parse_smiles("CCO")
    assert graph_keys(None, ("exact",), legacy_mol=first).keys == {"exact": None}
    assert graph_keys(None, ("exact", "legacy"), legacy_mol=first).keys == {
        "exact": None,
        "legacy": "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3",
    }


def test_text_keys_reads_a_multi_record_output_once_without_the_legacy_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first-record reading serves the legacy rule alone: without it, a multi-record
    output is read once (scoring every attempt pays no second parse)."""
    from chemgauge.families.ocsr import scoring

    reads: list[bool] = []
    real = scoring.read_graph

    def counted(text: str, fmt: str, **options: bool):  # type: ignore[no-untyped-def]
        reads.append(bool(options.get("first_record_only")))
        return real(text, fmt, **options)

    monkeypatch.setattr(scoring, "read_graph", counted)
    sdf = mol_to_molfile(parse_smiles("CCO")) + "$$$$\n" + mol_to_molfile(parse_smiles("C"))
    text_keys(sdf, "molfile", ("exact", "inchi"))
    assert reads == [False]
    text_keys(sdf, "molfile", ("exact", "legacy"))
    assert reads == [False, False, True]
    text_keys(mol_to_molfile(parse_smiles("CCO")), "molfile", ("exact", "legacy"))
    assert reads == [False, False, True, False]  # one record: it is the first record


def test_legacy_still_compares_an_unsupported_reference() -> None:
    """A poly(ethylene glycol)-style repeat bracket (an SRU S-group) over real atoms: no
    policy is certified for it, but legacy InChI ignores the bracket as the review did."""
    ref = Chem.MolFromSmiles("OCCO")
    bracket = Chem.CreateMolSubstanceGroup(ref, "SRU")
    for atom in (1, 2):
        bracket.AddAtomWithIdx(atom)
    keys = graph_keys(ref)
    assert keys.unsupported == ("S-groups of type SRU",)
    unsupported = {"exact": "unsupported", "inchi": "unsupported", "stereo_ignored": "unsupported"}
    assert compare_keys(keys, graph_keys(parse_smiles("OCCO"))) == {
        **unsupported,
        "legacy": "match",
    }
    assert compare_keys(keys, graph_keys(parse_smiles("OCCCO"))) == {
        **unsupported,
        "legacy": "mismatch",
    }


def test_graph_keys_to_dict_is_plain_data() -> None:
    """Phenyl with an R-group: canonical SMILES keys, no InChI for a dummy atom."""
    keys = graph_keys(parse_smiles("*c1ccccc1"))
    assert keys.to_dict() == {
        "smiles": "*c1ccccc1",
        "keys": {
            "exact": "*c1ccccc1",
            "inchi": None,
            "stereo_ignored": "*c1ccccc1",
            "legacy": None,
        },
        "unsupported": ["dummy/R-group/alias atoms at [0]"],
    }


def test_label_recall_matches_abbreviation_labels_one_to_one() -> None:
    """Dimethyl malonate COC(=O)CC(=O)OC with both methoxy groups drawn as OMe (atoms 0-1
    and 7-8): a candidate with one OMe recalls 1 of 2, one with both recalls 2, a missing
    candidate 0; a reference without groups has nothing to recall."""
    malonate = parse_smiles("COC(=O)CC(=O)OC")
    one = add_abbreviation(malonate, "OMe", [0, 1])
    two = add_abbreviation(one, "OMe", [7, 8])
    assert label_recall(two, one) == {
        "reference": ["OMe", "OMe"],
        "candidate": ["OMe"],
        "recalled": 1,
    }
    assert label_recall(two, two) == {
        "reference": ["OMe", "OMe"],
        "candidate": ["OMe", "OMe"],
        "recalled": 2,
    }
    assert label_recall(two, None) == {"reference": ["OMe", "OMe"], "candidate": [], "recalled": 0}
    assert label_recall(malonate, two) is None
    # Boc-Gly-OMe CC(C)(C)OC(=O)NCC(=O)OC: Boc over atoms 0-6, OMe over 11-12; a candidate
    # that labels them the other way round is listed sorted, and a wrong label recalls nothing
    boc_gly = parse_smiles("CC(C)(C)OC(=O)NCC(=O)OC")
    ref = add_abbreviation(add_abbreviation(boc_gly, "Boc", range(7)), "OMe", [11, 12])
    swapped = add_abbreviation(add_abbreviation(boc_gly, "OMe", [11, 12]), "Boc", range(7))
    assert label_recall(ref, swapped) == {
        "reference": ["Boc", "OMe"],
        "candidate": ["Boc", "OMe"],
        "recalled": 2,
    }
    wrong = add_abbreviation(boc_gly, "tBu", range(4))
    assert label_recall(ref, wrong) == {
        "reference": ["Boc", "OMe"],
        "candidate": ["tBu"],
        "recalled": 0,
    }
