"""The three-metric coverage contract: pure classifiers and a streaming tally of their classes.

Nothing here runs Java or a namer: the round trip is an injected ``name_to_smiles`` callable,
so every branch is testable with a dict-backed fake. Every rate is over ``total`` (every
accepted pair; nothing leaves a denominator):

- coverage = emitted / total (an abstention is a configured failure marker or an empty name);
- of_emitted_rt = round-trip-valid / emitted;
- confidently_wrong = emitted, parsed by OPSIN, wrong structure, as a fraction of total;
- unparseable = emitted, and OPSIN could not interpret the name or the name itself was
  refused (a line break, a control or invisible character, over 100,000 characters:
  :mod:`~chemgauge.families.names.refusals`), as a fraction of total (never counted as
  wrong); the reason is kept;
- abs_rt_valid = coverage x of_emitted_rt = round-trip-valid / total.

``opsin_error`` (OPSIN timed out, crashed or answered out of protocol on a well-formed name)
is its own bucket inside ``total``: emitted, never credited, shown in every table; over the
``--max-opsin-errors`` share the run is incomplete. ``unscorable`` (the lens cannot judge
the pair, with a reason) is in the denominators and never credited.

Each rate is reported under three lenses side by side: ``parity`` (stereo, salts, charge
state, tautomers, resonance forms and isotopes forgiven; never stricter than strict),
``strict`` (InChIKey skeleton plus net charge, stereo-insensitive) and ``exact`` (full
InChIKey: stereo and isotopes count, so a stereo inversion, omission or addition is caught).
Every lens fails closed, and alike: a read-back without a key is never round-trip valid, and
an input structure without an InChI (a dummy atom) is ``unscorable`` under every lens.
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
from chemgauge.families.names.reference import reference_parity_match, reference_strict_match
from chemgauge.families.names.refusals import name_refusal

__all__ = [
    "DEFAULT_ABSTAIN_MARKERS",
    "LENSES",
    "NOT_INTERPRETABLE",
    "OWN_LENSES",
    "REFERENCE_LENSES",
    "CoverageTally",
    "RoundTripError",
    "RowClass",
    "RowResult",
    "aggregate",
    "classify_keyed",
    "classify_parsed",
    "classify_row",
    "clear_structure_memo",
    "completeness",
    "is_abstention",
    "keyed",
    "run_lenses",
]

# Lens name -> registered matcher; the seed's two lenses first, then ours, then the seed's
# reference module's two matchers as written (:mod:`~chemgauge.families.names.reference`).
LENSES: Mapping[str, str] = {
    "parity": "parity",
    "strict": "strict_key",
    "exact": "inchikey",
    "reference_parity": "orthonym_reference.parity",
    "reference_strict": "orthonym_reference.strict",
}
#: The lenses judged as the module is written (fail closed as a mismatch).
REFERENCE_LENSES = frozenset({"reference_parity", "reference_strict"})
#: The lenses a run computes by default. The reference lenses run RDKit's canonical tautomer
#: on every structure (nearly all of a run's CPU), so a run computes them only when asked
#: (``--reference-lenses``).
OWN_LENSES: tuple[str, ...] = tuple(lens for lens in LENSES if lens not in REFERENCE_LENSES)
DEFAULT_ABSTAIN_MARKERS: frozenset[str] = frozenset()
#: ``unparseable_reason`` of a name OPSIN read and could not interpret.
NOT_INTERPRETABLE = "opsin_cannot_interpret"

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
    # OPSIN failed on a well-formed name (timeout, crash, protocol error): in total, never
    # credited.
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
    unparseable_reason: str | None = None

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
            row.get("unparseable_reason"),
        )

    @property
    def parity(self) -> RowClass:
        """Class under the parity lens."""
        return self.classes["parity"]

    @property
    def strict(self) -> RowClass:
        """Class under the strict lens."""
        return self.classes["strict"]


def run_lenses(reference: bool) -> tuple[str, ...]:
    """The lenses a run computes: chemgauge's own, and with ``reference`` the module's two."""
    return tuple(LENSES) if reference else OWN_LENSES


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


def _as_written(matched: bool) -> Judgement:
    return (RowClass.RT_VALID if matched else RowClass.CONFIDENTLY_WRONG), None


_JUDGES: Mapping[str, Callable[[KeyedStructure, KeyedStructure], Judgement]] = {
    "parity": _parity,
    "strict": lambda e, p: _by_key(e.strict_key, p.strict_key),
    "exact": lambda e, p: _by_key(e.inchikey, p.inchikey),
    "reference_parity": lambda e, p: _as_written(reference_parity_match(e.smiles, p.smiles)),
    "reference_strict": lambda e, p: _as_written(reference_strict_match(e.smiles, p.smiles)),
}


def classify_keyed(
    expected: KeyedStructure, parsed: KeyedStructure, lenses: Iterable[str] = OWN_LENSES
) -> tuple[dict[str, RowClass], dict[str, str]]:
    """Classes of a read-back under each lens, and why a lens could not judge it."""
    classes: dict[str, RowClass] = {}
    reasons: dict[str, str] = {}
    no_key = expected.inchikey is None or expected.strict_key is None
    for lens in lenses:
        if no_key and lens not in REFERENCE_LENSES:
            # The input is outside what chemgauge's lenses can judge: unscorable under each
            # alike (the reference lenses, as written, call it a mismatch).
            classes[lens], reasons[lens] = RowClass.UNSCORABLE, "input_has_no_key"
            continue
        classes[lens], reason = _JUDGES[lens](expected, parsed)
        if reason is not None:
            reasons[lens] = reason
    return classes, reasons


def classify_parsed(
    smiles: str, opsin_smiles: str, lenses: Iterable[str] = OWN_LENSES
) -> tuple[dict[str, RowClass], dict[str, str]]:
    """Match an OPSIN read-back against the input under each lens (fail closed).

    The reference lenses judge the two spellings as given: the module's keys depend on the
    spelling (RDKit's canonical tautomer of a Kekulé form can differ from that of the
    aromatic one), so they never go through the memo, which merges spellings."""
    lens_names = tuple(lenses)
    own = tuple(lens for lens in lens_names if lens not in REFERENCE_LENSES)
    classes, reasons = classify_keyed(keyed(smiles), keyed(opsin_smiles), own)
    raw = KeyedStructure(smiles, None, None), KeyedStructure(opsin_smiles, None, None)
    for lens in lens_names:
        if lens in REFERENCE_LENSES:  # keyed once, from the spellings, never the memo's
            classes[lens] = _JUDGES[lens](*raw)[0]
    return {lens: classes[lens] for lens in lens_names}, reasons


def classify_row(
    smiles: str,
    name: str | None,
    name_to_smiles: NameToSmiles,
    *,
    markers: Iterable[str] = DEFAULT_ABSTAIN_MARKERS,
    lenses: Iterable[str] = OWN_LENSES,
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
    refusal = name_refusal(name)
    if refusal is not None:
        unparseable = dict.fromkeys(lens_names, RowClass.UNPARSEABLE)
        return RowResult(smiles, name, True, False, None, unparseable, {}, refusal.code)
    try:
        parsed = name_to_smiles(name)
    except RoundTripError:
        return RowResult(
            smiles, name, True, None, None, dict.fromkeys(lens_names, RowClass.OPSIN_ERROR)
        )
    if not parsed:
        unparseable = dict.fromkeys(lens_names, RowClass.UNPARSEABLE)
        return RowResult(smiles, name, True, False, None, unparseable, {}, NOT_INTERPRETABLE)
    classes, reasons = classify_parsed(smiles, parsed, lens_names)
    return RowResult(smiles, name, True, True, parsed, classes, reasons)


class CoverageTally:
    """Running counts behind the coverage report, folded in one row at a time.

    Holds a few integers per lens whatever the number of rows, so a report over a corpus of
    any size is built while its rows stream past (never from a held list).
    """

    def __init__(self, lenses: Iterable[str] = OWN_LENSES) -> None:
        self.lenses = tuple(lenses)
        self.total = 0
        self.emitted = 0
        self.parsed = 0
        self.opsin_errors = 0
        self.counts: dict[str, dict[RowClass, int]] = {
            lens: dict.fromkeys(RowClass, 0) for lens in self.lenses
        }
        self.reasons: dict[str, Counter[str]] = {lens: Counter() for lens in self.lenses}
        self.unparseable_reasons: Counter[str] = Counter()

    def add(self, row: RowResult) -> None:
        """Count one classified pair under every lens."""
        self.total += 1
        self.emitted += row.emitted
        self.parsed += bool(row.opsin_parsed)
        if row.emitted and row.opsin_parsed is None:
            self.opsin_errors += 1
        if row.emitted and row.opsin_parsed is False:
            self.unparseable_reasons[row.unparseable_reason or NOT_INTERPRETABLE] += 1
        for lens, counts in self.counts.items():
            counts[row.classes[lens]] += 1
            reason = row.reasons.get(lens)
            if reason is not None:
                self.reasons[lens][reason] += 1

    def result(self, pin_pct: float | None = None) -> dict[str, Any]:
        """The coverage report under each lens; ``pin_pct`` is carried verbatim, never derived.

        Every rate is over ``total`` (``of_emitted_rt`` over ``emitted``); each lens's
        ``counts`` add up to ``total``, ``opsin_error`` among them. Each rate has the one rate
        shape (count, n, value and a 95% Wilson interval, :func:`chemgauge.eval.metrics.rate`).
        """
        total, emitted = self.total, self.emitted
        by_lens: dict[str, Any] = {}
        for lens, counts in self.counts.items():
            valid = counts[RowClass.RT_VALID]
            by_lens[lens] = {
                "matcher": LENSES.get(lens, lens),
                "coverage": rate(emitted, total),
                "of_emitted_rt": rate(valid, emitted),
                "confidently_wrong": rate(counts[RowClass.CONFIDENTLY_WRONG], total),
                "unparseable": rate(counts[RowClass.UNPARSEABLE], total),
                "abs_rt_valid": rate(valid, total),
                "opsin_error": rate(counts[RowClass.OPSIN_ERROR], total),
                "unscorable": counts[RowClass.UNSCORABLE],
                "unscorable_reasons": dict(sorted(self.reasons[lens].items())),
                "counts": {c.value: counts[c] for c in RowClass},
            }
        return {
            "total": total,
            "opsin_error": self.opsin_errors,
            "emitted": emitted,
            "abstained": total - emitted,
            "opsin_parsed": self.parsed,
            "unparseable": emitted - self.parsed - self.opsin_errors,
            "unparseable_by_reason": dict(sorted(self.unparseable_reasons.items())),
            "lenses": by_lens,
            "pin_pct": pin_pct,
        }


def completeness(opsin_errors: int, emitted: int, max_share: float) -> dict[str, Any]:
    """Whether OPSIN failed on few enough names for the run to be complete: over
    ``max_share`` (``--max-opsin-errors``) of the emitted names, it is not."""
    share = opsin_errors / emitted if emitted else 0.0
    return {
        "opsin_error_share": share,
        "max_opsin_errors": max_share,
        "complete": share <= max_share,
    }


def aggregate(
    rows: Iterable[RowResult], pin_pct: float | None = None, lenses: Iterable[str] = OWN_LENSES
) -> dict[str, Any]:
    """The coverage report of ``rows`` (see :class:`CoverageTally`, which this folds them into)."""
    tally = CoverageTally(lenses)
    for row in rows:
        tally.add(row)
    return tally.result(pin_pct)
