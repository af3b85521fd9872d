"""The report tally against numbers worked out by hand, and the list wrapper beside it."""

from __future__ import annotations

from typing import Any

import pytest

from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.report import ReportTally, aggregate
from chemgauge.families.ocsr.runner import TIMING_FIELDS

ETHANOL = "CCO"


def _row(
    case: str,
    repeat: int,
    status: str,
    smiles: str | None,
    *,
    exact: str | None = None,
    seconds: float | None = 1.0,
    errors: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A scored row as ``iter_scored`` writes it, reduced to the fields the report reads."""
    has_reference = exact is not None or case != "ethanol_11x5"
    present = smiles is not None
    return {
        "attempt_id": f"{case}#r{repeat}",
        "case_id": case,
        "repeat": repeat,
        "status": status,
        "has_reference": has_reference,
        "no_reference_reason": None if has_reference else "11x5 pixels",
        "recognition": None if seconds is None else {"elapsed_seconds": seconds, "message": ""},
        "candidate": (
            {"present": True, "accepted": smiles != "C1CC", "reason": "ring", "smiles": smiles}
            if present
            else {"present": False}
        ),
        "identity": None if exact is None else dict.fromkeys(("exact", "inchi"), exact),
        "graph_diff": None if errors is None else {"status": "ok", "category_counts": errors},
    }


ROWS = [
    _row("ethanol", 1, "completed", ETHANOL, exact="match", seconds=3.0, errors={}),
    _row("ethanol_11x5", 1, "clarification", None, seconds=0.5),
    _row(
        "propanol",
        1,
        "completed",
        "CCCO",
        exact="mismatch",
        seconds=2.0,
        errors={"extra_atom": 1, "extra_bond": 1},
    ),
    _row("ethanol", 2, "provisional", ETHANOL, exact="match", seconds=1.0, errors={}),
    _row("ethanol_11x5", 2, "failure", "C1CC", seconds=4.0),
    _row("propanol", 2, "not_run", None, exact="no_candidate", seconds=None),
]


def test_tally_matches_hand_counts() -> None:
    tally = ReportTally()
    for row in ROWS:
        tally.add(row)
    manifest = Manifest.model_construct(name="hand", cases=[None] * 3)
    report = tally.result(manifest, ("exact", "inchi"), {}, "digest")
    finite = report["finite_reference"]
    # Four attempts with a reference: ethanol x2, propanol x2 (one not run).
    assert (finite["planned"], finite["attempted"], finite["not_run"]) == (4, 3, 1)
    assert (finite["completed"], finite["provisional"]) == (2, 1)
    exact = finite["policies"]["exact"]
    assert (exact["completed_exact"], exact["provisional_exact"]) == (1, 1)
    # The one rate shape, at full precision: count, n, value, Wilson interval, method.
    over_planned = exact["completed_exact_over_planned"]
    assert {k: v for k, v in over_planned.items() if k != "interval"} == {
        "count": 1,
        "n": 4,
        "value": 0.25,
        "method": "wilson95",
    }
    assert over_planned["interval"] == pytest.approx([0.0455873, 0.6993582], abs=1e-7)
    assert over_planned["interval"][0] != round(over_planned["interval"][0], 6)
    assert exact["completed_exact_over_attempted"]["value"] == 1 / 3
    assert exact["completed_exact_over_attempted"]["method"] == "wilson95"
    assert report["no_reference"]["planned"] == 2
    assert [a["attempt_id"] for a in report["no_reference"]["attempts"]] == [
        "ethanol_11x5#r1",
        "ethanol_11x5#r2",
    ]
    assert report["validation"]["completed"] == {
        "attempts": 2,
        "with_graph": 2,
        "accepted": 2,
        "rejected_reasons": {},
    }
    assert report["localized_errors"]["attempts_with_category"]["extra_atom"] == 1
    assert report["localized_errors"]["diff_status"] == {"ok": 3}
    consistency = {c["case_id"]: c for c in report["consistency"]}
    # ethanol: completed then provisional, the same graph; the 11x5 image: two statuses, one
    # empty answer and one unreadable ring; propanol ran once (its repeat was not run).
    assert consistency["ethanol"] == {
        "case_id": "ethanol",
        "statuses": ["completed", "provisional"],
        "same_status": False,
        "distinct_graphs": [ETHANOL],
        "same_graph": True,
    }
    assert consistency["ethanol_11x5"]["same_graph"] is False
    assert "propanol" not in consistency
    # Timed attempts 3.0, 0.5, 2.0, 1.0, 4.0: sorted, the median is the middle one.
    assert report["timing"] == {
        "attempts_timed": 5,
        "median_seconds": 2.0,
        "min_seconds": 0.5,
        "max_seconds": 4.0,
        "total_seconds": 10.5,
    }


def test_aggregate_is_the_tally_over_a_list() -> None:
    manifest = Manifest.model_construct(name="hand", cases=[None] * 3)
    report = aggregate(manifest, ROWS, ("exact",), {"x": 1})
    assert report["reproducibility_sha256"] == reproducibility_sha256(ROWS, TIMING_FIELDS)
    assert report["all_attempts"]["statuses"]["not_run"] == 1
    assert report["provenance"] == {"x": 1}


def test_median_of_an_even_number_of_attempts_is_the_mean_of_the_middle_two() -> None:
    tally = ReportTally()
    for seconds, case in ((0.2184, "ethanol"), (0.2121, "propanol")):
        tally.add(_row(case, 1, "completed", ETHANOL, exact="match", seconds=seconds, errors={}))
    manifest = Manifest.model_construct(name="hand", cases=[None] * 2)
    timing = tally.result(manifest, ("exact",), {}, "digest")["timing"]
    # sorted 0.2121, 0.2184: the median is their mean, not the upper one
    assert timing["median_seconds"] == 0.21525
    assert (timing["min_seconds"], timing["max_seconds"]) == (0.2121, 0.2184)


def _abbreviated(case: str, repeat: int, status: str, candidate: list[str]) -> dict[str, Any]:
    row = _row(case, repeat, status, "CC", exact="mismatch", errors={})
    recalled = len(set(candidate) & {"Boc", "Ph"})
    row["abbreviations"] = {"reference": ["Boc", "Ph"], "candidate": candidate}
    row["abbreviations"]["recalled"] = recalled
    return row


def test_abbreviation_label_recall_per_reference_group() -> None:
    rows = [
        _abbreviated("boc", 1, "completed", ["Boc", "Ph"]),  # both labels kept
        _abbreviated("boc", 2, "completed", ["Boc"]),  # Ph expanded: label lost
        _abbreviated("boc", 3, "provisional", ["Boc", "Ph"]),  # a draft: counted apart
        {**_abbreviated("boc", 4, "not_run", []), "recognition": None},
        _row("ethanol", 1, "completed", ETHANOL, exact="match", errors={}),  # no groups
    ]
    tally = ReportTally()
    for row in rows:
        tally.add(row)
    manifest = Manifest.model_construct(name="hand", cases=[None] * 2)
    abbreviations = tally.result(manifest, ("exact",), {}, "digest")["abbreviations"]
    # 4 planned attempts x 2 groups; 3 attempted; completed attempts recalled 2 + 1 labels.
    assert abbreviations["planned_groups"] == 8 and abbreviations["attempted_groups"] == 6
    assert abbreviations["recalled"] == 3 and abbreviations["provisional_recalled"] == 2
    assert abbreviations["label_recall_over_planned"]["value"] == 0.375
    assert abbreviations["label_recall_over_attempted"]["value"] == 0.5
    assert abbreviations["by_label"] == {
        "Boc": {"planned": 4, "recalled": 2},
        "Ph": {"planned": 4, "recalled": 1},
    }


def test_repeat_reliability_exact_in_all_and_in_any() -> None:
    rows = [
        _row("ethanol", 1, "completed", ETHANOL, exact="match", errors={}),
        _row("ethanol", 2, "completed", ETHANOL, exact="match", errors={}),
        _row("ethanol", 3, "completed", ETHANOL, exact="match", errors={}),
        _row("propanol", 1, "completed", "CCCO", exact="match", errors={}),
        _row("propanol", 2, "provisional", "CCCO", exact="match", errors={}),  # not completed
        _row("propanol", 3, "completed", "CCC", exact="mismatch", errors={}),
        _row("butanol", 1, "completed", "CC", exact="mismatch", errors={}),
        _row("butanol", 2, "failure", None, exact="no_candidate", errors={}),
        _row("butanol", 3, "not_run", None, exact="no_candidate", seconds=None),
        _row("ethanol_11x5", 1, "completed", "CCO", seconds=0.5),  # no reference: not counted
    ]
    tally = ReportTally()
    for row in rows:
        tally.add(row)
    manifest = Manifest.model_construct(name="hand", cases=[None] * 4)
    repeats = tally.result(manifest, ("exact", "inchi"), {}, "digest")["repeats"]
    assert (repeats["repeats"], repeats["cases"]) == (3, 3)
    exact = repeats["policies"]["exact"]
    # ethanol exact in all three; propanol in one; butanol in none.
    assert (exact["exact_in_all"]["count"], exact["exact_in_any"]["count"]) == (1, 2)
    assert exact["exact_in_all"]["n"] == exact["exact_in_any"]["n"] == 3
