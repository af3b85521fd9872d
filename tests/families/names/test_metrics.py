"""The coverage contract on hand-checked pairs, with a dict-backed fake OPSIN.

Slips considered, each failing a test here: a refused name sent to OPSIN, counted as parsed
or without its code (or the code merged into "not interpretable"); a parsed, abstained or
OPSIN-error row counted among the unparseable reasons, or a repeated reason counted once;
the completeness share with ``<`` for ``<=`` at the limit, over the wrong count, or dividing
by zero when nothing was emitted; an input with one key of two judged by the lens whose key
it has (``and`` for ``or``); a lens outside the module's list losing its matcher name.
"""

from __future__ import annotations

import pytest

from chemgauge.chem.parity import KeyedStructure
from chemgauge.errors import RoundTripError
from chemgauge.families.names import metrics as metrics_module
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.metrics import (
    LENSES,
    CoverageTally,
    RowClass,
    RowResult,
    aggregate,
    classify_keyed,
    classify_parsed,
    classify_row,
    is_abstention,
    keyed,
)
from chemgauge.families.names.runner import ReadBack, score_pairs

L_ALANINE = "C[C@H](N)C(=O)O"
FAKE_OPSIN = {
    "ethanol": "OCC",
    "L-alanine": "N[C@@H](C)C(=O)O",
    "D-alanine": "N[C@H](C)C(=O)O",  # the stereo inversion both seed lenses forgive
    "acetate": "CC(=O)[O-]",  # dropped protonation: strict catches it, parity forgives
    "propen-2-ol": "CC(O)=C",  # enol: only parity forgives keto/enol
    "methanol": "CO",  # plain wrong structure
    "(2R)-2-chlorobutane": "CC[C@@H](C)Cl",
    "(2S)-2-chlorobutane": "CC[C@H](C)Cl",
    "2-chlorobutane": "CCC(C)Cl",
    "(E)-but-2-ene": "C/C=C/C",
    "(Z)-but-2-ene": "C/C=C\\C",
    "acetylium": "C[C+]=O",  # the resonance form OPSIN writes
    "methylmercury(1+)": "C[Hg+]",
    "ethyl": "*CC",  # a read-back with a dummy atom has no InChI
    "garbled": "C1CC",  # a read-back RDKit cannot read
    "timed out": "<never returned>",
}


def fake(name: str) -> str | None:
    if name == "timed out":
        raise RoundTripError("timeout: OPSIN gave no answer within 0.001 s")
    return FAKE_OPSIN.get(name)


def classes(smiles: str, name: str | None) -> tuple[RowClass, RowClass, RowClass]:
    row = classify_row(smiles, name, fake)
    return row.classes["parity"], row.classes["strict"], row.classes["exact"]


OURS = ("parity", "strict", "exact")
V, W, U, A = RowClass.RT_VALID, RowClass.CONFIDENTLY_WRONG, RowClass.UNPARSEABLE, RowClass.ABSTAINED


@pytest.mark.parametrize(
    ("smiles", "name", "expected"),
    [
        ("CCO", "ethanol", (V, V, V)),
        (L_ALANINE, "L-alanine", (V, V, V)),
        (L_ALANINE, "D-alanine", (V, V, W)),
        ("CC(=O)O", "acetate", (V, W, W)),
        ("CC(C)=O", "propen-2-ol", (V, W, W)),
        ("CCO", "methanol", (W, W, W)),
        # Stereo: inversion, omission, addition and E/Z swaps are caught by exact only.
        ("CC[C@H](C)Cl", "(2R)-2-chlorobutane", (V, V, W)),
        ("CC[C@H](C)Cl", "(2S)-2-chlorobutane", (V, V, V)),
        ("CC[C@H](C)Cl", "2-chlorobutane", (V, V, W)),
        ("CCC(C)Cl", "(2S)-2-chlorobutane", (V, V, W)),
        ("C/C=C/C", "(Z)-but-2-ene", (V, V, W)),
        ("C/C=C/C", "(E)-but-2-ene", (V, V, V)),
        # What strict accepts, parity accepts: resonance forms and organometallics.
        ("CC#[O+]", "acetylium", (V, V, V)),
        ("[CH3].[Hg+]", "methylmercury(1+)", (V, V, V)),
        # A read-back without a key is never round-trip valid, under any lens.
        ("CCC", "ethyl", (W, W, W)),
        ("CC", "ethyl", (W, W, W)),
        ("CCO", "no such name", (U, U, U)),
        ("CCO", "", (A, A, A)),
        ("CCO", "   ", (A, A, A)),
        ("CCO", None, (A, A, A)),
    ],
)
def test_row_classes_under_each_lens(
    smiles: str, name: str | None, expected: tuple[RowClass, ...]
) -> None:
    assert classes(smiles, name) == expected


def test_a_read_back_without_a_key_is_never_valid() -> None:
    # Unparsable under every key: wrong under the key lenses, undecided under parity.
    row = classify_row("CCO", "garbled", fake)
    assert row.classes["strict"] is W and row.classes["exact"] is W
    assert row.classes["parity"] is RowClass.UNSCORABLE
    assert row.reasons == {"parity": "not_standardizable"}
    for lens in ("parity", "strict", "exact"):
        assert classify_parsed("CCO", "", (lens,))[0][lens] is not V


@pytest.mark.parametrize(
    ("smiles", "read_back"),
    [
        ("CC", "*CC"),  # 'ethyl': OPSIN writes the attachment point as a dummy atom
        ("CCC", "*CC"),
        ("CC(C)=O", "*C(C)=O"),  # 'acetyl'
        ("c1ccccc1", "*c1ccccc1"),  # 'phenyl'
        ("CCO", "C1CC"),  # a read-back RDKit cannot parse has no key either
    ],
)
def test_a_read_back_whose_key_is_none_never_matches_under_any_lens(
    smiles: str, read_back: str
) -> None:
    expected, parsed = keyed(smiles), keyed(read_back)
    # the precondition, by hand: the input has both keys, the read-back neither
    assert expected.inchikey is not None and expected.strict_key is not None
    assert parsed.inchikey is None and parsed.strict_key is None
    classes, _ = classify_keyed(expected, parsed, OURS)
    assert set(classes) == {"parity", "strict", "exact"}
    assert V not in classes.values()
    # the key lenses call it wrong: the namer emitted a name for another (unkeyable) thing
    assert classes["strict"] is W and classes["exact"] is W
    # a lens asked alone judges the same
    for lens in ("parity", "strict", "exact"):
        assert classify_keyed(expected, parsed, (lens,))[0] == {lens: classes[lens]}
    # and so does the whole row, whatever OPSIN's spelling of the read-back
    row = classify_row(smiles, "a name", lambda name: read_back, lenses=OURS)
    assert row.emitted and row.opsin_parsed and row.opsin_smiles == read_back
    assert dict(row.classes) == classes


def test_a_key_lens_never_matches_a_read_back_without_a_key_to_one_with_a_key() -> None:
    # Hand-built keys, no chemistry in between: ethanol's InChIKey and strict key against a
    # read-back whose keys are None (the shape OPSIN's '*' answers take).
    ethanol = keyed("CCO")
    keyless = KeyedStructure("*CC", None, None)
    for lens in ("strict", "exact"):
        assert classify_keyed(ethanol, keyless, (lens,)) == ({lens: W}, {})
        assert classify_keyed(ethanol, ethanol, (lens,)) == ({lens: V}, {})
        # the other way round the input has no key: the lens cannot judge, never credits
        assert classify_keyed(keyless, ethanol, (lens,)) == (
            {lens: RowClass.UNSCORABLE},
            {lens: "input_has_no_key"},
        )
        assert classify_keyed(keyless, keyless, (lens,))[0] == {lens: RowClass.UNSCORABLE}


def test_parity_unscorable_is_counted_with_its_reason_never_wrong() -> None:
    # Uncharging hexafluorophosphate gives a structure RDKit cannot read back: no parity
    # form, so a pair strict does not settle is unscorable under parity, with the reason.
    classes, reasons = classify_parsed("F[P-](F)(F)(F)(F)F", "FP(F)(F)(F)F", OURS)
    assert classes == {"parity": RowClass.UNSCORABLE, "strict": W, "exact": W}
    assert reasons == {"parity": "not_standardizable"}
    tally = CoverageTally()
    tally.add(classify_row("F[P-](F)(F)(F)(F)F", "pf5", lambda n: "FP(F)(F)(F)F"))
    parity = tally.result()["lenses"]["parity"]
    assert parity["unscorable"] == 1 and parity["confidently_wrong"]["count"] == 0
    assert parity["unscorable_reasons"] == {"not_standardizable": 1}


def test_opsin_errors_are_their_own_class_inside_every_denominator() -> None:
    rows = [
        classify_row("CCO", "ethanol", fake),  # valid
        classify_row("CCO", "methanol", fake),  # wrong
        classify_row("CCO", "gibberish", fake),  # unparseable
        classify_row("CCO", "timed out", fake),  # OPSIN's failure, not the namer's
        classify_row("CCO", "", fake),  # abstained
    ]
    error = rows[3]
    assert set(error.classes.values()) == {RowClass.OPSIN_ERROR}
    assert error.emitted and error.opsin_parsed is None
    report = aggregate(rows)
    assert (report["total"], report["opsin_error"]) == (5, 1)
    assert (report["emitted"], report["abstained"], report["unparseable"]) == (4, 1, 1)
    strict = report["lenses"]["strict"]
    assert (strict["coverage"]["count"], strict["coverage"]["n"]) == (4, 5)
    assert (strict["of_emitted_rt"]["count"], strict["of_emitted_rt"]["n"]) == (1, 4)
    assert (strict["abs_rt_valid"]["count"], strict["abs_rt_valid"]["n"]) == (1, 5)
    assert strict["confidently_wrong"]["n"] == strict["unparseable"]["n"] == 5
    assert (strict["opsin_error"]["count"], strict["opsin_error"]["n"]) == (1, 5)
    assert strict["counts"]["opsin_error"] == 1
    for lens in report["lenses"].values():  # every lens adds up to the total
        assert sum(lens["counts"].values()) == report["total"]


def test_one_opsin_call_per_emitted_name() -> None:
    calls: list[str] = []

    def counting(name: str) -> str | None:
        calls.append(name)
        return fake(name)

    classify_row("CCO", "ethanol", counting)
    classify_row("CCO", "", counting)
    assert calls == ["ethanol"]


def test_failure_markers_are_abstentions() -> None:
    assert is_abstention("<no name>", {"<no name>"})
    assert is_abstention("  <no name> ", {"<no name>"})
    assert not is_abstention("ethanol", {"<no name>"})
    row = classify_row("CCO", "ERROR", fake, markers={"ERROR"})
    assert not row.emitted and row.opsin_parsed is None


def test_aggregate_hand_computed() -> None:
    rows = [
        classify_row("CCO", "ethanol", fake),  # valid everywhere
        classify_row(L_ALANINE, "D-alanine", fake),  # exact-wrong only
        classify_row("CCO", "methanol", fake),  # wrong everywhere
        classify_row("CCO", "gibberish", fake),  # unparseable
        classify_row("CCO", "", fake),  # abstained
    ]
    report = aggregate(rows, pin_pct=97.5)
    assert (report["total"], report["emitted"], report["opsin_parsed"]) == (5, 4, 3)
    strict = report["lenses"]["strict"]
    assert strict["coverage"]["value"] == pytest.approx(4 / 5)
    assert strict["of_emitted_rt"]["value"] == pytest.approx(2 / 4)
    assert strict["abs_rt_valid"]["value"] == pytest.approx(2 / 5)
    assert strict["confidently_wrong"]["value"] == pytest.approx(1 / 5)
    assert strict["unparseable"]["value"] == pytest.approx(1 / 5)
    exact = report["lenses"]["exact"]
    assert exact["abs_rt_valid"]["value"] == pytest.approx(1 / 5)
    assert exact["confidently_wrong"]["count"] == 2
    # abs_rt_valid = coverage x of_emitted_rt, under every lens.
    for lens in report["lenses"].values():
        product = lens["coverage"]["value"] * lens["of_emitted_rt"]["value"]
        assert lens["abs_rt_valid"]["value"] == pytest.approx(product)
        low, high = lens["coverage"]["interval"]
        assert low < 0.8 < high
    assert report["pin_pct"] == 97.5, "carried verbatim"
    assert aggregate(rows)["pin_pct"] is None, "never derived"


def test_tally_folds_rows_one_at_a_time_to_hand_checked_counts() -> None:
    rows = [
        classify_row("CCO", "ethanol", fake),  # V V V
        classify_row(L_ALANINE, "D-alanine", fake),  # V V W
        classify_row("CC(=O)O", "acetate", fake),  # V W W
        classify_row("CCO", "methanol", fake),  # W W W
        classify_row("CCO", "gibberish", fake),  # U U U
        classify_row("CCO", "", fake),  # A A A
        classify_row("*CC", "ethyl", lambda n: "*CC"),  # no key: unscorable under every lens
    ]
    rows = [
        RowResult(r.smiles, r.name, r.emitted, r.opsin_parsed, r.opsin_smiles,
                  {k: v for k, v in r.classes.items() if k in OURS}, r.reasons)
        for r in rows
    ]  # fmt: skip
    tally = CoverageTally(OURS)
    for row in rows:
        tally.add(row)
    report = tally.result(pin_pct=90.0)
    assert (report["total"], report["emitted"], report["abstained"]) == (7, 6, 1)
    assert (report["opsin_parsed"], report["unparseable"], report["pin_pct"]) == (5, 1, 90.0)
    counts = {lens: block["counts"] for lens, block in report["lenses"].items()}
    assert counts == {
        "parity": {"abstained": 1, "rt_valid": 3, "confidently_wrong": 1, "unparseable": 1,
                   "unscorable": 1, "opsin_error": 0},
        "strict": {"abstained": 1, "rt_valid": 2, "confidently_wrong": 2, "unparseable": 1,
                   "unscorable": 1, "opsin_error": 0},
        "exact": {"abstained": 1, "rt_valid": 1, "confidently_wrong": 3, "unparseable": 1,
                  "unscorable": 1, "opsin_error": 0},
    }  # fmt: skip
    strict = report["lenses"]["strict"]
    assert strict["unscorable"] == 1 and strict["matcher"] == "strict_key"
    assert (strict["coverage"]["count"], strict["coverage"]["n"]) == (6, 7)
    # Wilson 95% by hand: 6/7 -> centre 0.7306 +- 0.2437; 2/6 -> centre 0.3984 +- 0.3016.
    assert strict["coverage"]["interval"] == pytest.approx([0.48687, 0.97432], abs=1e-5)
    assert (strict["of_emitted_rt"]["count"], strict["of_emitted_rt"]["n"]) == (2, 6)
    assert strict["of_emitted_rt"]["interval"] == pytest.approx([0.09677, 0.70001], abs=1e-5)
    assert strict["abs_rt_valid"]["value"] == pytest.approx(2 / 7)
    assert report["lenses"]["exact"]["confidently_wrong"]["value"] == pytest.approx(3 / 7)
    assert report["lenses"]["parity"]["abs_rt_valid"]["value"] == pytest.approx(3 / 7)
    # The list wrapper is the same fold; reading the result twice changes nothing.
    assert aggregate(rows, pin_pct=90.0, lenses=OURS) == report == tally.result(pin_pct=90.0)
    empty = CoverageTally(lenses=("exact",)).result()
    assert list(empty["lenses"]) == ["exact"] and empty["total"] == 0


def test_unparseable_is_never_wrong_and_empty_set_has_no_rates() -> None:
    report = aggregate([classify_row("CCO", "gibberish", fake)])
    for lens in report["lenses"].values():
        assert lens["confidently_wrong"]["count"] == 0
        assert lens["unparseable"]["count"] == 1
    empty = aggregate([])
    assert empty["lenses"]["parity"]["coverage"]["value"] is None


def test_input_without_a_key_is_unscorable_not_wrong() -> None:
    # A dummy atom has no standard InChI: no lens of ours judges it, all alike.
    row = classify_row("*CC", "ethyl", lambda n: "*CC", lenses=OURS)
    assert set(row.classes.values()) == {RowClass.UNSCORABLE}
    assert row.reasons == dict.fromkeys(OURS, "input_has_no_key")


def test_score_pairs_batches_distinct_names_and_keeps_order() -> None:
    batches: list[list[str]] = []

    def resolve(names: list[str]) -> list[ReadBack]:
        batches.append(list(names))
        return [ReadBack(fake(n), "success" if fake(n) else "failure") for n in names]

    pairs = [
        NamePair("1", 1, "CCO", "ethanol"),
        NamePair("2", 2, "OCC", "ethanol"),
        NamePair("3", 3, "CCO", ""),
        NamePair("4", 4, "CCO", "gibberish"),
    ]
    rows = score_pairs(pairs, resolve, CoverageConfig())  # type: ignore[arg-type]
    assert batches == [["ethanol", "gibberish"]]
    assert [r["id"] for r in rows] == ["1", "2", "3", "4"]
    assert [r["strict"] for r in rows] == ["rt_valid", "rt_valid", "abstained", "unparseable"]
    assert rows[3]["opsin_status"] == "failure"


def test_score_pairs_keeps_opsin_errors_apart_from_unparseable() -> None:
    answers = {
        "ethanol": ReadBack("OCC", "success"),
        "gibberish": ReadBack(None, "failure", "unparsable"),
        "slow": ReadBack(None, "timeout", "no answer within 0.001 s"),
        "crash": ReadBack(None, "crashed", "OPSIN process exited with code 137"),
        "bad\tname": ReadBack(None, "refused", "name contains a tab"),  # never sent
        "raised": ReadBack(None, "exception", "java.lang.StackOverflowError"),
        "skipped": ReadBack(None, "skipped", "not sent"),
    }
    pairs = [NamePair(str(i), i, "CCO", n) for i, n in enumerate(answers, start=1)]
    rows = score_pairs(pairs, lambda names: [answers[n] for n in names], CoverageConfig())
    assert [r["strict"] for r in rows] == [
        "rt_valid",
        "unparseable",
        *["opsin_error"] * 2,
        "unparseable",  # the name itself is refused: the namer's failure
        *["opsin_error"] * 2,
    ]
    assert rows[4]["unparseable_reason"] == "control_character"
    assert rows[2]["opsin_status"] == "timeout" and rows[2]["opsin_error"]
    assert all(r["unscorable_reasons"] == {} for r in rows)


def test_every_opsin_status_is_a_parse_outcome_or_an_opsin_error() -> None:
    from chemgauge.families.names.engine.process import OpsinStatus
    from chemgauge.families.names.runner import OPSIN_ERROR_STATUSES

    outcomes = {"success", "warning", "failure", "refused"}
    assert {s.value for s in OpsinStatus} == outcomes | OPSIN_ERROR_STATUSES
    assert not outcomes & OPSIN_ERROR_STATUSES


def test_matching_runs_the_tautomer_search_only_where_cheaper_keys_disagree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chemgauge.chem import parity

    searched: list[str] = []
    real = parity.tautomer_key

    def counting(neutral: str, *args: object) -> object:
        searched.append(neutral)
        return real(neutral, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(parity, "tautomer_key", counting)
    metrics_module.clear_structure_memo()
    pairs = [
        NamePair("1", 1, "CC[C@H](C)Cl", "(2R)-2-chlorobutane"),  # strict decides
        NamePair("2", 2, "CC(=O)O", "acetate"),  # one neutral parent
        NamePair("3", 3, "CCO", "methanol"),  # another skeleton
        NamePair("4", 4, "CC(C)=O", "propen-2-ol"),  # keto/enol: the search decides
    ]
    rows = score_pairs(
        pairs, lambda ns: [ReadBack(fake(n), "success") for n in ns], CoverageConfig()
    )
    assert [r["parity"] for r in rows] == ["rt_valid", "rt_valid", "confidently_wrong", "rt_valid"]
    assert sorted(searched) == ["C=C(C)O", "CC(C)=O"]


def test_a_structure_is_keyed_once_whatever_its_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemgauge.chem import parity

    calls: list[object] = []
    real = parity.inchi_key_of

    def counting(mol: object) -> str | None:
        calls.append(mol)
        return real(mol)  # type: ignore[arg-type]

    monkeypatch.setattr(parity, "inchi_key_of", counting)
    metrics_module.clear_structure_memo()
    first = classify_parsed("CCO", "OCC", OURS)
    again = classify_parsed("C(O)C", "[CH3][CH2][OH]", OURS)
    assert first == again == ({"parity": V, "strict": V, "exact": V}, {})
    assert len(calls) == 1


def test_a_classified_row_keeps_its_structure_and_name_whatever_the_outcome() -> None:
    for name in ("ethanol", "methanol", "gibberish", "timed out", "", None):
        row = classify_row("CCO", name, fake)
        assert (row.smiles, row.name) == ("CCO", name)
    assert classify_row("CCO", "ethanol", fake).opsin_smiles == "OCC"  # OPSIN's spelling


def test_a_lens_subset_is_judged_alone() -> None:
    assert classify_parsed(L_ALANINE, "N[C@H](C)C(=O)O", ("exact",)) == ({"exact": W}, {})
    assert classify_parsed("*CC", "*CC", ("strict",)) == (
        {"strict": RowClass.UNSCORABLE},
        {"strict": "input_has_no_key"},
    )
    for name, outcome in [("D-alanine", V), ("", A), ("gibberish", U)]:
        row = classify_row(L_ALANINE, name, fake, lenses=("parity",))
        assert dict(row.classes) == {"parity": outcome}
    error = classify_row(L_ALANINE, "timed out", fake, lenses=("strict", "exact"))
    assert dict(error.classes) == dict.fromkeys(("strict", "exact"), RowClass.OPSIN_ERROR)


def test_a_rows_file_row_reads_back_as_the_result_it_records() -> None:
    # score_pairs writes the rows file; from_row reads it; classify_row is the same contract
    # judged one pair at a time. The three must agree, reasons included.
    pairs = [
        NamePair("1", 1, "CCO", "ethanol"),  # valid
        NamePair("2", 2, L_ALANINE, "D-alanine"),  # exact-wrong only
        NamePair("3", 3, "CCO", ""),  # abstained
        NamePair("4", 4, "CCO", "gibberish"),  # unparseable
        NamePair("5", 5, "*CC", "ethyl"),  # unscorable under the key lenses, with reasons
    ]
    rows = score_pairs(
        pairs, lambda ns: [ReadBack(fake(n), "success" if fake(n) else "failure") for n in ns],
        CoverageConfig(),
    )  # fmt: skip
    lenses = OURS  # a run's default: the reference lenses only with --reference-lenses
    for pair, row in zip(pairs, rows, strict=True):
        result = RowResult.from_row(row, lenses)
        assert result == classify_row(pair.smiles, pair.name, fake)
        assert (result.parity, result.strict) == (
            result.classes["parity"],
            result.classes["strict"],
        )
    ethyl = RowResult.from_row(rows[4], lenses)
    assert ethyl.reasons == dict.fromkeys(OURS, "input_has_no_key")
    assert ethyl.opsin_smiles == "*CC" and ethyl.opsin_parsed is True
    alanine = RowResult.from_row(rows[1], ("exact",))
    assert dict(alanine.classes) == {"exact": W}


def test_tally_counts_every_repeat_of_an_opsin_error_and_of_a_reason() -> None:
    every = tuple(LENSES)
    rows = [
        classify_row("CCO", "timed out", fake, lenses=every),
        classify_row("CCC", "timed out", fake, lenses=every),
        classify_row("*CC", "ethyl", fake, lenses=every),  # no key: unscorable under ours
        classify_row("*C", "methyl", lambda n: "*C", lenses=every),
        classify_row("CCO", "ethanol", fake, lenses=every),
    ]
    report = aggregate(rows, lenses=every)
    assert (report["total"], report["opsin_error"]) == (5, 2)
    for lens in OURS:
        block = report["lenses"][lens]
        assert block["unscorable"] == 2
        assert block["unscorable_reasons"] == {"input_has_no_key": 2}
        assert (block["abs_rt_valid"]["count"], block["abs_rt_valid"]["n"]) == (1, 5)
    assert report["lenses"]["reference_strict"]["counts"]["confidently_wrong"] == 2


def test_a_spelling_met_again_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemgauge.chem import parity

    parses: list[str] = []
    real = parity.try_parse_smiles

    def counting(smiles: str) -> object:
        parses.append(smiles)
        return real(smiles)

    monkeypatch.setattr(parity, "try_parse_smiles", counting)
    metrics_module.clear_structure_memo()
    first = keyed("CCO")
    assert keyed("CCO") is first and keyed("OCC") is first  # one structure, two spellings
    assert keyed("OCC") is first
    assert parses == ["CCO", "OCC"]  # each spelling parsed once
    garbled = keyed("C1CC")
    assert keyed("C1CC") is garbled and parses.count("C1CC") == 1


def test_the_structure_memo_is_cleared_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_module, "_MEMO_LIMIT", 2)
    metrics_module.clear_structure_memo()
    keyed("CCO")
    keyed("OCC")  # a second spelling of the same structure: the memo is now full (2)
    assert set(metrics_module._memo) == {"CCO", "OCC"}
    ethane = keyed("CC")  # full: cleared before this one is added
    assert set(metrics_module._memo) == {"CC"}
    assert ethane.inchikey == "OTMSDBZUPAUEDD-UHFFFAOYSA-N"  # ethane's standard InChIKey
    metrics_module.clear_structure_memo()


def test_a_refused_name_is_unparseable_with_its_code_and_never_sent() -> None:
    # classify_row refuses as score_pairs does: the name itself is the namer's failure.
    sent: list[str] = []

    def recording(name: str) -> str | None:
        sent.append(name)
        return fake(name)

    for name, code in [("eth\tanol", "control_character"), ("eth\nanol", "line_break")]:
        row = classify_row("CCO", name, recording, lenses=("strict", "exact"))
        assert row == RowResult("CCO", name, True, False, None, {"strict": U, "exact": U}, {}, code)
    assert sent == []
    # every lens of the run, not only ours
    row = classify_row("CCO", "eth\u200banol", recording, lenses=tuple(LENSES))
    assert dict(row.classes) == dict.fromkeys(LENSES, U) and sent == []


def test_the_tally_counts_unparseable_names_by_reason_and_only_those() -> None:
    rows = [
        classify_row("CCO", "eth\tanol", fake),  # refused: control character
        classify_row("CCO", "eth\x07anol", fake),  # refused again, same code
        classify_row("CCO", "eth\nanol", fake),  # refused: line break
        classify_row("CCO", "gibberish", fake),  # OPSIN cannot interpret it
        classify_row("CCO", "ethanol", fake),  # parsed: no reason
        classify_row("CCO", "timed out", fake),  # OPSIN's failure: no reason
        classify_row("CCO", "", fake),  # abstained: no reason
    ]
    report = aggregate(rows)
    assert report["unparseable_by_reason"] == {
        "control_character": 2,
        "line_break": 1,
        "opsin_cannot_interpret": 1,
    }
    assert (report["unparseable"], report["opsin_error"], report["abstained"]) == (4, 1, 1)
    # a row read back from an older rows file without the reason counts as not interpretable
    old = RowResult("CCO", "gibberish", True, False, None, dict.fromkeys(OURS, U), {})
    tally = CoverageTally(OURS)
    tally.add(old)
    assert tally.result()["unparseable_by_reason"] == {"opsin_cannot_interpret": 1}


@pytest.mark.parametrize(
    ("errors", "emitted", "limit", "share", "complete"),
    [
        (1, 4, 0.25, 0.25, True),  # at the limit: still complete
        (2, 4, 0.25, 0.5, False),
        (0, 4, 0.0, 0.0, True),
        (1, 3, 0.3, 1 / 3, False),
        (0, 0, 0.0, 0.0, True),  # nothing emitted: no share, nothing to divide
    ],
)
def test_completeness_is_the_opsin_error_share_of_emitted_names(
    errors: int, emitted: int, limit: float, share: float, complete: bool
) -> None:
    assert metrics_module.completeness(errors, emitted, limit) == {
        "opsin_error_share": pytest.approx(share, abs=1e-15),
        "max_opsin_errors": limit,
        "complete": complete,
    }


def test_an_input_with_one_key_of_two_is_unscorable_under_every_lens_of_ours() -> None:
    # Fail closed and alike: a structure with an InChIKey and no strict key (or the other way
    # round) is not judged by any lens of ours, even the one whose key it has.
    ethanol = keyed("CCO")
    assert ethanol.inchikey is not None and ethanol.strict_key is not None
    for half in (
        KeyedStructure("CCO", ethanol.inchikey, None),
        KeyedStructure("CCO", None, ethanol.strict_key),
    ):
        classes, reasons = classify_keyed(half, ethanol, OURS)
        assert classes == dict.fromkeys(OURS, RowClass.UNSCORABLE)
        assert reasons == dict.fromkeys(OURS, "input_has_no_key")


def test_each_key_judge_alone_calls_an_input_without_its_key_unscorable() -> None:
    ethanol = keyed("CCO")
    keyless = KeyedStructure("*CC", None, None)
    for lens in ("strict", "exact"):
        judge = metrics_module._JUDGES[lens]
        assert judge(keyless, ethanol) == (RowClass.UNSCORABLE, "input_has_no_key")
        assert judge(ethanol, keyless) == (W, None)
        assert judge(ethanol, ethanol) == (V, None)


def test_a_lens_the_module_does_not_name_reports_itself_as_its_matcher() -> None:
    row = RowResult("CCO", "ethanol", True, True, "OCC", {"parity": V, "custom": W}, {})
    tally = CoverageTally(("parity", "custom"))
    tally.add(row)
    lenses = tally.result()["lenses"]
    assert lenses["parity"]["matcher"] == "parity"
    assert lenses["custom"]["matcher"] == "custom"
    assert lenses["custom"]["confidently_wrong"]["count"] == 1
