"""Molfile reading: validation reasons, multi-record SDF, superatom groups, reference checks."""

from __future__ import annotations

from chemgauge.chem import parse_smiles
from chemgauge.chem.molfile import (
    abbreviation_groups,
    add_abbreviation,
    mol_to_molfile,
    read_graph,
    read_molfile,
    reference_checks,
)


def test_valid_and_invalid_graphs_say_why() -> None:
    ok = read_molfile(mol_to_molfile(parse_smiles("OC(=O)c1ccccc1")))
    assert ok.accepted and ok.smiles == "O=C(O)c1ccccc1"
    assert read_molfile("").reason == "empty output"
    assert read_molfile("not a molfile").reason == "no molfile record"
    five_bonds = read_graph("CC(C)(C)(C)(C)C", "smiles")
    assert not five_bonds.accepted and "sanitization failed" in five_bonds.reason
    assert read_graph("C1CC", "smiles").reason == "SMILES syntax error"


def test_pentavalent_carbon_molfile_fails_validation() -> None:
    block = mol_to_molfile(parse_smiles("CC(C)(C)C"))
    # Turn a single bond into a double one: the central carbon gets five bonds.
    broken = block.replace("M  V30 1 1 1 2", "M  V30 1 2 1 2")
    assert broken != block
    reading = read_molfile(broken)
    assert not reading.accepted and "sanitization failed" in reading.reason


def test_multi_record_sdf_is_one_graph_unless_first_only() -> None:
    text = (
        mol_to_molfile(parse_smiles("CCO"))
        + "$$$$\n"
        + mol_to_molfile(parse_smiles("[Na+]"))
        + "$$$$\n"
    )
    assert read_molfile(text).smiles == "CCO.[Na+]"
    assert read_molfile(text, first_record_only=True).smiles == "CCO"
    assert read_graph("CCO\n[Na+]\n", "smiles").smiles == "CCO.[Na+]"


def test_wedge_stereo_survives_the_molfile_round_trip() -> None:
    smiles = "C[C@@H](N)C(=O)O"
    assert read_molfile(mol_to_molfile(parse_smiles(smiles))).smiles == "C[C@@H](N)C(=O)O"


def test_superatom_group_round_trip_with_anchor() -> None:
    mol = add_abbreviation(parse_smiles("CC(C)(C)OC(=O)NC"), "Boc", range(7))
    back = read_molfile(mol_to_molfile(mol)).mol
    (group,) = abbreviation_groups(back)
    assert group.label == "Boc" and group.members == (0, 1, 2, 3, 4, 5, 6)
    assert group.anchors == (7,) and group.problems(back) == []


def test_reference_checks() -> None:
    checks = reference_checks(parse_smiles("CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]"))
    assert checks["formula"] == "C8H14NNaO4"
    assert (checks["heavy_atoms"], checks["bonds"], checks["fragments"]) == (14, 12, 2)
    assert [label.split(":")[1] for label in checks["cip_labels"]] == ["S"]
