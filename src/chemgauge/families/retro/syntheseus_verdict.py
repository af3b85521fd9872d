"""syntheseus's own verdict on one target, reproduced exactly, without its cost.

syntheseus ``eval-single-step`` parses each output component with RDKit's defaults and keeps
``MolToSmiles`` of it (atom maps included; a component RDKit rejects drops the output; an
empty component is an empty molecule), drops repeats of the same sorted component tuple when
``skip_repeats``, and compares each remaining output with the truth it read from the data
(:func:`syntheseus_truth`). Its stereo-relaxed view compares non-isomeric SMILES
(``remove_stereo_information``), on the same list.

Computing that key for every output would cost what syntheseus costs. It is not needed: for
a component without atom maps that chemgauge's screen accepts, syntheseus's key is RDKit's
first canonical pass, which is chemgauge's ``exact`` key unless that pass was not a fixed
point (:func:`~chemgauge.chem.smiles.needed_second_pass`, recorded as chemgauge computes the
key), and two outputs (or an output and the truth) with equal syntheseus keys have equal
chemgauge keys. So syntheseus keys are computed only for outputs chemgauge found correct or
repeated whose first pass moved, and for targets with an output whose text takes another
path (atom maps, or an invalidity syntheseus does not share: empty components, whitespace,
size limits), which are judged syntheseus's way throughout. Tests compare the verdicts with
syntheseus's own evaluator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rdkit import Chem

from chemgauge.chem.reactant_sets import ReactantSetComparison
from chemgauge.chem.smiles import any_second_pass as any_moved
from chemgauge.chem.smiles import needed_second_pass

__all__ = [
    "HARD_INVALIDITY",
    "SyntheseusVerdict",
    "judge",
    "syntheseus_key",
    "syntheseus_predictions",
    "syntheseus_truth",
]

#: chemgauge invalidity reasons RDKit's default parse shares: syntheseus drops those outputs.
HARD_INVALIDITY = frozenset({"syntax", "valence", "kekulization", "sanitization", "unwritable"})

_ATOM_MAP = re.compile(r":\d+\]")
_ISOTOPE = re.compile(r"\[\d")
_INVALID = ""  # never a syntheseus key of a component (an empty molecule's key is "")
_MEMO: dict[str, str | None] = {}
_FLAT: dict[str, str | None] = {}
_MAX_MEMO = 200_000


def _remember(memo: dict[str, str | None], text: str, value: str | None) -> str | None:
    if len(memo) >= _MAX_MEMO:
        memo.clear()
    memo[text] = value
    return value


def _mol(text: str) -> Chem.Mol | None:
    try:
        return Chem.MolFromSmiles(text)
    except Exception:  # syntheseus turns any parser failure into an invalid output
        return None


def syntheseus_key(text: str) -> str | None:
    """syntheseus's ``Molecule(text).smiles`` (``None`` where it raises)."""
    try:
        return _MEMO[text]
    except KeyError:
        pass
    mol = _mol(text)
    key: str | None = None
    if mol is not None:
        try:
            key = str(Chem.MolToSmiles(mol))
        except Exception:  # syntheseus: "Cannot canonicalize"
            key = None
    return _remember(_MEMO, text, key)


def _flat_key(text: str) -> str | None:
    """syntheseus's ``remove_stereo_information(Molecule(text)).smiles``."""
    try:
        return _FLAT[text]
    except KeyError:
        pass
    mol = _mol(text)
    key: str | None = None
    if mol is not None:
        try:
            flat = str(Chem.MolToSmiles(mol, isomericSmiles=False))
            key = syntheseus_key(flat)
        except Exception:
            key = None
    return _remember(_FLAT, text, key)


def syntheseus_truth(components: Sequence[str], *, mapped: bool) -> list[str] | None:
    """The true reactants as syntheseus reads them, sorted (``None`` if it cannot read them).

    ``mapped``: SMI and CSV lines (syntheseus removes atom maps, then canonicalizes again);
    JSONL entries are read as written, one molecule per entry even if it holds a '.'.
    """
    keys: list[str] = []
    for text in components:
        if mapped:
            mol = _mol(text)
            if mol is None:
                return None
            atom_at = mol.GetAtomWithIdx  # by index: RDKit's atom sequence costs more
            for index in range(mol.GetNumAtoms()):
                atom_at(index).ClearProp("molAtomMapNumber")
            try:
                text = str(Chem.MolToSmiles(mol))
            except Exception:
                return None
        key = syntheseus_key(text)
        if key is None:
            return None
        keys.append(key)
    return sorted(keys)


def _bag(output: str, flat: bool = False) -> tuple[str, ...] | None:
    keys = []
    for comp in output.split("."):
        key = _flat_key(comp) if flat else syntheseus_key(comp)
        if key is None:
            return None
        keys.append(key)
    return tuple(sorted(keys))


@dataclass(frozen=True, slots=True)
class SyntheseusVerdict:
    """Best ranks (0-based, ``None``: miss) and predictions counted as syntheseus would."""

    exact: int | None
    stereo: int | None
    num_predictions: int
    slow_path: bool
    single_pass_canonical: bool

    def to_dict(self, stereo: bool) -> dict[str, int | None]:
        out: dict[str, int | None] = {"exact": self.exact, "n": self.num_predictions}
        if stereo:
            out["stereo"] = self.stereo
        return out


def _ranks(valid: Sequence[bool], first: Sequence[int | None], skip: bool) -> list[int | None]:
    ranks: list[int | None] = []
    position = 0
    for rank, ok in enumerate(valid):
        if ok and (not skip or first[rank] == rank):
            ranks.append(position)
            position += 1
        else:
            ranks.append(None)
    return ranks


def _best(flags: Sequence[bool], ranks: Sequence[int | None]) -> int | None:
    return next((r for f, r in zip(flags, ranks, strict=True) if f and r is not None), None)


def _slow(
    truth: tuple[str, ...], outputs: Sequence[str], skip: bool, stereo: bool
) -> SyntheseusVerdict:
    """syntheseus's way on every output (rare targets: maps, empty components, whitespace)."""
    bags = [_bag(o) for o in outputs]
    valid = [b is not None for b in bags]
    seen: dict[tuple[str, ...], int] = {}
    first = [None if b is None else seen.setdefault(b, r) for r, b in enumerate(bags)]
    ranks = _ranks(valid, first, skip)
    exact = _best([b == truth for b in bags], ranks)
    best_flat = None
    if stereo:
        flat_truth = _flat_truth(truth)
        flags = [ok and flat_truth is not None and _bag(o, True) == flat_truth
                 for o, ok in zip(outputs, valid, strict=True)]  # fmt: skip
        best_flat = _best(flags, ranks)
    n = sum(r is not None for r in ranks)
    return SyntheseusVerdict(exact, best_flat, n, True, False)


def _moved(output: str) -> bool:
    """Some component's chemgauge key is not RDKit's first canonical pass."""
    return "@" in output and any(needed_second_pass(c) for c in output.split("."))


def _flat_truth(truth: tuple[str, ...]) -> tuple[str, ...] | None:
    keys = []
    for text in truth:
        key = _flat_key(text)
        if key is None:
            return None
        keys.append(key)
    return tuple(sorted(keys))


def judge(
    truth: Sequence[str] | None,
    chemgauge_truth: Sequence[str],
    outputs: Sequence[str],
    comparison: ReactantSetComparison,
    *,
    skip_repeats: bool,
    stereo: bool,
) -> SyntheseusVerdict | None:
    """syntheseus's verdict on one target (``None``: syntheseus could not read its line).

    ``comparison`` is chemgauge's (its ``exact`` and, with ``stereo``, ``stereo_ignored``
    verdicts are the candidates); ``truth`` is :func:`syntheseus_truth` of the line.
    """
    if truth is None:
        return None
    truth_t = tuple(truth)
    joined = "\n".join(outputs)
    if (
        not HARD_INVALIDITY.issuperset(comparison.invalid_reasons)
        or (":" in joined and _ATOM_MAP.search(joined))
        or (stereo and "[" in joined and _ISOTOPE.search(joined))
        or (stereo and any(_ISOTOPE.search(t) or _ATOM_MAP.search(t) for t in truth_t))
    ):
        # an output syntheseus reads another way (or one with atom maps): its way throughout
        return _slow(truth_t, outputs, skip_repeats, stereo)
    same_truth = truth_t == tuple(sorted(chemgauge_truth))
    # Repeats: only outputs in one chemgauge class can be syntheseus repeats of each other;
    # where a member's first canonical pass moved, syntheseus keys decide.
    first: Sequence[int | None] = comparison.first_seen
    moved = any_moved() and "@" in joined
    drift = False
    if moved:
        first = list(first)
        classes: dict[int, list[int]] = {}
        for rank, head in enumerate(first):
            if head is not None:
                classes.setdefault(head, []).append(rank)
        for members in classes.values():
            if len(members) > 1 and any(_moved(outputs[r]) for r in members):
                seen: dict[tuple[str, ...] | None, int] = {}
                for r in members:
                    first[r] = seen.setdefault(_bag(outputs[r]), r)
                drift = drift or len(seen) > 1
    ranks = _ranks(comparison.valid, first, skip_repeats)
    flags: Sequence[bool] = comparison.correct["exact"]
    if moved or not same_truth:
        checked = []
        for output, ok in zip(outputs, flags, strict=True):
            if ok and (not same_truth or _moved(output)):
                hit = _bag(output) == truth_t
                drift = drift or (same_truth and not hit)
                checked.append(hit)
            else:
                checked.append(ok)
        flags = checked
    best_flat = None
    if stereo:
        flat_truth = _flat_truth(truth_t)
        flat = comparison.correct["stereo_ignored"]
        best_flat = _best(
            [ok and flat_truth is not None and _bag(o, True) == flat_truth
             for o, ok in zip(outputs, flat, strict=True)],
            ranks,
        )  # fmt: skip
    n = sum(r is not None for r in ranks)
    return SyntheseusVerdict(_best(flags, ranks), best_flat, n, False, drift)


def syntheseus_predictions(
    outputs: Sequence[str], truth: Sequence[str] | None, product: str, *, skip_repeats: bool
) -> list[dict[str, Any]]:
    """One target's ``predictions`` entry as syntheseus's ``include_predictions`` writes it:
    each output it keeps (parsed, repeats dropped under ``skip_repeats``), as ``dictify``
    spells a reaction. Costs a full parse of every output (only when asked for)."""
    truth_t = None if truth is None else tuple(truth)
    product_key = syntheseus_key(product)
    kept: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    for output in outputs:
        bag = _bag(output)
        if bag is None or (skip_repeats and bag in seen):
            continue
        seen.add(bag)
        kept.append(
            {
                "reactants": [{"smiles": key} for key in bag],
                "products": [{"smiles": product_key}],
                "identifier": None,
                "metadata": {"ground_truth_match": bag == truth_t},
            }
        )
    return kept
