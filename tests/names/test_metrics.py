"""The coverage contract on hand-checked pairs, with a dict-backed fake OPSIN."""

from __future__ import annotations

import pytest

from chemgauge.benchmarks.names.inputs import NamePair
from chemgauge.benchmarks.names.metrics import (
    CoverageTally,
    RowClass,
    aggregate,
    classify_row,
    is_abstention,
)
from chemgauge.benchmarks.names.runner import CoverageConfig, ReadBack, score_pairs

L_ALANINE = "C[C@H](N)C(=O)O"
FAKE_OPSIN = {
    "ethanol": "OCC",
    "L-alanine": "N[C@@H](C)C(=O)O",
    "D-alanine": "N[C@H](C)C(=O)O",  # the stereo inversion both seed lenses forgive
    "acetate": "CC(=O)[O-]",  # dropped protonation: strict catches it, parity forgives
    "propen-2-ol": "CC(O)=C",  # enol: only parity forgives keto/enol
    "methanol": "CO",  # plain wrong structure
}


def fake(name: str) -> str | None:
    return FAKE_OPSIN.get(name)


def classes(smiles: str, name: str | None) -> tuple[RowClass, RowClass, RowClass]:
    row = classify_row(smiles, name, fake)
    return row.classes["parity"], row.classes["strict"], row.classes["exact"]


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
    assert strict["coverage"]["rate"] == pytest.approx(4 / 5)
    assert strict["of_emitted_rt"]["rate"] == pytest.approx(2 / 4)
    assert strict["abs_rt_valid"]["rate"] == pytest.approx(2 / 5)
    assert strict["confidently_wrong"]["rate"] == pytest.approx(1 / 5)
    assert strict["unparseable"]["rate"] == pytest.approx(1 / 5)
    exact = report["lenses"]["exact"]
    assert exact["abs_rt_valid"]["rate"] == pytest.approx(1 / 5)
    assert exact["confidently_wrong"]["count"] == 2
    # abs_rt_valid = coverage x of_emitted_rt, under every lens.
    for lens in report["lenses"].values():
        product = lens["coverage"]["rate"] * lens["of_emitted_rt"]["rate"]
        assert lens["abs_rt_valid"]["rate"] == pytest.approx(product)
        low, high = lens["coverage"]["ci95"]
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
        classify_row("*CC", "ethyl", lambda n: "*CC"),  # V, then no key under strict and exact
    ]
    tally = CoverageTally()
    for row in rows:
        tally.add(row)
    report = tally.result(pin_pct=90.0)
    assert (report["total"], report["emitted"], report["abstained"]) == (7, 6, 1)
    assert (report["opsin_parsed"], report["unparseable"], report["pin_pct"]) == (5, 1, 90.0)
    counts = {lens: block["counts"] for lens, block in report["lenses"].items()}
    assert counts == {
        "parity": {"abstained": 1, "rt_valid": 4, "confidently_wrong": 1, "unparseable": 1,
                   "unscorable": 0},
        "strict": {"abstained": 1, "rt_valid": 2, "confidently_wrong": 2, "unparseable": 1,
                   "unscorable": 1},
        "exact": {"abstained": 1, "rt_valid": 1, "confidently_wrong": 3, "unparseable": 1,
                  "unscorable": 1},
    }  # fmt: skip
    strict = report["lenses"]["strict"]
    assert strict["unscorable"] == 1 and strict["matcher"] == "strict_key"
    assert (strict["coverage"]["count"], strict["coverage"]["n"]) == (6, 7)
    # Wilson 95% by hand: 6/7 -> centre 0.7306 +- 0.2437; 2/6 -> centre 0.3984 +- 0.3016.
    assert strict["coverage"]["ci95"] == pytest.approx([0.48687, 0.97432], abs=1e-5)
    assert (strict["of_emitted_rt"]["count"], strict["of_emitted_rt"]["n"]) == (2, 6)
    assert strict["of_emitted_rt"]["ci95"] == pytest.approx([0.09677, 0.70001], abs=1e-5)
    assert strict["abs_rt_valid"]["rate"] == pytest.approx(2 / 7)
    assert report["lenses"]["exact"]["confidently_wrong"]["rate"] == pytest.approx(3 / 7)
    assert report["lenses"]["parity"]["abs_rt_valid"]["rate"] == pytest.approx(4 / 7)
    # The list wrapper is the same fold; reading the result twice changes nothing.
    assert aggregate(rows, pin_pct=90.0) == report == tally.result(pin_pct=90.0)
    empty = CoverageTally(lenses=("exact",)).result()
    assert list(empty["lenses"]) == ["exact"] and empty["total"] == 0


def test_unparseable_is_never_wrong_and_empty_set_has_no_rates() -> None:
    report = aggregate([classify_row("CCO", "gibberish", fake)])
    for lens in report["lenses"].values():
        assert lens["confidently_wrong"]["count"] == 0
        assert lens["unparseable"]["count"] == 1
    empty = aggregate([])
    assert empty["lenses"]["parity"]["coverage"]["rate"] is None


def test_input_without_a_key_is_unscorable_not_wrong() -> None:
    # A dummy atom has no standard InChI: the exact lens cannot judge it.
    row = classify_row("*CC", "ethyl", lambda n: "*CC")
    assert row.classes["exact"] == RowClass.UNSCORABLE
    assert row.classes["strict"] == RowClass.UNSCORABLE


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
