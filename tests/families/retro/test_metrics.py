"""Retro aggregates at their boundaries, on hand-checked rows (RDKit scores the outputs).

Every row is scored by :func:`score_target` from real SMILES: the amide CNC(C)=O made from
acetic acid and methylamine, with wrong but valid proposals (ethanol, acetyl chloride with
methylamine) and invalid ones (the unclosed ring C1CC). Intervals are checked against
``scipy.stats.binomtest(...).proportion_ci(method="wilson")``, an outside reference.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy.stats import binomtest

from chemgauge.eval.metrics import Estimate, Rate, RateAtK
from chemgauge.families.retro.metrics import RankTally, RetroTally, aggregate, top_k_block
from chemgauge.families.retro.roundtrip import ROUND_TRIP_DEFINITION
from chemgauge.families.retro.scoring import ScoreSettings, ScoreTask, score_target

TRUTH = "CN.CC(=O)O"  # the true reactant set of CNC(C)=O, in another spelling
WRONG = ("CCO", "CC(=O)Cl.CN", "CC(=O)OC.CN", "CC=O.CN", "CCN", "CC(N)=O", "CNC")
INVALID = "C1CC"  # unclosed ring: RDKit refuses it
SETTINGS = ScoreSettings(matchers=("exact",), conventions=("syntheseus", "raw_slots"))


def _target(line: int, cls: str | None = None, reactants: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "target": f"test:{line}",
        "line": line,
        "source_id": None,
        "product": "CNC(C)=O",
        "reactants": list(reactants or ("CC(=O)O", "CN")),
        "reaction_class": cls,
    }


def _row(
    outputs: list[str],
    cls: str | None = None,
    *,
    returned: int | None = None,
    settings: ScoreSettings = SETTINGS,
    reactants: tuple[str, ...] = (),
) -> dict[str, Any]:
    n = len(outputs) if returned is None else returned
    task = ScoreTask(_target(2, cls, reactants), tuple(outputs), n)
    return score_target(task, settings)


def _truth_at(rank: int) -> dict[str, Any]:
    """A row whose true set is the output at 1-based ``rank``, after rank - 1 wrong ones."""
    return _row([*WRONG[: rank - 1], TRUTH])


def _metrics(rows: list[dict[str, Any]], ks: tuple[int, ...], max_k: int, **kw: Any) -> Any:
    return aggregate(
        rows, conventions=("syntheseus",), matchers=("exact",), ks=ks, max_k=max_k, **kw
    )


def _top(block: dict[str, Any], k: int) -> dict[str, Any]:
    """The top-k rate of a block for one k (found by its ``k`` field)."""
    (rate,) = [r for r in block["top_k"] if r["k"] == k]
    RateAtK.model_validate(rate)
    return rate


def _wilson(hits: int, n: int) -> tuple[float, float]:
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


# -- top-k at its boundary ------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_truth_at_rank_exactly_k_counts_for_top_k(k: int) -> None:
    row = _truth_at(k)
    assert row["hits"]["syntheseus"]["exact"] == k - 1  # 0-based: k - 1 wrong ones before it
    block = _metrics([row], ks=tuple(range(1, 7)), max_k=6)["accuracy"]["syntheseus"]["exact"]
    # a hit at 1-based rank k counts for top-k and every larger k, for no smaller k
    assert [_top(block, j)["count"] for j in range(1, 7)] == [int(j >= k) for j in range(1, 7)]
    assert _top(block, k)["value"] == 1.0
    assert block["curve"] == [float(j >= k) for j in range(1, 7)]
    assert block["misses"] == 0


@pytest.mark.parametrize("k", [1, 2, 4])
def test_truth_at_rank_k_plus_1_misses_top_k(k: int) -> None:
    # one target at 1-based rank k + 1, one at rank 1: top-k is 1 of 2, top-(k+1) is 2 of 2
    rows = [_truth_at(k + 1), _truth_at(1)]
    block = _metrics(rows, ks=(k, k + 1), max_k=k + 1)["accuracy"]["syntheseus"]["exact"]
    assert _top(block, k)["count"] == 1
    assert _top(block, k)["value"] == 0.5
    assert _top(block, k + 1)["count"] == 2
    assert block["curve"][k - 1 :] == [0.5, 1.0]


def test_a_rank_at_max_k_or_past_it_counts_in_no_top_k() -> None:
    # 0-based rank 3 is the 4th output: outside a curve that stops at k = 3
    block = top_k_block([3, 7], ks=(1, 3), max_k=3)
    assert _top(block, 3)["count"] == 0 and _top(block, 1)["count"] == 0
    assert block["curve"] == [0.0, 0.0, 0.0]
    assert block["n"] == 2 and block["misses"] == 0  # found, only too late


def test_the_curve_counts_each_hit_from_its_rank_on() -> None:
    # ranks 0, 1, 1, 3 and two misses over 6 targets: cumulative hits 1, 3, 3, 4 at k = 1..4
    block = top_k_block([1, 0, None, 3, 1, None], ks=(1, 2, 3, 4), max_k=4)
    assert [_top(block, k)["count"] for k in (1, 2, 3, 4)] == [1, 3, 3, 4]
    assert block["curve"] == [1 / 6, 3 / 6, 3 / 6, 4 / 6]
    assert [r["k"] for r in block["top_k"]] == [1, 2, 3, 4]
    assert block["n"] == 6 and block["misses"] == 2


def test_a_k_past_the_curve_is_refused_not_reported_as_zero() -> None:
    # the curve stops at max_k: a top-3 of a block measured to k = 2 has no count at all
    # (the run's config refuses such a k first, with a message)
    with pytest.raises(IndexError):
        top_k_block([0, 2], ks=(3,), max_k=2)


# -- MRR at each boundary -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranks", "mrr"),
    [
        ([0], 1.0),  # first place: 1/1
        ([1], 0.5),  # second place: 1/2
        ([9], 0.1),  # last place of ten: 1/10
        ([None], 0.0),  # a miss contributes 0, and is in the denominator
        ([0, None], 0.5),
        ([0, 1, 9, None], (1 + 1 / 2 + 1 / 10 + 0) / 4),  # = 0.4
        ([2, 2, 2], 1 / 3),
    ],
)
def test_mrr_is_the_mean_reciprocal_rank_with_zero_for_a_miss(
    ranks: list[int | None], mrr: float
) -> None:
    block = top_k_block(ranks, ks=(1,), max_k=10)
    assert block["mrr"]["value"] == pytest.approx(mrr, rel=1e-15)
    # no interval is computed for it here (boards bootstrap one from the rows)
    assert Estimate.model_validate(block["mrr"]).interval == (None, None)
    assert block["mrr"]["n"] == len(ranks) and block["mrr"]["method"] == "none"


def test_mrr_of_rows_at_rank_k_and_k_plus_1() -> None:
    # truth at 1-based ranks 3 and 4, and a target with no true set among its outputs
    rows = [_truth_at(3), _truth_at(4), _row(list(WRONG[:3]))]
    block = _metrics(rows, ks=(3,), max_k=4)["accuracy"]["syntheseus"]["exact"]
    assert block["mrr"]["value"] == pytest.approx((1 / 3 + 1 / 4 + 0) / 3)  # = 7/36
    assert _top(block, 3)["count"] == 1


def test_no_targets_give_no_rates_rather_than_zero() -> None:
    block = top_k_block([], ks=(1, 2), max_k=2)
    assert block["n"] == 0 and block["mrr"]["value"] is None
    assert _top(block, 1) == {
        "count": 0,
        "n": 0,
        "value": None,
        "interval": [None, None],
        "method": "wilson95",
        "k": 1,
    }
    assert block["curve"] == [None, None]


def test_sequential_reciprocal_adds_in_arrival_order_like_syntheseus() -> None:
    # 1/5 + 1/2 + 1/6 + 1/9 = 44/45. Added left to right in floats (Python's + and
    # syntheseus's running sum) it rounds one ulp below the exactly rounded sum (fsum), so
    # the two are told apart: the tally keeps the former, the report's MRR the latter.
    ranks = [4, 1, None, 5, 8]
    tally = RankTally()
    for rank in ranks:
        tally.add(rank)
    in_order = 1 / 5 + 1 / 2 + 1 / 6 + 1 / 9
    exact = math.fsum([1 / 5, 1 / 2, 1 / 6, 1 / 9])
    assert in_order != exact and exact == pytest.approx(44 / 45, rel=1e-15)
    assert tally.sequential_reciprocal == in_order
    assert (tally.n, tally.misses) == (5, 1)
    assert tally.block((1,), 10)["mrr"]["value"] == exact / 5


# -- intervals against an outside reference ------------------------------------------------


@pytest.mark.parametrize(("hits", "n"), [(0, 4), (1, 3), (2, 3), (4, 4), (7, 20)])
def test_top_k_interval_is_the_wilson_interval_of_scipy(hits: int, n: int) -> None:
    ranks: list[int | None] = [0] * hits + [None] * (n - hits)
    entry = _top(top_k_block(ranks, ks=(1,), max_k=1), 1)
    low, high = _wilson(hits, n)
    assert entry["count"] == hits and entry["n"] == n and entry["value"] == hits / n
    assert entry["interval"] == pytest.approx([low, high], abs=1e-12)


# -- outputs, flags by rank, classes --------------------------------------------------------


def test_flags_by_rank_count_outputs_present_at_each_rank() -> None:
    rows = [
        # 5 outputs, max_k 3: invalid at 0-based 0 and 4, 'OCC' repeats 'CCO' at 3
        _row([INVALID, TRUTH, "CCO", "OCC", INVALID]),
        _row(["CCO", "OCC"]),  # 2 outputs: a repeat at 1
        _row([INVALID, "CCN"]),  # 2 outputs: invalid at 0
        _row(["CCO"]),  # 1 output
        _row([]),  # none: present at no rank
    ]
    m = _metrics(rows, ks=(1,), max_k=3)
    out = m["outputs"]
    assert out["total"] == 10
    assert (out["invalid_rate"]["count"], out["invalid_rate"]["n"]) == (3, 10)
    assert (out["duplicate_rate"]["count"], out["duplicate_rate"]["n"]) == (2, 10)
    assert out["invalid_rate"]["value"] == 3 / 10 and out["duplicate_rate"]["value"] == 2 / 10
    # outputs present at rank 1: rows 1-4 (4); rank 2: rows 1-3 (3); rank 3: row 1 (1).
    # Flags past rank 3 (0-based 3 and 4 of row 1) are in the totals, not in the table.
    assert _by_rank(out["invalid_by_rank"]) == [(1, 2, 4, 2 / 4), (2, 0, 3, 0.0), (3, 0, 1, 0.0)]
    assert _by_rank(out["duplicate_by_rank"]) == [
        (1, 0, 4, 0.0),
        (2, 1, 3, 1 / 3),
        (3, 0, 1, 0.0),
    ]
    # per-target raw counts 5, 2, 2, 1, 0; valid unique 2 (C1CC twice, OCC dropped), 1, 1,
    # 1, 0
    assert (out["per_target_raw"]["min"], out["per_target_raw"]["max"]) == (0, 5)
    assert (out["per_target_valid_unique"]["min"], out["per_target_valid_unique"]["max"]) == (0, 2)


def _by_rank(table: list[dict[str, Any]]) -> list[tuple[int, int, int, float | None]]:
    """(rank, flagged, outputs at that rank, share) per line of a flags-by-rank table."""
    out = []
    for line in table:
        share = Rate.model_validate(line["share"])
        out.append((line["rank"], share.count, share.n, share.value))
    return out


def test_a_rank_no_target_reaches_is_left_out_of_the_flag_table() -> None:
    m = _metrics([_row([INVALID]), _row([])], ks=(1,), max_k=3)
    assert _by_rank(m["outputs"]["invalid_by_rank"]) == [(1, 1, 1, 1.0)]
    assert _by_rank(m["outputs"]["duplicate_by_rank"]) == [(1, 0, 1, 0.0)]


def test_output_rates_are_none_when_no_target_has_outputs() -> None:
    out = _metrics([_row([]), _row([])], ks=(1,), max_k=2)["outputs"]
    assert out["total"] == 0 and out["cut_at_num_top_results"] == 0
    for key in ("invalid_rate", "duplicate_rate", "product_in_reactants_rate"):
        assert out[key]["n"] == 0 and out[key]["value"] is None
        assert out[key]["interval"] == [None, None]
    assert out["invalid_by_rank"] == [] and out["duplicate_by_rank"] == []
    assert out["invalid_by_reason"] == {}


def test_outputs_the_model_returned_past_the_cut_are_counted() -> None:
    # 5 returned, 3 kept (num_top_results = 3): 2 cut; 2 returned, 2 kept: none cut
    rows = [_row([TRUTH, "CCO", "CCN"], returned=5), _row([TRUTH, "CCO"], returned=2)]
    assert _metrics(rows, ks=(1,), max_k=3)["outputs"]["cut_at_num_top_results"] == 2


def test_invalid_outputs_add_up_by_reason() -> None:
    rows = [_row([INVALID, TRUTH]), _row([INVALID, "", "CCO"]), _row(["c1cccc1"])]
    out = _metrics(rows, ks=(1,), max_k=3)["outputs"]
    assert out["invalid_by_reason"] == {"empty": 1, "kekulization": 1, "syntax": 2}
    assert out["invalid_rate"]["count"] == 4


def test_outputs_and_truths_without_a_key_are_counted_per_matcher() -> None:
    # A dative bond has no InChI: under the inchikey matcher that output cannot be judged
    # (while exact, on canonical SMILES, can), and a truth with one matches nothing.
    settings = ScoreSettings(matchers=("exact", "inchikey"), conventions=("syntheseus",))
    rows = [
        _row(["CC(=O)[Cu]<-N.CN", TRUTH], settings=settings),
        _row(["CC(=O)[Cu]<-N.CN", "CCO"], settings=settings, reactants=("CC(=O)[Cu]<-N", "CN")),
        _row(["CCO"], settings=settings, reactants=("CC(=O)[Cu]<-N", "CN")),
    ]
    assert rows[0]["unsupported"] == {"exact": [], "inchikey": [0]}
    assert rows[1]["truth_unsupported"] == rows[2]["truth_unsupported"] == ["inchikey"]
    m = aggregate(
        rows, conventions=("syntheseus",), matchers=("exact", "inchikey"), ks=(1, 2), max_k=2
    )
    assert m["unsupported"] == [
        {"matcher": "exact", "outputs": 0, "targets_truth_unsupported": 0},
        {"matcher": "inchikey", "outputs": 2, "targets_truth_unsupported": 2},
    ]
    accuracy = m["accuracy"]["syntheseus"]
    assert _top(accuracy["exact"], 1)["count"] == 1  # the dative set is row 2's truth
    assert _top(accuracy["exact"], 2)["count"] == 2
    assert _top(accuracy["inchikey"], 2)["count"] == 1


def test_error_rows_add_no_outputs_but_stay_in_the_denominators() -> None:
    scored = _row([TRUTH, INVALID, "CCO"])
    error = {**_row(["CCO", "CCN"]), "status": "error", "hits": None}
    other = _row(["CCO"])
    tally = RetroTally(conventions=("syntheseus",), matchers=("exact",), ks=(1,), max_k=3)
    for row in (scored, error, other):
        tally.add(row)
    assert list(tally.raw_counts) == [3.0, 2.0, 1.0]
    assert list(tally.valid_unique_counts) == [2.0, 2.0, 1.0]
    assert list(tally.valid_counts) == [2.0, 0.0, 1.0]  # an error row holds no valid output
    m = tally.result()
    assert m["targets"] == 3 and m["status"] == {"error": 1, "ok": 2}
    assert m["outputs"]["total"] == 4  # the error row's two outputs were never scored
    assert _top(m["accuracy"]["syntheseus"]["exact"], 1)["count"] == 1
    assert m["accuracy"]["syntheseus"]["exact"]["n"] == 3


def test_classes_are_listed_in_natural_order_with_unclassed_targets_last() -> None:
    rows = [
        _row([TRUTH], "10"),
        _row(["CCO"], "2"),
        _row([TRUTH], None),
        _row(["CCO", TRUTH], "1"),
        _row(["CCO"], "10"),
    ]
    m = aggregate(
        rows, conventions=("syntheseus", "raw_slots"), matchers=("exact",), ks=(1, 2), max_k=2
    )
    by_class = m["by_class"]
    assert list(by_class) == ["1", "2", "10", "(none)"]
    ten = by_class["10"]["raw_slots"]["exact"]
    assert (ten["n"], _top(ten, 1)["count"], ten["misses"]) == (2, 1, 1)
    assert _top(by_class["1"]["syntheseus"]["exact"], 1)["count"] == 0
    assert _top(by_class["1"]["syntheseus"]["exact"], 2)["count"] == 1
    assert _top(by_class["(none)"]["syntheseus"]["exact"], 1)["count"] == 1
    assert by_class["2"]["syntheseus"]["exact"]["misses"] == 1
    assert "by_class" not in _metrics([_row([TRUTH])], ks=(1,), max_k=1)


def test_status_counts_are_sorted_by_status() -> None:
    rows = [{**_row(["CCO"]), "status": s, "hits": None} for s in ("timeout", "error")]
    m = _metrics([*rows, _row([TRUTH])], ks=(1,), max_k=1)
    assert list(m["status"].items()) == [("error", 1), ("ok", 1), ("timeout", 1)]


# -- round-trip coverage ---------------------------------------------------------------------


def _trip(first_rank: int | None, checked: int, ok: int, none: int) -> dict[str, Any]:
    trip = {"checked": checked, "round_trips": ok, "first_rank": first_rank, "no_candidates": none}
    return {**_row([TRUTH]), "round_trip": trip}


def test_round_trip_coverage_at_rank_exactly_k_and_k_plus_1() -> None:
    rows = [_trip(0, 3, 2, 0), _trip(1, 2, 1, 1), _trip(None, 2, 0, 2), _row([TRUTH])]
    m = _metrics(rows, ks=(1, 2, 3), max_k=3, round_trip_max_rank=2)
    block = m["round_trip"]
    assert block["definition"] == ROUND_TRIP_DEFINITION
    assert block["max_rank_checked"] == 2
    coverage = {r["k"]: RateAtK.model_validate(r) for r in block["round_trip_coverage"]}
    assert list(coverage) == [1, 2]  # k = 3 is past the ranks checked
    # first round trip at 0-based rank 1 counts for k = 2 only; every target is in n
    assert (coverage[1].count, coverage[1].n, coverage[1].value) == (1, 4, 1 / 4)
    assert (coverage[2].count, coverage[2].n, coverage[2].value) == (2, 4, 2 / 4)
    assert coverage[2].interval == pytest.approx(_wilson(2, 4))
    assert coverage[1].interval == pytest.approx(_wilson(1, 4))
    proposals = Rate.model_validate(block["round_trip_proposal_rate"])
    assert (proposals.count, proposals.n, proposals.value) == (3, 7, 3 / 7)
    assert proposals.interval == pytest.approx(_wilson(3, 7))
    assert block["proposals_without_forward_candidates"] == 3


def test_round_trip_tally_keeps_syntheseus_arithmetic() -> None:
    tally = RetroTally(
        conventions=("syntheseus",), matchers=("exact",), ks=(1,), max_k=1, round_trip_max_rank=3
    )
    for row in (_trip(2, 3, 1, 0), _trip(None, 3, 0, 0), _trip(0, 1, 1, 0), _trip(2, 3, 1, 0)):
        tally.add(row)
    assert dict(tally.rt_firsts) == {2: 2, 0: 1}
    assert tally.rt_sequential_reciprocal == 1 / 3 + 1.0 + 1 / 3
    assert (tally.rt_checked, tally.rt_ok, tally.rt_no_candidates) == (10, 3, 0)


def test_no_round_trip_block_without_a_round_trip_rank() -> None:
    assert "round_trip" not in _metrics([_trip(0, 1, 1, 0)], ks=(1,), max_k=1)
    m = _metrics([_row([TRUTH])], ks=(1,), max_k=1, round_trip_max_rank=1)
    proposals = m["round_trip"]["round_trip_proposal_rate"]
    assert proposals["n"] == 0 and proposals["value"] is None  # nothing checked
    assert m["round_trip"]["round_trip_coverage"][0]["count"] == 0
