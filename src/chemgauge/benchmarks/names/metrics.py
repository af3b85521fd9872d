"""The three-metric coverage contract: pure classifiers and a streaming tally of their classes.

Nothing here runs Java or a namer: the round trip is an injected ``name_to_smiles`` callable,
so every branch is testable with a dict-backed fake. Rates:

- coverage = emitted / total (an abstention is a configured failure marker or an empty name);
- of_emitted_rt = round-trip-valid / emitted;
- confidently_wrong = emitted, parsed by OPSIN, wrong structure, as a fraction of total;
- unparseable = emitted, not parsed by OPSIN, as a fraction of total (never counted as wrong);
- abs_rt_valid = coverage x of_emitted_rt = round-trip-valid / total.

Each rate is reported under three lenses side by side: ``parity`` (charge, tautomer and
salt forgiving), ``strict`` (InChIKey skeleton plus net charge, stereo-insensitive) and
``exact`` (full InChIKey: stereo and isotopes count, so a stereo inversion is caught).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.chem import get_matcher
from chemgauge.eval.stats import wilson_interval

__all__ = [
    "DEFAULT_ABSTAIN_MARKERS",
    "LENSES",
    "CoverageTally",
    "RowClass",
    "RowResult",
    "aggregate",
    "classify_parsed",
    "classify_row",
    "is_abstention",
]

# Lens name -> registered matcher; the seed's two lenses first, then ours.
LENSES: Mapping[str, str] = {"parity": "parity", "strict": "strict_key", "exact": "inchikey"}
DEFAULT_ABSTAIN_MARKERS: frozenset[str] = frozenset()

NameToSmiles = Callable[[str], "str | None"]


class RowClass(enum.StrEnum):
    """Outcome of one (structure, name) pair under one lens."""

    ABSTAINED = "abstained"
    RT_VALID = "rt_valid"
    CONFIDENTLY_WRONG = "confidently_wrong"
    UNPARSEABLE = "unparseable"
    # The input itself has no key under this lens (for example no standard InChI):
    # the name cannot be judged, so it is neither valid nor wrong.
    UNSCORABLE = "unscorable"


@dataclass(frozen=True, slots=True)
class RowResult:
    """One classified pair: the parse axis is lens-invariant, the match axis is per lens."""

    smiles: str
    name: str | None
    emitted: bool
    opsin_parsed: bool | None
    opsin_smiles: str | None
    classes: Mapping[str, RowClass] = field(default_factory=dict)

    @property
    def parity(self) -> RowClass:
        """Class under the parity lens."""
        return self.classes["parity"]

    @property
    def strict(self) -> RowClass:
        """Class under the strict lens."""
        return self.classes["strict"]


def is_abstention(name: str | None, markers: Iterable[str] = DEFAULT_ABSTAIN_MARKERS) -> bool:
    """True for no name, a blank name, or one equal (after trimming) to a failure marker."""
    if name is None or not name.strip():
        return True
    return name.strip() in set(markers)


def classify_parsed(smiles: str, opsin_smiles: str, lens: str) -> RowClass:
    """Match an OPSIN read-back against the input under one lens (fail closed on OPSIN's side)."""
    matcher = get_matcher(LENSES[lens])
    expected = matcher.key(smiles)
    if expected is None:
        return RowClass.UNSCORABLE
    return (
        RowClass.RT_VALID if matcher.key(opsin_smiles) == expected else RowClass.CONFIDENTLY_WRONG
    )


def classify_row(
    smiles: str,
    name: str | None,
    name_to_smiles: NameToSmiles,
    *,
    markers: Iterable[str] = DEFAULT_ABSTAIN_MARKERS,
    lenses: Iterable[str] = tuple(LENSES),
) -> RowResult:
    """Classify one pair under every lens with at most one OPSIN call."""
    lens_names = tuple(lenses)
    if is_abstention(name, markers):
        return RowResult(
            smiles, name, False, None, None, dict.fromkeys(lens_names, RowClass.ABSTAINED)
        )
    assert name is not None
    parsed = name_to_smiles(name)
    if not parsed:
        return RowResult(
            smiles, name, True, False, None, dict.fromkeys(lens_names, RowClass.UNPARSEABLE)
        )
    classes = {lens: classify_parsed(smiles, parsed, lens) for lens in lens_names}
    return RowResult(smiles, name, True, True, parsed, classes)


def _rate(count: int, n: int) -> dict[str, Any]:
    interval = wilson_interval(count, n)
    return {
        "count": count,
        "n": n,
        "rate": interval.estimate,
        "ci95": [interval.low, interval.high],
    }


class CoverageTally:
    """Running counts behind the coverage report, folded in one row at a time.

    Holds a few integers per lens whatever the number of rows, so a report over a corpus of
    any size is built while its rows stream past (never from a held list).
    """

    def __init__(self, lenses: Iterable[str] = tuple(LENSES)) -> None:
        self.lenses = tuple(lenses)
        self.total = 0
        self.emitted = 0
        self.parsed = 0
        self.counts: dict[str, dict[RowClass, int]] = {
            lens: dict.fromkeys(RowClass, 0) for lens in self.lenses
        }

    def add(self, row: RowResult) -> None:
        """Count one classified pair under every lens."""
        self.total += 1
        self.emitted += row.emitted
        self.parsed += bool(row.opsin_parsed)
        for lens, counts in self.counts.items():
            counts[row.classes[lens]] += 1

    def result(self, pin_pct: float | None = None) -> dict[str, Any]:
        """The coverage report under each lens; ``pin_pct`` is carried verbatim, never derived."""
        total, emitted = self.total, self.emitted
        by_lens: dict[str, Any] = {}
        for lens, counts in self.counts.items():
            valid = counts[RowClass.RT_VALID]
            by_lens[lens] = {
                "matcher": LENSES[lens],
                "coverage": _rate(emitted, total),
                "of_emitted_rt": _rate(valid, emitted),
                "confidently_wrong": _rate(counts[RowClass.CONFIDENTLY_WRONG], total),
                "unparseable": _rate(counts[RowClass.UNPARSEABLE], total),
                "abs_rt_valid": _rate(valid, total),
                "unscorable": counts[RowClass.UNSCORABLE],
                "counts": {c.value: counts[c] for c in RowClass},
            }
        return {
            "total": total,
            "emitted": emitted,
            "abstained": total - emitted,
            "opsin_parsed": self.parsed,
            "unparseable": emitted - self.parsed,
            "lenses": by_lens,
            "pin_pct": pin_pct,
        }


def aggregate(
    rows: Iterable[RowResult], pin_pct: float | None = None, lenses: Iterable[str] = tuple(LENSES)
) -> dict[str, Any]:
    """The coverage report of ``rows`` (see :class:`CoverageTally`, which this folds them into)."""
    tally = CoverageTally(lenses)
    for row in rows:
        tally.add(row)
    return tally.result(pin_pct)
