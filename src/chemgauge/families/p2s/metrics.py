"""The p2s metrics (accuracy per view, the use claim) folded in one row at a time.

:class:`MetricsTally` keeps, per view, counters and one candidate count per task (for the
chance rate), and per property what the use claim pairs: one position per record id of the
correct view with its answer, and a hit bit and a base position per shuffled and
counterfactual task. About 100 bytes a task, never the rows. ``aggregate`` over a list of
rows is the same tally, so there is one implementation of every number.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.eval.metrics import rate
from chemgauge.families.p2s.claim import claim_statistics
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.spec import CONDITIONS

__all__ = ["STATUSES", "MetricsTally", "aggregate"]

STATUSES = ("hit", "miss", "missing", "invalid", "out_of_range")
Row = Mapping[str, Any]
_ABSENT = 2  # a shuffled-hit slot whose record has no shuffled row (yet)


@dataclass
class _View:
    """One view's counters and candidate counts."""

    hits: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    candidates: array[int] = field(default_factory=lambda: array("I"))

    def add(self, row: Row) -> None:
        self.statuses[row["status"]] += 1
        self.hits += row["status"] == "hit"
        self.candidates.append(len(row["candidates"]))

    def result(self, confidence: float) -> dict[str, Any]:
        tasks = len(self.candidates)
        chance = sum(1 / k for k in self.candidates) / tasks if tasks else None
        return {
            "accuracy": rate(self.hits, tasks, confidence=confidence),
            "chance": chance,
            "statuses": {s: self.statuses[s] for s in STATUSES},
        }


def _index(value: Any) -> bool:
    """A candidate index the compact arrays can hold (rows a user edited may hold anything)."""
    return isinstance(value, int) and 0 <= value < 2**62


@dataclass
class _Claim:
    """What the use claim of one property pairs, by record id, as compact numbers.

    Joins follow the dict semantics of pairing held rows by id: the first row of an id fixes
    its position, the last one its answer, and a row may arrive before its partner.
    """

    positions: dict[str, int] = field(default_factory=dict)  # correct record id -> slot
    correct_hit: array[int] = field(default_factory=lambda: array("b"))
    correct_pick: array[int] = field(default_factory=lambda: array("q"))  # -1: picked nothing
    shuffled_hit: array[int] = field(default_factory=lambda: array("b"))  # _ABSENT: no row
    shuffled_early: dict[str, bool] = field(default_factory=dict)  # before their correct row
    flips: array[int] = field(default_factory=lambda: array("b"))
    cf_label: array[int] = field(default_factory=lambda: array("q"))  # -2: not an index
    cf_base: array[int] = field(default_factory=lambda: array("q"))  # slot, -1: see below
    cf_early: dict[int, str] = field(default_factory=dict)  # cf index -> base id not yet seen

    def _slot(self, record_id: str) -> int:
        slot = self.positions.get(record_id)
        if slot is None:
            slot = self.positions[record_id] = len(self.correct_hit)
            self.correct_hit.append(0)
            self.correct_pick.append(-1)
            self.shuffled_hit.append(_ABSENT)
        return slot

    def add(self, row: Row) -> None:
        condition, record_id = row["condition"], row["record_id"]
        if condition == "correct":
            slot = self._slot(record_id)
            self.correct_hit[slot] = row["status"] == "hit"
            answered = row["status"] in ("hit", "miss") and _index(row["selected"])
            self.correct_pick[slot] = row["selected"] if answered else -1
            if record_id in self.shuffled_early:
                self.shuffled_hit[slot] = self.shuffled_early.pop(record_id)
        elif condition == "shuffled":
            hit = row["status"] == "hit"
            if record_id in self.positions:
                self.shuffled_hit[self.positions[record_id]] = hit
            else:
                self.shuffled_early[record_id] = hit
        elif condition == "counterfactual":
            self.flips.append(row["status"] == "hit")
            self.cf_label.append(row["label"] if _index(row["label"]) else -2)
            base = self.positions.get(row["base_record_id"], -1)
            if base < 0:
                self.cf_early[len(self.cf_base)] = row["base_record_id"]
            self.cf_base.append(base)

    def result(self, config: ClaimConfig) -> dict[str, Any]:
        for index, base_id in self.cf_early.items():
            self.cf_base[index] = self.positions.get(base_id, -1)
        self.cf_early.clear()
        paired = [slot for slot in range(len(self.shuffled_hit)) if self.shuffled_hit[slot] < 2]
        base_picks = [
            base >= 0 and self.correct_pick[base] >= 0 and self.correct_pick[base] == label
            for base, label in zip(self.cf_base, self.cf_label, strict=True)
        ]
        return claim_statistics(
            [bool(self.correct_hit[slot]) for slot in paired],
            [bool(self.shuffled_hit[slot]) for slot in paired],
            [bool(flip) for flip in self.flips],
            base_picks,
            config,
        )


class MetricsTally:
    """Accuracy per property and view, and the use claim, folded in row by row (:meth:`add`)."""

    def __init__(self) -> None:
        self.views: dict[str, dict[str, _View]] = {}
        self.claims: dict[str, _Claim] = {}

    def add(self, row: Row) -> None:
        """Fold one row in."""
        directory = row["property"]
        views = self.views.setdefault(directory, {})
        views.setdefault(row["condition"], _View()).add(row)
        self.claims.setdefault(directory, _Claim()).add(row)

    def feed(self, rows: Iterable[Row]) -> Iterator[Row]:
        """Yield ``rows`` unchanged, folding each in on the way past."""
        for row in rows:
            self.add(row)
            yield row

    def result(self, config: ClaimConfig) -> dict[str, Any]:
        """The ``metrics`` block of the report."""
        properties: dict[str, Any] = {}
        for directory, views in self.views.items():
            ordered = {c: views[c] for c in CONDITIONS if c in views}
            complete = len(ordered) == len(CONDITIONS)
            properties[directory] = {
                "views": {c: v.result(config.confidence) for c, v in ordered.items()},
                "claim": self.claims[directory].result(config) if complete else None,
            }
        return {
            "rows": sum(
                view["accuracy"]["n"]
                for block in properties.values()
                for view in block["views"].values()
            ),
            "properties": properties,
        }


def aggregate(rows: Iterable[Row], config: ClaimConfig) -> dict[str, Any]:
    """Accuracy per property and view, and the use claim where all three views are present.

    A pure function of the rows (and the claim's alpha, confidence, seed and resamples), so
    ``verify`` recomputes it exactly.
    """
    tally = MetricsTally()
    for row in rows:
        tally.add(row)
    return tally.result(config)
