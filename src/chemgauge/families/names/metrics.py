"""The three-metric coverage contract: pure classifiers and a streaming tally of their classes.

Nothing here runs Java or a namer: the round trip is an injected ``name_to_smiles`` callable,
so every branch is testable with a dict-backed fake. Rates, over the *rated* pairs (every
pair but those OPSIN itself failed on, see ``opsin_error`` below):

- coverage = emitted / rated (an abstention is a configured failure marker or an empty name);
- of_emitted_rt = round-trip-valid / emitted;
- confidently_wrong = emitted, parsed by OPSIN, wrong structure, as a fraction of rated;
- unparseable = emitted, OPSIN read it and could not interpret it, as a fraction of rated
  (never counted as wrong);
- abs_rt_valid = coverage x of_emitted_rt = round-trip-valid / rated.

``opsin_error`` (OPSIN timed out, crashed, refused the name or answered out of protocol) is
OPSIN's failure, not the namer's: counted and listed, but in no rate. ``unscorable`` (the lens
cannot judge the pair, with a reason) is in the denominators and never credited.

Each rate is reported under three lenses side by side: ``parity`` (stereo, salts, charge
state, tautomers, resonance forms and isotopes forgiven; never stricter than strict),
``strict`` (InChIKey skeleton plus net charge, stereo-insensitive) and ``exact`` (full
InChIKey: stereo and isotopes count, so a stereo inversion, omission or addition is caught).
Every lens fails closed: a read-back without a key is never round-trip valid.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.chem.parity import KeyedStructure, ParityVerdict, keyed_structure, parity_verdict
from chemgauge.errors import RoundTripError
from chemgauge.eval.metrics import rate

__all__ = [
    "DEFAULT_ABSTAIN_MARKERS",
    "LENSES",
    "CoverageTally",
    "RoundTripError",
    "RowClass",
    "RowResult",
    "aggregate",
    "classify_keyed",
    "classify_parsed",
    "classify_row",
    "clear_structure_memo",
    "is_abstention",
    "keyed",
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
    # The lens cannot judge the pair (the input has no key, a structure cannot be
    # standardized, a capped tautomer search): neither valid nor wrong; the reason is kept.
    UNSCORABLE = "unscorable"
    # OPSIN failed on the name (timeout, crash, refusal, protocol error): in no rate.
    OPSIN_ERROR = "opsin_error"


@dataclass(frozen=True, slots=True)
class RowResult:
    """One classified pair: the parse axis is lens-invariant, the match axis is per lens."""

    smiles: str
    name: str | None
    emitted: bool
    opsin_parsed: bool | None
    opsin_smiles: str | None
    classes: Mapping[str, RowClass] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)  # lens -> why unscorable

    @classmethod
    def from_row(cls, row: Mapping[str, Any], lenses: Iterable[str]) -> RowResult:
        """A rows-file row as a result."""
        return cls(
            row["smiles"],
            row["name"],
            row["emitted"],
            row["opsin_parsed"],
            row["opsin_smiles"],
            {lens: RowClass(row[lens]) for lens in lenses},
            row["unscorable_reasons"],
        )

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


# Structures keyed in this process (workers keep theirs across blocks), by spelling and by
# canonical SMILES: a structure met in several pairs, lenses or spellings is parsed, InChI'd
# and standardized once. Cleared when full.
_MEMO_LIMIT = 100_000
_memo: dict[str, KeyedStructure] = {}


def keyed(smiles: str) -> KeyedStructure:
    """The structure's keys under every lens, from this process's memo when known."""
    found = _memo.get(smiles)
    if found is None:
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        found = _memo[smiles] = keyed_structure(smiles, _memo)
    return found


def clear_structure_memo() -> None:
    """Forget every keyed structure (tests; memory is bounded without it)."""
    _memo.clear()


Judgement = tuple[RowClass, "str | None"]


def _by_key(expected: str | None, parsed: str | None) -> Judgement:
    if expected is None:
        return RowClass.UNSCORABLE, "input_has_no_key"
    # Fail closed: a read-back without a key (None) never equals an existing key.
    valid = parsed is not None and parsed == expected
    return (RowClass.RT_VALID if valid else RowClass.CONFIDENTLY_WRONG), None


def _parity(expected: KeyedStructure, parsed: KeyedStructure) -> Judgement:
    verdict = parity_verdict(expected, parsed)
    if verdict is ParityVerdict.SAME:
        return RowClass.RT_VALID, None
    if verdict is ParityVerdict.DIFFERENT:
        return RowClass.CONFIDENTLY_WRONG, None
    return RowClass.UNSCORABLE, verdict.value


_JUDGES: Mapping[str, Callable[[KeyedStructure, KeyedStructure], Judgement]] = {
    "parity": _parity,
    "strict": lambda e, p: _by_key(e.strict_key, p.strict_key),
    "exact": lambda e, p: _by_key(e.inchikey, p.inchikey),
}


def classify_keyed(
    expected: KeyedStructure, parsed: KeyedStructure, lenses: Iterable[str] = tuple(LENSES)
) -> tuple[dict[str, RowClass], dict[str, str]]:
    """Classes of a read-back under each lens, and why a lens could not judge it."""
    classes: dict[str, RowClass] = {}
    reasons: dict[str, str] = {}
    for lens in lenses:
        classes[lens], reason = _JUDGES[lens](expected, parsed)
        if reason is not None:
            reasons[lens] = reason
    return classes, reasons


def classify_parsed(
    smiles: str, opsin_smiles: str, lenses: Iterable[str] = tuple(LENSES)
) -> tuple[dict[str, RowClass], dict[str, str]]:
    """Match an OPSIN read-back against the input under each lens (fail closed)."""
    return classify_keyed(keyed(smiles), keyed(opsin_smiles), lenses)


def classify_row(
    smiles: str,
    name: str | None,
    name_to_smiles: NameToSmiles,
    *,
    markers: Iterable[str] = DEFAULT_ABSTAIN_MARKERS,
    lenses: Iterable[str] = tuple(LENSES),
) -> RowResult:
    """Classify one pair under every lens with at most one OPSIN call.

    ``name_to_smiles`` returns the read-back (``None`` when OPSIN cannot interpret the name)
    or raises :class:`RoundTripError` when the round trip itself failed.
    """
    lens_names = tuple(lenses)
    if is_abstention(name, markers):
        return RowResult(
            smiles, name, False, None, None, dict.fromkeys(lens_names, RowClass.ABSTAINED)
        )
    assert name is not None
    try:
        parsed = name_to_smiles(name)
    except RoundTripError:
        return RowResult(
            smiles, name, True, None, None, dict.fromkeys(lens_names, RowClass.OPSIN_ERROR)
        )
    if not parsed:
        return RowResult(
            smiles, name, True, False, None, dict.fromkeys(lens_names, RowClass.UNPARSEABLE)
        )
    classes, reasons = classify_parsed(smiles, parsed, lens_names)
    return RowResult(smiles, name, True, True, parsed, classes, reasons)


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
        self.opsin_errors = 0
        self.counts: dict[str, dict[RowClass, int]] = {
            lens: dict.fromkeys(RowClass, 0) for lens in self.lenses
        }
        self.reasons: dict[str, Counter[str]] = {lens: Counter() for lens in self.lenses}

    def add(self, row: RowResult) -> None:
        """Count one classified pair under every lens."""
        self.total += 1
        self.emitted += row.emitted
        self.parsed += bool(row.opsin_parsed)
        if row.emitted and row.opsin_parsed is None:
            self.opsin_errors += 1
        for lens, counts in self.counts.items():
            counts[row.classes[lens]] += 1
            reason = row.reasons.get(lens)
            if reason is not None:
                self.reasons[lens][reason] += 1

    def result(self, pin_pct: float | None = None) -> dict[str, Any]:
        """The coverage report under each lens; ``pin_pct`` is carried verbatim, never derived.

        Every rate leaves out the pairs OPSIN failed on (``opsin_error``); each lens's
        ``counts`` still add up to ``total``. Each rate has the one rate shape (count, n,
        value and a 95% Wilson interval, :func:`chemgauge.eval.metrics.rate`).
        """
        rated = self.total - self.opsin_errors
        emitted = self.emitted - self.opsin_errors  # names OPSIN answered for
        by_lens: dict[str, Any] = {}
        for lens, counts in self.counts.items():
            valid = counts[RowClass.RT_VALID]
            by_lens[lens] = {
                "matcher": LENSES[lens],
                "coverage": rate(emitted, rated),
                "of_emitted_rt": rate(valid, emitted),
                "confidently_wrong": rate(counts[RowClass.CONFIDENTLY_WRONG], rated),
                "unparseable": rate(counts[RowClass.UNPARSEABLE], rated),
                "abs_rt_valid": rate(valid, rated),
                "unscorable": counts[RowClass.UNSCORABLE],
                "unscorable_reasons": dict(sorted(self.reasons[lens].items())),
                "counts": {c.value: counts[c] for c in RowClass},
            }
        return {
            "total": self.total,
            "opsin_error": self.opsin_errors,
            "rated": rated,
            "emitted": self.emitted,
            "abstained": self.total - self.emitted,
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
