"""Every rate is over every row: a name OPSIN refuses because of the name itself is the
namer's ``unparseable``; a genuine OPSIN failure is its own bucket inside ``total``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from chemgauge.errors import InputFileError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair, read_pairs
from chemgauge.families.names.metrics import (
    LENSES,
    OWN_LENSES,
    RowClass,
    RowResult,
    aggregate,
    classify_parsed,
)
from chemgauge.families.names.reference import DIFFERENCE_CLASSES, difference_class
from chemgauge.families.names.refusals import name_refusal
from chemgauge.families.names.runner import ReadBack, score_pairs

ALKANES = ["C", "CC", "CCC", "CCCC"]
NAMES = {"C": "methane", "CC": "ethane", "CCC": "propane", "CCCC": "butane"}
READ_BACK = {v: k for k, v in NAMES.items()}
sent: list[str] = []


def resolve(names: Sequence[str]) -> list[ReadBack]:
    sent.extend(names)
    return [
        ReadBack(READ_BACK[n], "success") if n in READ_BACK else ReadBack(None, "failure")
        for n in names
    ]


def _report(pairs: list[NamePair], **flags: object) -> dict:
    config = CoverageConfig(**flags)  # type: ignore[arg-type]
    rows = score_pairs(pairs, resolve, config)
    return aggregate((RowResult.from_row(r, config.lenses) for r in rows), lenses=config.lenses)


def _right(count: int) -> list[NamePair]:
    return [NamePair(str(i), i + 2, ALKANES[i % 4], NAMES[ALKANES[i % 4]]) for i in range(count)]


def _refused(count: int, start: int) -> list[NamePair]:
    # every kind of name OPSIN is never sent, round-robin
    bad = ["methane\nethane", "x" * 100_001, "meth\x00ane", "meth\u200bane", "eth\x07ane"]
    return [NamePair(str(start + i), start + i + 2, "C", bad[i % len(bad)]) for i in range(count)]


@pytest.mark.parametrize("reference_lenses", [False, True])
def test_99_right_and_1_refused_is_99_of_100_with_1_unparseable(reference_lenses: bool) -> None:
    report = _report(_right(99) + _refused(1, 99), reference_lenses=reference_lenses)
    assert report["total"] == 100
    for lens in CoverageConfig(reference_lenses=reference_lenses).lenses:
        block = report["lenses"][lens]
        assert block["abs_rt_valid"]["count"] == 99 and block["abs_rt_valid"]["n"] == 100
        assert block["coverage"]["n"] == 100 and block["coverage"]["count"] == 100
        assert block["counts"]["unparseable"] == 1
        assert block["counts"]["opsin_error"] == 0


@pytest.mark.parametrize("reference_lenses", [False, True])
def test_20_refused_give_80_of_100(reference_lenses: bool) -> None:
    report = _report(_right(80) + _refused(20, 80), reference_lenses=reference_lenses)
    for lens in CoverageConfig(reference_lenses=reference_lenses).lenses:
        block = report["lenses"][lens]
        assert (block["abs_rt_valid"]["count"], block["abs_rt_valid"]["n"]) == (80, 100)
        assert block["counts"]["unparseable"] == 20
        assert block["unparseable"]["n"] == 100


def test_a_refused_name_is_never_sent_and_its_row_says_why() -> None:
    sent.clear()
    rows = score_pairs(_refused(5, 0), resolve, CoverageConfig())
    assert sent == []
    reasons = [r["unparseable_reason"] for r in rows]
    assert reasons == [
        "line_break",
        "name_too_long",
        "control_character",
        "invisible_character",
        "control_character",
    ]
    assert all(r["strict"] == RowClass.UNPARSEABLE for r in rows)


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("methane", None),
        ("(2S)-butan-2-ol", None),
        ("α-D-glucopyranose", None),
        ("a\rb", "line_break"),
        ("a\u2028b", "line_break"),
        ("a\tb", "control_character"),
        ("a\ufeffb", "invisible_character"),
        ("a\u00adb", "invisible_character"),
        ("a\ud800b", "lone_surrogate"),
    ],
)
def test_name_refusals(name: str, code: str | None) -> None:
    found = name_refusal(name)
    assert (found.code if found else None) == code


def test_a_genuine_opsin_failure_is_in_total_and_never_credited() -> None:
    def timing_out(names: Sequence[str]) -> list[ReadBack]:
        return [
            ReadBack(None, "timeout", "timed out") if n == "butane" else resolve([n])[0]
            for n in names
        ]

    pairs = _right(4)
    rows = score_pairs(pairs, timing_out, CoverageConfig())
    report = aggregate(RowResult.from_row(r, OWN_LENSES) for r in rows)
    assert report["opsin_error"] == 1
    strict = report["lenses"]["strict"]
    assert (strict["abs_rt_valid"]["count"], strict["abs_rt_valid"]["n"]) == (3, 4)
    assert (strict["coverage"]["count"], strict["coverage"]["n"]) == (4, 4)
    assert (strict["of_emitted_rt"]["count"], strict["of_emitted_rt"]["n"]) == (3, 4)


def test_an_input_without_a_key_is_one_class_under_every_lens() -> None:
    classes, reasons = classify_parsed("*C", "C", ("parity", "strict", "exact"))
    assert set(classes.values()) == {RowClass.UNSCORABLE}
    assert set(reasons.values()) == {"input_has_no_key"}
    # the reference lenses, as the module is written, call it a mismatch
    reference, _ = classify_parsed("*C", "C", ("reference_parity", "reference_strict"))
    assert set(reference.values()) == {RowClass.CONFIDENTLY_WRONG}


def test_duplicate_column_names_are_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("smiles\tname\tname\nC\tmethane\tethane\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"duplicate column.*name"):
        read_pairs(path, RejectionStats())


@pytest.mark.parametrize(
    ("smiles", "read_back", "parity", "reference", "reason"),
    [
        ("*C", "C", "unscorable", "confidently_wrong", "input_has_no_key"),
        ("F[P-](F)(F)(F)(F)F", "FP(F)(F)(F)F", "unscorable", "confidently_wrong",
         "unscorable_in_parity"),
        # a name that omits the ring's cis/trans stereo: parity forgives it, the reference not
        ("C1CC[C@H](C)[C@@H](C)C1", "CC1CCCCC1C", "rt_valid", "confidently_wrong",
         "stereo_omitted"),
        ("C/C=C/C", "CC=CC", "rt_valid", "confidently_wrong", "stereo_omitted"),
        ("C[C@H](O)CC", "C[C@@H](O)CC", "rt_valid", "confidently_wrong", "stereo_differs"),
        ("[2H]C(Cl)Cl", "ClCCl", "rt_valid", "confidently_wrong", "isotope_differs"),
        # The bench set's rows (bench/data/names_namers.smi) a namer's read-back put here.
        # uspto50k-test:939, openclatura: one molecule, two spellings whose canonical
        # tautomers differ
        ("CN1CCN(CCN2C(=O)C(NC(=O)c3cc4ccccc4[nH]3)N=C(c3ccccc3)c3ccccc32)CC1",
         "CN1CCN(CC1)CCN1C(C(N=C(C2=C1C=CC=C2)C2=CC=CC=C2)NC(=O)C=2NC1=CC=CC=C1C2)=O",
         "rt_valid", "confidently_wrong", "spelling_dependent_key"),
        # opsin:423, openclatura's and Orthonym's names (Orthonym's one difference on the
        # bench): one InChI, the double bonds placed elsewhere in a ring system RDKit does
        # not call aromatic
        ("C1=CC2=C3C4=CC=C(C4)C3=C1C2", "C12=CC=C(C=3C4=CC=C(C13)C4)C2",
         "rt_valid", "confidently_wrong", "same_standard_inchi"),
        # opsin:613, nispo's antimony(5+) hexabromide: the ionic form keeps only its largest ion
        ("[Br-].[Br-].[Br-].[Br-].[Br-].[Br-].[Sb+5]", "[Sb-](Br)(Br)(Br)(Br)(Br)Br",
         "rt_valid", "confidently_wrong", "largest_fragment_only"),
        # opsin:519 and opsin:555, openclatura: deuterium on O and N; the reference's key of
        # the labelled input is not even readable SMILES, the unlabelled keys are equal
        ("[2H]N=C(O[2H])N([2H])[2H]", "OC(N)=N", "rt_valid", "confidently_wrong",
         "isotope_differs"),
        ("[2H]OC(C)=O", "OC(C)=O", "rt_valid", "confidently_wrong", "isotope_differs"),
        # opsin:247, nispo: one of four stereocentres inverted
        ("OC[C@@H](O)[C@@H](O)[C@H](O)[C@@H](O)COc1ccccc1",
         "O[C@H](COC1=CC=CC=C1)[C@H]([C@@H]([C@H](CO)O)O)O",
         "rt_valid", "confidently_wrong", "stereo_differs"),
    ],
)  # fmt: skip
def test_each_parity_reference_difference_has_its_class(
    smiles: str, read_back: str, parity: str, reference: str, reason: str
) -> None:
    classes, reasons = classify_parsed(smiles, read_back, ("parity", "reference_parity"))
    assert (classes["parity"].value, classes["reference_parity"].value) == (parity, reference)
    assert difference_class(smiles, read_back, parity, reasons.get("parity")) == reason


def test_a_difference_nothing_explains_is_other() -> None:
    # the classifier's last resort, called on a pair no lens would call the same
    assert difference_class("CCO", "CCC", "rt_valid", None) == "other"
    assert set(DIFFERENCE_CLASSES) >= {"stereo_omitted", "other", "input_has_no_key"}


def test_the_report_lists_every_parity_reference_difference_with_its_class() -> None:
    from chemgauge.families.names.runner import RowSummary

    pairs = [
        NamePair("1", 2, "C/C=C/C", "(2E)-but-2-ene"),
        NamePair("2", 3, "CC=CC", "but-2-ene"),
    ]
    answers = {"(2E)-but-2-ene": "CC=CC", "but-2-ene": "CC=CC"}
    config = CoverageConfig(reference_lenses=True)
    rows = score_pairs(pairs, lambda ns: [ReadBack(answers[n], "success") for n in ns], config)
    summary = RowSummary(config.lenses)
    for row in rows:
        summary.add(row)
    listed = summary.listings()
    assert listed["parity_reference_by_class"] == {"stereo_omitted": 1}
    assert [d["id"] for d in listed["parity_reference_differences"]] == ["1"]
    assert listed["parity_reference_differences"][0]["parity"] == "rt_valid"


def test_a_reference_key_rdkit_cannot_read_back_is_other_never_a_crash() -> None:
    # an unparsable key on either side: nothing finer to say than 'other'
    assert difference_class("CCO", "C1CC", "confidently_wrong", None) == "other"


def test_the_reference_lens_judges_the_spellings_as_given() -> None:
    # uspto50k-test:939 and openclatura's read-back: one molecule, two spellings whose
    # canonical tautomers differ, so the module (keys of the spellings) calls it a mismatch
    smiles = "CN1CCN(CCN2C(=O)C(NC(=O)c3cc4ccccc4[nH]3)N=C(c3ccccc3)c3ccccc32)CC1"
    read_back = "CN1CCN(CC1)CCN1C(C(N=C(C2=C1C=CC=C2)C2=CC=CC=C2)NC(=O)C=2NC1=CC=CC=C1C2)=O"
    classes, _ = classify_parsed(smiles, read_back, ("parity", "reference_parity"))
    assert classes["reference_parity"] == RowClass.CONFIDENTLY_WRONG
    assert classes["parity"] == RowClass.RT_VALID


# The reference lenses (a canonical-tautomer search per structure) are opt-in.
# (2E)-but-2-ene read back without its stereo: parity forgives it, reference_parity does not.
_STEREO_PAIRS = [
    NamePair("1", 2, "C/C=C/C", "(2E)-but-2-ene"),
    NamePair("2", 3, "CC=CC", "but-2-ene"),
    NamePair("3", 4, "CCO", "propane"),  # confidently wrong under every lens
]
_STEREO_ANSWERS = {"(2E)-but-2-ene": "CC=CC", "but-2-ene": "CC=CC", "propane": "CCC"}


def _stereo_rows(reference_lenses: bool) -> list[dict]:
    return score_pairs(
        _STEREO_PAIRS,
        lambda ns: [ReadBack(_STEREO_ANSWERS[n], "success") for n in ns],
        CoverageConfig(reference_lenses=reference_lenses),
    )


def test_without_the_flag_rows_have_no_reference_columns() -> None:
    from chemgauge.families.names.runner import listings_of

    rows = _stereo_rows(False)
    for row in rows:
        assert not {"reference_parity", "reference_strict", "parity_reference_difference"} & set(
            row
        )
        assert set(LENSES) & set(row) == set(OWN_LENSES)
    listed = listings_of(rows, OWN_LENSES)
    # not computed is null, never an empty list (which would say "no differences")
    assert listed["parity_reference_differences"] is None
    assert listed["parity_reference_by_class"] is None


def test_with_the_flag_the_own_lenses_count_as_without_it() -> None:
    off, on = _stereo_rows(False), _stereo_rows(True)
    assert [r["reference_parity"] for r in on] == [
        "confidently_wrong",
        "rt_valid",
        "confidently_wrong",
    ]
    assert [r["parity_reference_difference"] for r in on] == ["stereo_omitted", None, None]
    for a, b in zip(off, on, strict=True):
        assert {k: v for k, v in b.items() if k in off[0]} == a
    tally_off = aggregate((RowResult.from_row(r, OWN_LENSES) for r in off), lenses=OWN_LENSES)
    tally_on = aggregate((RowResult.from_row(r, tuple(LENSES)) for r in on), lenses=LENSES)
    for lens in OWN_LENSES:
        assert tally_on["lenses"][lens] == tally_off["lenses"][lens]
    assert tally_on["lenses"]["reference_parity"]["counts"]["rt_valid"] == 1
    assert "reference_parity" not in tally_off["lenses"]


def test_the_report_shows_the_reference_lenses_only_when_computed(tmp_path: Path) -> None:
    from tests.report.conftest import NAMES_B, make_names_run

    from chemgauge.families.names.adapter import NamesAdapter
    from chemgauge.report.loading import load_run

    adapter = NamesAdapter()
    for reference in (False, True):
        run = load_run(
            make_names_run(tmp_path / str(reference), NAMES_B, reference_lenses=reference)
        )
        assert run.envelope.config["coverage"]["reference_lenses"] is reference
        assert ("reference_parity" in run.metrics["lenses"]) is reference
        assert ("rt_valid[reference_parity]" in adapter.hit_metrics(run)) is reference
        (section, *_) = adapter.sections(run, max_failures=5)
        titles = [table.title for table in section.tables]
        assert ("Rates under the reference lenses" in titles) is reference
        # verify recomputes the same block from the rows, with or without the flag
        recomputed = adapter.recompute(run).sections
        assert recomputed["lenses"] == run.metrics["lenses"]
        by_class = run.metrics["parity_reference_by_class"]
        assert recomputed["parity_reference_by_class"] == by_class
        assert (by_class is not None) is reference
