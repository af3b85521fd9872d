"""Parsing, atom-map stripping and canonical forms on real molecules."""

from __future__ import annotations

import pytest

from chemgauge.chem import (
    MoleculeBag,
    canonical_multiset,
    canonical_smiles,
    describe_parse_failure,
    parse_smiles,
    strip_atom_maps,
    try_canonical_multiset,
    try_canonical_smiles,
    try_parse_smiles,
)
from chemgauge.errors import SmilesError


def test_parse_returns_mol_for_valid_smiles() -> None:
    assert parse_smiles("CCO").GetNumAtoms() == 3


@pytest.mark.parametrize("bad", ["", "   ", "C1CC", "not a smiles", "C(C)(C)(C)(C)C", "c1cccc1"])
def test_parse_raises_typed_error_carrying_input(bad: str) -> None:
    with pytest.raises(SmilesError) as info:
        parse_smiles(bad)
    assert info.value.smiles == bad
    assert try_parse_smiles(bad) is None


def test_failure_reasons_distinguish_syntax_from_valence() -> None:
    assert describe_parse_failure("") == "empty SMILES"
    assert describe_parse_failure("C1CC") == "SMILES syntax error"
    assert "valence" in describe_parse_failure("C(C)(C)(C)(C)C").lower()
    assert "kekul" in describe_parse_failure("c1cccc1").lower()


def test_atom_maps_are_stripped_and_brackets_collapse() -> None:
    assert strip_atom_maps("[CH3:1][C:2](=[O:3])[OH:4]") == "CC(=O)O"
    assert canonical_smiles("[CH3:1][OH:2]") == "CO"


def test_canonical_smiles_keeps_stereo_by_default() -> None:
    assert canonical_smiles("N[C@@H](C)C(=O)O") == "C[C@H](N)C(=O)O"
    assert canonical_smiles("N[C@@H](C)C(=O)O", isomeric=False) == "CC(N)C(=O)O"
    assert try_canonical_smiles("C1CC") is None


def test_multiset_keeps_multiplicity_and_ignores_order() -> None:
    assert canonical_multiset("O.CCO.O") == ("CCO", "O", "O")
    assert canonical_multiset("OCC.O.O") == canonical_multiset("O.O.CCO")
    assert canonical_multiset("O.CCO") != canonical_multiset("O.O.CCO")
    assert try_canonical_multiset("CC.C1CC") is None


def test_molecule_bag_equality_is_canonical_multiset() -> None:
    assert MoleculeBag.from_smiles("OCC.O") == MoleculeBag.from_parts(["O", "C(O)C"])
    assert MoleculeBag.from_smiles("O.O") != MoleculeBag.from_smiles("O")
    assert MoleculeBag(("O", "CCO")).components == ("CCO", "O")
    assert len(MoleculeBag.from_smiles("O.O.C")) == 3


@pytest.mark.parametrize(
    "spelling",
    [
        # USPTO-50k test products: RDKit's first pass gives the @@/@@ spelling, whose own
        # canonicalization gives @/@ (the same trans-1,4-cyclohexane).
        "NCC(=O)N[C@@H]1CC[C@@H](O)CC1",
        "O=C1CCCCN1[C@@H]1CC[C@@H](O)CC1",
        "CC[C@@H]1CC[C@@H](Oc2ccc(Br)cc2)CC1",
    ],
)
def test_ring_stereo_canonical_form_is_a_fixed_point(spelling: str) -> None:
    once = canonical_smiles(spelling)
    assert canonical_smiles(once) == once
    mol = parse_smiles(spelling)
    from rdkit import Chem

    for variant in Chem.MolToRandomSmilesVect(mol, 5, randomSeed=11):
        assert canonical_smiles(variant) == once


def test_whitespace_inside_smiles_is_refused_not_truncated() -> None:
    assert try_parse_smiles("CC O") is None
    assert "whitespace" in describe_parse_failure("CC O")
    assert canonical_smiles(" CCO\t") == "CCO"
    assert canonical_smiles("C[C@H](O)C(=O)O |o1:1|") == "C[C@H](O)C(=O)O"


@pytest.mark.parametrize(
    "spelling",
    [
        "NCC(=O)N[C@@H]1CC[C@@H](O)CC1",  # first pass is not a fixed point
        "NCC(=O)N[C@H]1CC[C@H](O)CC1",  # the fixed point itself
        "C[C@H](N)C(=O)O",
        "N[C@@H](C)C(O)=O",
    ],
)
def test_a_source_spelling_only_skips_the_check_when_it_is_the_output(spelling: str) -> None:
    from chemgauge.chem.smiles import mol_to_canonical

    plain = mol_to_canonical(parse_smiles(spelling))
    assert mol_to_canonical(parse_smiles(spelling), source=spelling) == plain
    assert mol_to_canonical(parse_smiles(plain), source=plain) == plain


def test_a_first_pass_is_re_parsed_once_and_every_moved_source_still_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fixed point of a first canonical pass depends on that text alone: it is computed
    once per text, and each source whose first pass moved is still recorded as such."""
    from chemgauge.chem import smiles

    monkeypatch.setattr(smiles, "_FIXED", {})
    monkeypatch.setattr(smiles, "_SECOND_PASS", set())
    calls: list[str] = []
    real = smiles._fixed_point

    def counted(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(smiles, "_fixed_point", counted)
    spellings = ["N[C@@H](C)C(O)=O", "C[C@H](N)C(O)=O", "OC(=O)[C@@H](N)C"]
    assert {smiles.mol_to_canonical(parse_smiles(s), source=s) for s in spellings} == {
        "C[C@H](N)C(=O)O"
    }
    assert calls == ["C[C@H](N)C(=O)O"]  # one re-parse for three spellings
    assert not smiles.any_second_pass()
    # RDKit builds (not this one) where a first pass moves: the move is remembered too, and
    # every source that needed it is recorded
    monkeypatch.setattr(smiles, "_FIXED", {})
    monkeypatch.setattr(smiles, "_fixed_point", lambda text: counted(text) and "moved")
    for source in ("N[C@@H](C)C(O)=O", "OC(=O)[C@@H](N)C"):
        assert smiles.mol_to_canonical(parse_smiles(source), source=source) == "moved"
    assert calls[1:] == ["C[C@H](N)C(=O)O"]
    assert smiles.needed_second_pass("N[C@@H](C)C(O)=O")
    assert smiles.needed_second_pass("OC(=O)[C@@H](N)C")
    assert not smiles.needed_second_pass("C[C@H](N)C(O)=O")
    monkeypatch.setattr(smiles, "_fixed_point", counted)
    monkeypatch.setattr(smiles, "_MAX_FIXED", 1)
    assert smiles.mol_to_canonical(parse_smiles("N[C@@H](CO)C(=O)O")) == "N[C@@H](CO)C(=O)O"
    assert smiles._FIXED == {"N[C@@H](CO)C(=O)O": "N[C@@H](CO)C(=O)O"}  # cleared at the bound


def _rdkit_default_canonical(smiles: str) -> str | None:
    """The reference: RDKit's default parse (hydrogen removal included), maps cleared."""
    from rdkit import Chem

    from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical

    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    return mol_to_canonical(clear_atom_maps(mol))


@pytest.mark.parametrize(
    "smiles",
    [
        "[H]C([H])([H])O",  # hydrogen atoms: the removal pass runs
        "[2H]C([2H])([2H])O",  # isotopic hydrogens are kept as atoms
        "[H][H]",
        "[H+]",
        "C[Hg]Cl",  # mercury is not a hydrogen atom
        "[CH3:1][OH:2]",  # bracket hydrogens are counts, not atoms
        "F/C=C/[H]",
        "N[C@@H](C)C(=O)O",
        "[H]/C(F)=C(/[H])F",
    ],
)
def test_key_parse_canonicalizes_like_rdkit_default(smiles: str) -> None:
    from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles_for_key

    mol = try_parse_smiles_for_key(smiles)
    assert mol is not None
    assert mol_to_canonical(clear_atom_maps(mol)) == _rdkit_default_canonical(smiles)


def test_key_parse_canonicalizes_like_rdkit_default_on_real_data(nci_smiles: list[str]) -> None:
    """Skipping the hydrogen-removal pass changes no canonical SMILES: every component and
    whole side of 400 mapped USPTO-50k reactions, and the NCI set."""
    import csv

    from tests.conftest import shared_file

    with open(shared_file("uspto50k/test.csv"), newline="") as handle:
        reactions = [r["reactants>reagents>production"] for r in csv.DictReader(handle)][:400]
    texts = {side for r in reactions for side in r.split(">") if side}
    texts |= {c for side in list(texts) for c in side.split(".")}
    texts |= set(nci_smiles[:2000])
    for text in sorted(texts):
        assert try_canonical_smiles(text) == _rdkit_default_canonical(text), text
    assert len(texts) > 3000  # (texts with hydrogen atoms are the parametrized cases above)
