"""Graph diff: injected errors are localized to the right category and atoms."""

from __future__ import annotations

import pytest
from rdkit import Chem

from chemgauge.chem import parse_smiles
from chemgauge.chem.graphdiff import DiffSettings, diff_graphs
from chemgauge.chem.graphdiff_worker import GraphDiffer
from chemgauge.chem.molfile import add_abbreviation, mol_to_molfile, read_molfile

BOC_ALA_NA = "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]"


def categories(ref: str, pred: str) -> list[tuple[str, str]]:
    diff = diff_graphs(parse_smiles(ref), parse_smiles(pred))
    assert diff.status == "ok"
    return [(e.category, e.detail) for e in diff.errors]


@pytest.mark.parametrize(
    ("ref", "pred", "expected"),
    [
        ("NCC(=O)N[C@@H](C)C(=O)O", "NCC(=O)N[C@@H](C)C(=O)O", []),
        ("Oc1ccccc1", "OC1=CC=CC=C1", []),
        ("c1ccccc1O", "c1ccncc1O", [("atom_element", "C -> N")]),
        ("CC=CC", "CCCC", [("bond_order", "DOUBLE -> SINGLE")]),
        ("CC(=O)O", "CC(=O)[O-]", [("atom_charge", "0 -> -1")]),
        ("CCO", "[13CH3]CO", [("atom_isotope", "0 -> 13")]),
        ("CC[O]", "CCO", [("atom_radical", "1 -> 0")]),
        ("CCO", "CC", [("missing_atom", "O")]),
        ("CCO", "CCOC", [("extra_atom", "C")]),
        ("C1CCCCC1", "CCCCCC", [("missing_bond", "SINGLE")]),
        ("CCCCCC", "C1CCCCC1", [("extra_bond", "SINGLE")]),
        ("C[C@H](N)C(=O)O", "CC(N)C(=O)O", [("tetrahedral_stereo_missing", "CHI_TETRAHEDRAL_CCW")]),
        ("CC(N)C(=O)O", "C[C@@H](N)C(=O)O", [("tetrahedral_stereo_extra", "CHI_TETRAHEDRAL_CW")]),
        (
            "C[C@H](N)C(=O)O",
            "C[C@@H](N)C(=O)O",
            [("tetrahedral_stereo_inverted", "opposite configuration")],
        ),
        ("C/C=C/C", "CC=CC", [("double_bond_stereo_missing", "STEREOE")]),
        ("CC=CC", "C/C=C/C", [("double_bond_stereo_extra", "STEREOE")]),
        ("C/C=C/C", "C/C=C\\C", [("double_bond_stereo_inverted", "cis/trans swapped")]),
        ("F/C(Cl)=C/Br", "Cl/C(F)=C/Br", [("double_bond_stereo_inverted", "cis/trans swapped")]),
        ("CC(=O)[O-].[Na+]", "CC(=O)[O-]", [("missing_fragment", "[Na+]")]),
        ("CC(=O)O", "CC(=O)O.Cl", [("extra_fragment", "Cl")]),
        (
            "[Na+].CC(=O)[O-]",
            "CC(=O)O",
            [("atom_charge", "-1 -> 0"), ("missing_fragment", "[Na+]")],
        ),
    ],
)
def test_injected_errors_are_localized(
    ref: str, pred: str, expected: list[tuple[str, str]]
) -> None:
    assert categories(ref, pred) == expected


def test_atom_indices_point_at_the_edit() -> None:
    diff = diff_graphs(parse_smiles("OCCCCCN"), parse_smiles("OCCCCCS"))
    (error,) = diff.errors
    assert error.ref_atoms == (6,) and error.pred_atoms == (6,)


def test_hydrogen_count_alone_and_explained_by_another_edit() -> None:
    # Phosphorus valence 3 vs 5: only the H count differs, so it is the reported error.
    assert categories("CP", "C[PH4]") == [("hydrogen_count", "2 -> 4")]
    # An H change caused by a bond-order edit is part of that edit, not a second error.
    assert categories("CC(=O)C", "CC(O)=C") == [
        ("bond_order", "DOUBLE -> SINGLE"),
        ("bond_order", "SINGLE -> DOUBLE"),
    ]


def _boc(label: str = "Boc", members: tuple[int, ...] = tuple(range(7))) -> object:
    mol = add_abbreviation(parse_smiles(BOC_ALA_NA), label, members)
    return read_molfile(mol_to_molfile(mol)).mol


def test_abbreviation_expanded_chemistry_exact_but_label_missing() -> None:
    diff = diff_graphs(_boc(), parse_smiles(BOC_ALA_NA))
    assert [(e.category, e.detail) for e in diff.errors] == [
        ("abbreviation_label", "label 'Boc' missing")
    ]
    assert diff.graph_errors == ()


def test_abbreviation_kept_is_clean_and_wrong_label_is_reported() -> None:
    assert diff_graphs(_boc(), _boc()).errors == ()
    diff = diff_graphs(_boc(), _boc("BOC"))
    assert [e.category for e in diff.errors] == ["abbreviation_label"]


def test_malformed_abbreviation_is_an_integrity_error() -> None:
    diff = diff_graphs(_boc(), _boc(members=(0, 1, 2, 3, 5, 6)))
    (error,) = diff.errors
    assert error.category == "abbreviation_integrity"
    assert "not connected" in error.detail


def test_member_chemistry_is_scored_separately() -> None:
    pred = parse_smiles("CC(C)(C)SC(=O)N[C@@H](C)C(=O)[O-].[Na+]")
    kinds = [e.category for e in diff_graphs(_boc(), pred).errors]
    assert kinds == ["atom_element", "abbreviation_label", "abbreviation_member_chemistry"]


def test_missing_sodium_with_abbreviation() -> None:
    pred = parse_smiles("CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-]")
    kinds = [e.category for e in diff_graphs(_boc(), pred).errors]
    assert kinds == ["missing_fragment", "abbreviation_label"]


def test_unsupported_features_are_not_errors() -> None:
    diff = diff_graphs(parse_smiles(BOC_ALA_NA), parse_smiles("*N[C@@H](C)C(=O)[O-].[Na+]"))
    assert diff.status == "unsupported" and diff.errors == ()
    assert diff.unsupported == ("candidate: dummy/R-group/alias atoms at [0]",)
    haptic = parse_smiles("[NH3]->[Fe]")  # coordination (dative) bond
    assert diff_graphs(haptic, haptic).status == "unsupported"


def test_worker_gives_same_result_and_records_timeouts() -> None:
    ref, pred = parse_smiles("c1ccccc1CCO"), parse_smiles("c1ccccc1CCN")
    with GraphDiffer() as differ:
        assert differ.diff(ref, pred) == diff_graphs(ref, pred)
    with GraphDiffer(DiffSettings(wall_seconds=1e-6)) as differ:
        result = differ.diff(ref, pred)
        assert result.status == "timeout" and "no result within" in result.detail
        assert differ.timeouts == 1


# Bond orders are compared on a Kekulé form chosen consistently for both sides: one
# dearomatizing edit is one bond-order error, not one per aromatic bond of the ring.
KEKULE_EDITS = [
    ("Cc1ccccc1", "CC1=CC=CCC1"),  # toluene vs 1-methylcyclohexa-1,3-diene
    ("Cn1cnc2c1c(=O)n(C)c(=O)n2C", "CN1CNC2=C1C(=O)N(C)C(=O)N2C"),  # caffeine, 8,9-dihydro
    ("c1ccc2ncccc2c1", "C1=CC=C2NCC=CC2=C1"),  # quinoline vs 1,2-dihydroquinoline
    ("c1ccc2[nH]ccc2c1", "C1=CC=C2NCCC2=C1"),  # indole vs indoline
]


@pytest.mark.parametrize(("ref", "pred"), KEKULE_EDITS)
def test_one_kekule_edit_is_one_bond_order_error(ref: str, pred: str) -> None:
    from chemgauge.chem.graphdiff import diff_graphs

    diff = diff_graphs(parse_smiles(ref), parse_smiles(pred))
    assert diff.status == "ok"
    assert [e.category for e in diff.graph_errors] == ["bond_order"], diff.errors
    assert diff.graph_errors[0].detail == "DOUBLE -> SINGLE"
    reverse = diff_graphs(parse_smiles(pred), parse_smiles(ref))
    assert [(e.category, e.detail) for e in reverse.graph_errors] == [
        ("bond_order", "SINGLE -> DOUBLE")
    ]


@pytest.mark.parametrize("smiles", [ref for ref, _ in KEKULE_EDITS])
def test_the_same_aromatic_graph_has_no_bond_error(smiles: str) -> None:
    from chemgauge.chem.graphdiff import diff_graphs

    mol = parse_smiles(smiles)
    assert diff_graphs(mol, parse_smiles(Chem.MolToSmiles(mol, kekuleSmiles=True))).errors == ()


def test_kekulization_failure_falls_back_to_aromatic_flags_and_says_so() -> None:
    from chemgauge.chem.graphdiff import diff_graphs

    ring_only = Chem.MolFromSmiles("c1cccc1C", sanitize=False)  # five aromatic C: no Kekulé
    ring_only.UpdatePropertyCache(strict=False)
    diff = diff_graphs(parse_smiles("CC1=CC=CCC1"), ring_only)
    assert "aromatic flags" in diff.detail and "candidate" in diff.detail
