"""Reactant-set comparison: validity, duplicates by structure, policies, lazy keys = all keys."""

from __future__ import annotations

import pytest

from chemgauge.chem import get_matcher
from chemgauge.chem.reactant_sets import ReactantSetScorer

TRUTH = ("CC(=O)O", "CN")


def test_validity_duplicates_and_correctness_on_hand_cases() -> None:
    outputs = [
        "CN.CC(=O)O",  # 0 correct
        "OC(C)=O.NC",  # 1 same set, other spelling: duplicate of 0
        "CC(=O)O.CN.CN",  # 2 multiplicity differs: not correct, not a duplicate
        "C1CC.CN",  # 3 invalid (unclosed ring)
        "",  # 4 invalid (empty output)
        "CC(=O)O..CN",  # 5 invalid (empty component)
        "[CH3:7]N.CC(=O)O",  # 6 atom maps are forgiven: duplicate of 0
        "CCO",  # 7 wrong
    ]
    result = ReactantSetScorer(["exact"]).compare(TRUTH, outputs)
    assert result.valid == (True, True, True, False, False, False, True, True)
    assert result.first_seen == (0, 0, 2, None, None, None, 0, 7)
    assert result.correct["exact"] == (True, True, False, False, False, False, True, False)


def test_stereo_ignored_forgives_stereo_but_not_isotopes() -> None:
    truth = ("C[C@H](N)C(=O)O",)
    outputs = ["CC(N)C(=O)O", "C[C@@H](N)C(=O)O", "[13CH3]C(N)C(=O)O", "N[C@@H](C)C(O)=O"]
    result = ReactantSetScorer(["exact", "stereo_ignored"]).compare(truth, outputs)
    assert result.correct["exact"] == (False, False, False, True)
    assert result.correct["stereo_ignored"] == (True, True, False, True)
    # duplicates are always judged under exact: the enantiomer is a different output
    assert result.first_seen == (0, 1, 2, 3)


def test_an_invalid_truth_matches_nothing() -> None:
    result = ReactantSetScorer(["exact"]).compare(("C1CC",), ["C1CC", "CCC"])
    assert result.truth_unsupported["exact"] is True
    assert result.correct["exact"] == (False, False)
    empty = ReactantSetScorer(["exact"]).compare((), [""])
    assert empty.correct["exact"] == (False,)


def test_non_invariant_policies_compute_every_key() -> None:
    # inchi forgives the zwitterion: formula-based shortcuts would be unsafe for it
    result = ReactantSetScorer(["exact", "inchi"]).compare(("NCC(=O)O",), ["[NH3+]CC(=O)[O-]"])
    assert result.correct["exact"] == (False,)
    assert result.correct["inchi"] == (True,)


def _brute_force(
    truth: tuple[str, ...], outputs: list[str], policy: str
) -> tuple[list[bool], list[int | None]]:
    key = get_matcher(policy).key
    exact = get_matcher("exact").key

    def set_key(smiles: str, fn: object) -> tuple[str, ...] | None:
        parts = smiles.split(".")
        keys = [fn(p) if p else None for p in parts]  # type: ignore[operator]
        if any(k is None for k in keys):
            return None
        return tuple(sorted(x for k in keys for x in k.split(".")))  # type: ignore[union-attr]

    truth_key = set_key(".".join(truth), key)
    correct = [truth_key is not None and set_key(o, key) == truth_key for o in outputs]
    seen: dict[tuple[str, ...], int] = {}
    first: list[int | None] = []
    for rank, o in enumerate(outputs):
        k = set_key(o, exact)
        first.append(None if k is None else seen.setdefault(k, rank))
    return correct, first


@pytest.mark.parametrize("policy", ["exact", "stereo_ignored"])
def test_lazy_keys_give_the_same_answers_as_computing_every_key(policy: str) -> None:
    truth = ("C/C=C/C(=O)O", "OC[C@H]1CCCN1")
    outputs = [
        "C/C=C\\C(=O)O.OC[C@@H]1CCCN1",
        "OC(=O)/C=C/C.C1CCN[C@@H]1CO",
        "CC=CC(=O)O.OCC1CCCN1",
        "CCCC(=O)O.OCC1CCCN1",
        "C(=O)(O)/C=C/C.OC[C@H]1CCCN1",
        "OC[C@H]1CCCN1.C/C=C/C(=O)O",
        "C1CCCN1CO.CC=CC(O)=O",
        "x",
        "C/C=C/C(=O)O",
    ]
    result = ReactantSetScorer(["exact", "stereo_ignored"]).compare(truth, outputs)
    correct, first = _brute_force(truth, outputs, policy)
    assert list(result.correct[policy]) == correct
    assert list(result.first_seen) == first
    assert any(correct)


def test_outputs_listing_the_product_among_their_reactants_are_found() -> None:
    product = "CNC(C)=O"
    outputs = ["CC(=O)O.CN", "CC(=O)NC.O", "C1CC.CC(=O)NC", "CNC(C)=O", "CC(=O)N(C)C"]
    result = ReactantSetScorer(["exact"]).compare(TRUTH, outputs, product)
    # rank 2 is invalid, rank 4 is an isomer-free different amide with another formula
    assert result.product_in_outputs == (1, 3)
    assert ReactantSetScorer(["exact"]).compare(TRUTH, outputs).product_in_outputs == ()


# Structures chosen to exercise every sanitization step the validity screen runs or skips:
# aromatic systems that do and do not kekulize, non-ring aromatic atoms, aromatic bonds on
# aliphatic atoms, valence errors, charges, radicals, dummies, isotopes, explicit hydrogens,
# metals (organometallic clean-up), hypervalent main-group atoms and atom maps.
TRICKY_SMILES = [
    "c1ccccc1",
    "C1=CC=CC=C1",
    "c1cc[nH]c1",
    "n1cccc1",
    "[nH]1cccc1",
    "O=c1cc[nH]cc1",
    "[O-][n+]1ccccc1",
    "c1ccc2[se]ccc2c1",
    "c1ccc2c(c1)oc1ccccc12",
    "c1cccc1",
    "c1ccccc1c",
    "C:C",
    "c1ccncc1C:C",
    "c1cc[cH-]c1",
    "c1cc[c-]c1",
    "[s+]1ccccc1",
    "c1ccsc1",
    "o1cccc1",
    "C1=CC2=CC=CC=CC2=C1",
    "c1cc2ccc3cccc4ccc(c1)c2c34",
    "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
    "O=[N+]([O-])c1ccccc1",
    "CN(C)(C)C",
    "C[N+](C)(C)C",
    "FC(F)(F)(F)c1ccccc1",
    "[Si](C)(C)(C)(C)C",
    "CS(=O)(=O)C",
    "OS(=O)(=O)(=O)O",
    "F[P-](F)(F)(F)(F)F",
    "P(c1ccccc1)(c1ccccc1)c1ccccc1",
    "FCl(F)F",
    "[Na+].[Cl-]",
    "[Fe]",
    "C[Mg]Br",
    "[Li]CCCC",
    "Cl[Pt](Cl)([NH3])[NH3]",
    "O=[Mn](=O)(=O)[O-]",
    "Cl[Co](Cl)(Cl)(Cl)(Cl)(Cl)Cl",
    "[CH2]",
    "[O]",
    "N(=O)=O",
    "*c1ccccc1",
    "c1cc*cc1",
    "[13CH4]",
    "[2H]C([2H])([2H])I",
    "[H][H]",
    "[H]OC",
    "[CH3:1][OH:2]",
    "c1cc[n:3]cc1",
    "C[C@H](N)C(=O)O",
    "C/C=C/C",
    "C1CC1",
    "c%10ccccc%10",
    "B1=CC=CC=C1",
    "b1ccccc1",
    "[NH4+]",
    "[O-]c1ccccc1",
    "C1CC",
    "C((C)",
    "c1ccccc1)",
    "[Xx]",
    "C=1CC1",
    "Clc1ccccc1Br",
    "[te]1cccc1",
    "C1=CC=C[C]1",
    "c1ccc2ccccc2c1",
    "N1C=CC=C1",
    "c1nc[nH]n1",
    "c1nnc[nH]1",
    "c1ncnn1",
    "[NH3][Co]",
    "N->[Pt](Cl)(Cl)<-N",
    "[Cs]OC",
    "[Se]C",
    "[*]C",
    "[SiH3]C",
    "C[Mg]c1ccccc1",
    # stops at a Kekule form with one more H on the sulfur than a full parse gives it
    "s=1c2nc(N)cn2c1Br",
    # aromatic rings closed through a metal or a dative bond: the fast ring finder sees a
    # ring that sanitization's does not (kekulizing on it would wrongly accept these)
    "CCC[CH2][Sn](c1[CH2]CCC)([c]11cscn1)[CH2]CCC",
    "c1c([CH2]1[Mg+]1)cccn1",
    "C[O-][Na]1NCC[n@H]1O",
    "Cc1ccc(B(O)O)cc[Zn+]Cl1",
    "C(F)(F)(F)Oc1(Cl)[Zn+][O-]cc(C=O)c1",
    "c1cc2n(c1)->[B]2",
    "C1=CC=CN1->[B]1cccc1",
]


@pytest.mark.parametrize("smiles", TRICKY_SMILES)
def test_validity_screen_accepts_exactly_what_a_full_parse_accepts(smiles: str) -> None:
    from chemgauge.chem.reactant_sets import screen_component, structure_invariant
    from chemgauge.chem.smiles import try_parse_smiles

    full = try_parse_smiles(smiles)
    screened = screen_component(smiles)
    assert (screened is None) == (full is None), smiles
    if full is not None:
        assert screened == structure_invariant(full)


@pytest.mark.parametrize(
    ("smiles", "invariant"),
    [
        ("CCO", "C2O/2"),
        ("OCC", "C2O/2"),
        ("C=C", "C2/1"),  # hydrogens are not counted: C=C and CC share an invariant
        ("CC", "C2/1"),
        ("c1ccccc1", "C6/6"),
        ("C1=CC=CC=C1", "C6/6"),
        ("[NH4+]", "N+/0"),
        ("C[Hg]Cl", "CClHg/2"),  # mercury's symbol is not a hydrogen count
        ("[2H]C([2H])([2H])O", "CO/4"),  # deuterium stays an atom: its bonds count
        ("s=1c2nc(N)cn2c1Br", "C4BrN3S/10"),
    ],
)
def test_structure_invariant_is_heavy_formula_charge_and_bonds(smiles: str, invariant: str) -> None:
    from chemgauge.chem.reactant_sets import screen_component, structure_invariant
    from chemgauge.chem.smiles import try_parse_smiles

    mol = try_parse_smiles(smiles)
    assert mol is not None
    assert structure_invariant(mol) == invariant
    assert screen_component(smiles) == invariant


def test_hydrogen_free_formulas_are_remembered_within_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The formula memo answers as the substitution does, and is cleared at its bound."""
    from chemgauge.chem import reactant_sets
    from chemgauge.chem.smiles import try_parse_smiles

    monkeypatch.setattr(reactant_sets, "_HEAVY_FORMULAS", {})
    monkeypatch.setattr(reactant_sets, "_MAX_FORMULAS", 2)
    seen = []
    for smiles, invariant in [("CCO", "C2O/2"), ("OCC", "C2O/2"), ("[NH4+]", "N+/0"),
                              ("C[Hg]Cl", "CClHg/2"), ("CCO", "C2O/2")]:  # fmt: skip
        mol = try_parse_smiles(smiles)
        assert mol is not None
        assert reactant_sets.structure_invariant(mol) == invariant
        seen.append(dict(reactant_sets._HEAVY_FORMULAS))
    assert seen[1] == {"C2H6O": "C2O"}  # the second spelling was answered from memory
    assert seen[3] == {"CH3ClHg": "CClHg"}  # cleared at the bound, then filled again
    assert len(seen[4]) == 2


def test_canonical_truth_gives_the_same_answers() -> None:
    truth = ("CC(=O)O", "C[C@H](N)C(=O)O")
    outputs = ["N[C@@H](C)C(O)=O.OC(C)=O", "CC(N)C(=O)O.CC(=O)O", "C1CC", "CC(=O)O"]
    plain = ReactantSetScorer(["exact", "stereo_ignored"]).compare(truth, outputs, "CC(N)C=O")
    promised = ReactantSetScorer(["exact", "stereo_ignored"]).compare(
        truth, outputs, "CC(N)C=O", canonical_truth=True
    )
    assert promised.correct == plain.correct
    assert promised.first_seen == plain.first_seen
    assert promised.correct["exact"] == (True, False, False, False)
    assert promised.correct["stereo_ignored"] == (True, True, False, False)


def test_outputs_likely_to_need_keys_are_parsed_up_front_without_changing_answers() -> None:
    from chemgauge.chem.reactant_sets import _likely_keyed

    truth = ("CC(=O)O", "CN")
    outputs = ["CN.CC(=O)O", "OC(C)=O.NC", "CCO", "c1ccccc1", "C1=CC=CC=C1", "CCCl"]
    # the truth's spellings, and the two spellings sharing letters, are flagged; CCO and
    # CCCl are not. Benzene's aromatic and Kekule spellings differ in letters, so the hint
    # misses them: that costs a second parse, and the duplicate is still found.
    assert _likely_keyed(truth, outputs) == {0, 1}
    result = ReactantSetScorer(["exact"]).compare(truth, outputs)
    assert result.first_seen == (0, 0, 2, 3, 3, 5)
    assert result.correct["exact"] == (True, True, False, False, False, False)


def _mutations(sources: list[str], n: int, seed: int) -> list[str]:
    """Seeded random edits (delete, insert, replace) of real SMILES: mostly invalid, and
    invalid in the many ways a model's output can be."""
    import random

    alphabet = [*"cnosCNOSPBFIl()[]=#-+123456789@/\\Hp:%0"]
    alphabet += ["[nH]", "[Na]", "[Fe]", "[Sn]", "[O-]", "[N+]", "Cl", "Br", "[se]", "[B-]"]
    alphabet += ["[Pd]", "[c-]", "[n+]", "[Zn+]", "[Mg]"]
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        chars = list(rng.choice(sources))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(chars) + 1)
            roll = rng.random()
            if roll < 0.4 and chars:
                chars.pop(min(pos, len(chars) - 1))
            elif roll < 0.8:
                chars.insert(pos, rng.choice(alphabet))
            elif chars:
                chars[min(pos, len(chars) - 1)] = rng.choice(alphabet)
        text = "".join(chars)
        if text and "." not in text:
            out.append(text)
    return out


def _real_reactant_components() -> list[str]:
    """The reactant components of the first 300 USPTO-50k test reactions, unmapped (as model
    outputs are): the sources the mutation fuzzes edit."""
    import csv

    from tests.conftest import shared_file

    with open(shared_file("uspto50k/test.csv"), newline="") as handle:
        reactions = [r["reactants>reagents>production"] for r in csv.DictReader(handle)][:300]
    sources = sorted({c for r in reactions for c in r.split(">")[0].split(".")})
    return [get_matcher("exact").key(s) or s for s in sources]


def test_validity_screen_agrees_with_a_full_parse_on_mutated_real_smiles() -> None:
    from tests.families.retro.screening import invalid_after_checking_screen

    texts = _mutations(_real_reactant_components(), 3000, seed=20261130)
    invalid = invalid_after_checking_screen(texts)
    assert 0.5 * len(texts) < invalid < len(texts)  # both kinds well represented


def _aromatic_mutations(sources: list[str], n: int, seed: int) -> list[str]:
    """Seeded token edits aimed at kekulization: aromatic atoms swapped for one another or
    for their aliphatic, charged or hydrogen-bearing forms, ring closures dropped, doubled or
    renumbered, aromatic fragments inserted."""
    import random
    import re

    token = re.compile(r"\[[^\]]*\]|Cl|Br|%\d\d|.")
    swaps = {
        "c": ["C", "n", "[nH]", "[c-]", "s", "o", "[se]", "p", "[n+]", "b"],
        "n": ["N", "c", "[nH]", "[n+]", "[n-]"],
        "C": ["c", "[CH]"],
        "o": ["O", "s", "c"],
        "s": ["S", "o", "c"],
        "N": ["n"],
        "=": ["", ":"],
    }
    inserts = ["c1", "n1", "c2", "1", "2", "=", ":", "c", "n", "[nH]"]
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        tokens = token.findall(rng.choice(sources))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(tokens))
            roll = rng.random()
            if tokens[i] in swaps and roll < 0.6:
                tokens[i] = rng.choice(swaps[tokens[i]])
            elif tokens[i].isdigit() and roll < 0.8:
                tokens[i] = rng.choice(["", str(rng.randint(1, 9)), tokens[i] * 2])
            elif roll < 0.9:
                tokens.insert(i, rng.choice(inserts))
            elif len(tokens) > 1:
                tokens.pop(i)
        text = "".join(tokens)
        if text and "." not in text:
            out.append(text)
    return out


def test_validity_screen_agrees_with_a_full_parse_on_aromatic_edits_of_real_smiles() -> None:
    from tests.families.retro.screening import invalid_after_checking_screen

    aromatic = [s for s in _real_reactant_components() if "c" in s]
    texts = _aromatic_mutations(aromatic, 4000, seed=20261130)
    invalid = invalid_after_checking_screen(texts)
    assert 0.5 * len(texts) < invalid < 0.98 * len(texts)  # valid edits exercised too
