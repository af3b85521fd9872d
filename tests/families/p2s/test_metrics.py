"""The metrics tally against numbers worked out by hand, in any row order."""

from __future__ import annotations

import random
from typing import Any

from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.metrics import MetricsTally, aggregate

PHENOLS = ["Oc1ccccc1", "Cc1ccccc1", "Nc1ccccc1"]  # a masked para position, three completions


def _row(
    condition: str, rid: str, label: int, selected: int | None, status: str, **extra: Any
) -> dict[str, Any]:
    return {
        "property": "dipole",
        "condition": condition,
        "record_id": rid,
        "masked_smiles": "c1ccc([*:1])cc1",
        "candidates": PHENOLS[: extra.pop("k", 3)],
        "label": label,
        "selected": selected,
        "status": status,
        "base_record_id": extra.get("base"),
        "source_label": extra.get("source"),
    }


ROWS = [
    # correct view: r1 and r2 right, r3 wrong (picked 2), r4 missing
    _row("correct", "r1", 0, 0, "hit"),
    _row("correct", "r2", 1, 1, "hit", k=2),
    _row("correct", "r3", 0, 2, "miss"),
    _row("correct", "r4", 2, None, "missing"),
    # shuffled view, same records: only r2 still right
    _row("shuffled", "r1", 0, 1, "miss"),
    _row("shuffled", "r2", 1, 1, "hit", k=2),
    _row("shuffled", "r3", 0, 1, "miss"),
    _row("shuffled", "r4", 2, 0, "miss"),
    # counterfactuals: the donor's property; c1 follows it, c2 does not, c3 is out of range
    _row("counterfactual", "c1", 2, 2, "hit", base="r3", source=0),
    _row("counterfactual", "c2", 1, 0, "miss", base="r1", source=0),
    _row("counterfactual", "c3", 1, None, "out_of_range", base="r4", source=2),
]


def test_views_and_claim_match_hand_counts() -> None:
    metrics = aggregate(ROWS, ClaimConfig(resamples=200))
    assert metrics["rows"] == 11
    block = metrics["properties"]["dipole"]
    correct = block["views"]["correct"]
    assert (correct["accuracy"]["n"], correct["accuracy"]["count"]) == (4, 2)
    assert correct["accuracy"]["value"] == 0.5 and correct["accuracy"]["method"] == "wilson95"
    assert correct["chance"] == (1 / 3 + 1 / 2 + 1 / 3 + 1 / 3) / 4
    assert correct["statuses"] == {
        "hit": 2,
        "miss": 1,
        "missing": 1,
        "invalid": 0,
        "out_of_range": 0,
    }
    assert block["views"]["counterfactual"]["statuses"]["out_of_range"] == 1
    claim = block["claim"]
    accuracy = claim["accuracy"]
    assert accuracy["correct"]["count"] == 2 and accuracy["shuffled"]["count"] == 1
    # r1 right only with its own property; no record right only when shuffled.
    assert claim["shuffle_drop"]["difference"]["value"] == 0.25
    flip = claim["counterfactual_flip"]
    # Donor picks: c1 (r3 had picked 2 = its donor: the base pick counts too), c2 no, c3 no.
    assert (flip["flip_rate"]["count"], flip["donor_pick_rate_under_correct"]["count"]) == (1, 1)
    assert flip["difference"]["value"] == 0.0


def test_any_row_order_gives_the_same_numbers() -> None:
    config = ClaimConfig(resamples=200)
    expected = aggregate(ROWS, config)
    # Views interleaved and counterfactuals before their base rows; within a view the order
    # is kept (it decides the bootstrap's pairing, as for held rows).
    by_view: dict[str, list[dict[str, Any]]] = {}
    for row in ROWS:
        by_view.setdefault(row["condition"], []).append(row)
    rng = random.Random(7)
    for _ in range(5):
        queues = [list(v) for v in by_view.values()]
        mixed = []
        while any(queues):
            queue = rng.choice([q for q in queues if q])
            mixed.append(queue.pop(0))
        tally = MetricsTally()
        for row in mixed:
            tally.add(row)
        assert tally.result(config) == expected


def test_a_repeated_record_keeps_its_first_place_and_last_answer() -> None:
    config = ClaimConfig(resamples=200)
    again = _row("correct", "r1", 0, 1, "miss")  # r1 answered a second time, wrongly
    metrics = aggregate([*ROWS, again], config)
    claim = metrics["properties"]["dipole"]["claim"]
    assert claim["accuracy"]["correct"]["count"] == 1  # r1 now counts as a miss in the pairs
    assert metrics["properties"]["dipole"]["views"]["correct"]["accuracy"]["n"] == 5


def test_partial_views_have_no_claim() -> None:
    metrics = aggregate([r for r in ROWS if r["condition"] != "shuffled"], ClaimConfig())
    assert metrics["properties"]["dipole"]["claim"] is None
