"""Answer-free strategies that pick a candidate without reading any property or label.

Each strategy sees only what a task file shows (record id, masked SMILES, candidate list, and
for counterfactual tasks the correct-view record they share a masked graph and candidates
with) and returns a candidate index per task, or ``None`` where it has nothing to say. Two
kinds, reported apart by :mod:`chemgauge.families.p2s.audit`:

* **leaks**: information that is not chemistry. The record id against hashes of each
  candidate under common schemes, or read as a number; chemgauge's own selection rule
  replayed on each candidate with the release's seed (when the build manifest gives it); a
  fixed position; the candidate that breaks an otherwise sorted order or sorts first or
  last; the candidate spelled differently from the others (not in canonical form, extra
  marks, longer or shorter than its canonical spelling, closest in text to the masked
  SMILES); the one candidate that is a molecule of a public set anyone has (the NCI set in
  the rdkit wheel, which the embedded release's scaffolds come from).
* **single-feature tells**: the odd one out by one structural feature of the completed group:
  the element bonded to the scaffold, the bond there (its two elements and order), the bond
  orders of the group's attachment atom, the heavy-atom count, the element set, ring
  membership. "Odd one out" picks the one candidate whose value no other candidate
  shares; it abstains when there is not exactly one.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from chemgauge.chem import try_canonical_smiles, try_parse_smiles
from chemgauge.chem.fragments import MASK_TOKEN, scaffold_query
from chemgauge.errors import SmilesError
from chemgauge.families.p2s.selection import SelectionConfig, replayed_record_id
from chemgauge.families.p2s.taskfile import Task

__all__ = ["STRATEGIES", "Strategy", "StrategyContext", "group_features", "odd_one_out"]

Picks = list[int | None]


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy may know besides the tasks: the directory, for counterfactual tasks
    the id of the correct-view record with the same masked graph and candidates, and the
    selection settings of the build (seed included) when the release publishes them."""

    directory: str
    base_ids: dict[str, str]
    selection: SelectionConfig | None = None


@dataclass(frozen=True)
class Strategy:
    """One answer-free way of picking a candidate."""

    name: str
    kind: str  # "leak" or "tell"
    description: str
    pick: Callable[[Sequence[Task], StrategyContext], Picks]


def odd_one_out(values: Sequence[Hashable]) -> int | None:
    """The index of the one value no other shares, when exactly one is unshared."""
    counts = Counter(values)
    unique = [i for i, v in enumerate(values) if counts[v] == 1]
    return unique[0] if len(unique) == 1 and len(values) > 2 else None


def _unique_extreme(values: Sequence[float], largest: bool) -> int | None:
    target = max(values) if largest else min(values)
    hits = [i for i, v in enumerate(values) if v == target]
    return hits[0] if len(hits) == 1 else None


# ---- leaks: the record id --------------------------------------------------------------

_ALGORITHMS = (hashlib.md5, hashlib.sha1, hashlib.sha256, hashlib.sha512, hashlib.blake2b)
_SEPARATORS = ("", "\x1f", "|", ":", ",", " ", "\t", "_", "-", "/", ";", "\n")
_HEX_RUN = re.compile(r"[0-9a-f]{8,}")


def _id_hex(record_id: str) -> str | None:
    runs = _HEX_RUN.findall(record_id.lower())
    return max(runs, key=len) if runs else None


def _texts(masked: str, candidate: str, directory: str, base: str | None) -> list[list[str]]:
    """Token lists a builder might hash to make an id from one candidate."""
    lists = [
        [candidate],
        [candidate, masked],
        [masked, candidate],
        ["record", candidate, masked],
        ["record", masked, candidate],
        [directory, candidate],
        [directory, masked, candidate],
    ]
    if base is not None:
        lists += [[base, candidate], [candidate, base], ["counterfactual", base, candidate]]
    return lists


@functools.lru_cache(maxsize=65536)
def _hash_matches(
    hex_id: str, masked: str, candidate: str, directory: str, base: str | None
) -> bool:
    """Whether some scheme hashes this candidate to the id (cached: views share tasks).
    Each distinct byte string is hashed once (a one-part text is the same under every
    separator)."""
    payloads = dict.fromkeys(
        sep.join(parts).encode("utf-8")
        for parts in _texts(masked, candidate, directory, base)
        for sep in _SEPARATORS
    )
    return any(
        hex_id in algorithm(data).hexdigest() for data in payloads for algorithm in _ALGORITHMS
    )


def _id_hash(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    picks: Picks = []
    for task in tasks:
        hex_id = _id_hex(task.record_id)
        if hex_id is None:
            picks.append(None)
            continue
        base = context.base_ids.get(task.record_id)
        matched = [
            i
            for i, c in enumerate(task.candidates)
            if _hash_matches(hex_id, task.masked_smiles, c, context.directory, base)
        ]
        picks.append(matched[0] if len(matched) == 1 else None)
    return picks


def _id_number(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    """The id's hex digits (or its last digit) as a number, modulo the candidate count."""
    picks: Picks = []
    for task in tasks:
        hex_id = _id_hex(task.record_id)
        digits = re.findall(r"\d+", task.record_id)
        if hex_id is not None:
            picks.append(int(hex_id, 16) % len(task.candidates))
        elif digits:
            picks.append(int(digits[-1]) % len(task.candidates))
        else:
            picks.append(None)
    return picks


def _selection_replay(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    """The one candidate that, taken as the source, chemgauge's rule turns into this task."""
    if context.selection is None:
        return [None] * len(tasks)
    picks: Picks = []
    for task in tasks:
        target = context.base_ids.get(task.record_id, task.record_id)
        config = dataclasses.replace(context.selection, candidates=len(task.candidates))
        matched = [
            i for i, c in enumerate(task.candidates) if replayed_record_id(c, config) == target
        ]
        picks.append(matched[0] if len(matched) == 1 else None)
    return picks


# ---- leaks: position and order ---------------------------------------------------------


def _position(index: int) -> Callable[[Sequence[Task], StrategyContext], Picks]:
    def pick(tasks: Sequence[Task], context: StrategyContext) -> Picks:
        return [index if index < len(t.candidates) else None for t in tasks]

    return pick


def _order_breaker(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    """The one candidate whose removal leaves the others sorted (when they are not)."""
    picks: Picks = []
    for task in tasks:
        cands = list(task.candidates)
        found = None
        if cands != sorted(cands) and cands != sorted(cands, reverse=True):
            fits = [
                i
                for i in range(len(cands))
                if (rest := cands[:i] + cands[i + 1 :]) in (sorted(rest), sorted(rest)[::-1])
            ]
            found = fits[0] if len(fits) == 1 else None
        picks.append(found)
    return picks


def _lexical(largest: bool) -> Callable[[Sequence[Task], StrategyContext], Picks]:
    def pick(tasks: Sequence[Task], context: StrategyContext) -> Picks:
        out: Picks = []
        for task in tasks:
            target = max(task.candidates) if largest else min(task.candidates)
            out.append(task.candidates.index(target))
        return out

    return pick


# ---- leaks: spelling -------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _canonical(smiles: str) -> str | None:
    return try_canonical_smiles(smiles)


def _spelling_marks(smiles: str) -> tuple[str, ...]:
    """How a spelling differs from its canonical form (empty when it is canonical)."""
    canonical = _canonical(smiles)
    if canonical is None:
        return ("unparsable",)
    marks = []
    if smiles != canonical:
        marks.append("non_canonical")
    if smiles != smiles.strip() or any(ch.isspace() for ch in smiles):
        marks.append("whitespace")
    if re.search(r":\d+\]", smiles):
        marks.append("atom_map")
    if any(ch in "cnops" for ch in canonical) and not any(ch in "cnops" for ch in smiles):
        marks.append("kekule")
    if smiles.count("[") != canonical.count("["):
        marks.append("brackets")
    if not smiles.isascii():
        marks.append("non_ascii")
    return tuple(marks)


def _by_value(
    value: Callable[[str], Hashable],
) -> Callable[[Sequence[Task], StrategyContext], Picks]:
    def pick(tasks: Sequence[Task], context: StrategyContext) -> Picks:
        return [odd_one_out([value(c) for c in t.candidates]) for t in tasks]

    return pick


def _extra_length(largest: bool) -> Callable[[Sequence[Task], StrategyContext], Picks]:
    """Longest (shortest) spelling relative to the molecule's canonical spelling."""

    def pick(tasks: Sequence[Task], context: StrategyContext) -> Picks:
        out: Picks = []
        for task in tasks:
            extra = [len(c) - len(_canonical(c) or c) for c in task.candidates]
            out.append(None if len(set(extra)) == 1 else _unique_extreme(extra, largest))
        return out

    return pick


def _closest_text(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    """The candidate whose text is most like the masked SMILES with the mask removed."""
    out: Picks = []
    for task in tasks:
        scaffold = task.masked_smiles.replace(MASK_TOKEN, "")
        ratios = [difflib.SequenceMatcher(None, scaffold, c).ratio() for c in task.candidates]
        out.append(_unique_extreme(ratios, largest=True))
    return out


@functools.lru_cache(maxsize=1)
def public_molecules() -> frozenset[str]:
    """Canonical SMILES of the NCI set in the rdkit wheel (a list every system can hold)."""
    from chemgauge.families.p2s.embedded import nci_molecules

    return frozenset(nci_molecules())


def _known_molecule(tasks: Sequence[Task], context: StrategyContext) -> Picks:
    """The one candidate that is a molecule of the public set, when exactly one is."""
    known = public_molecules()
    out: Picks = []
    for task in tasks:
        hits = [i for i, c in enumerate(task.candidates) if (_canonical(c) or c) in known]
        out.append(hits[0] if len(hits) == 1 else None)
    return out


# ---- single-feature tells ----------------------------------------------------------------


@dataclass(frozen=True)
class GroupFeatures:
    """Structural facts of the group a candidate puts where the mask was."""

    attachment_element: str
    attachment_bond: str
    attachment_atom_bonds: str
    heavy_atoms: int
    element_set: tuple[str, ...]
    ring_atoms: int


@functools.lru_cache(maxsize=65536)
def group_features(masked_smiles: str, candidate: str) -> GroupFeatures | None:
    """The completed group's features, or ``None`` if the candidate does not fit the mask."""
    mol = try_parse_smiles(candidate)
    try:
        query = scaffold_query(masked_smiles)
    except SmilesError:
        return None
    if mol is None:
        return None
    dummy = next(a.GetIdx() for a in query.GetAtoms() if a.GetAtomicNum() == 0)
    for match in mol.GetSubstructMatches(
        query, uniquify=False, useChirality=False, maxMatches=10000
    ):
        head = match[dummy]
        held = {m for i, m in enumerate(match) if i != dummy}
        group, todo = {head}, [head]
        while todo:
            for nb in mol.GetAtomWithIdx(todo.pop()).GetNeighbors():
                if nb.GetIdx() not in held and nb.GetIdx() not in group:
                    group.add(nb.GetIdx())
                    todo.append(nb.GetIdx())
        if len(group) + len(held) != mol.GetNumAtoms():
            continue
        atom = mol.GetAtomWithIdx(head)
        anchor = match[query.GetAtomWithIdx(dummy).GetNeighbors()[0].GetIdx()]
        cut = mol.GetBondBetweenAtoms(anchor, head)
        inner = sorted(
            str(b.GetBondType()) for b in atom.GetBonds() if b.GetOtherAtomIdx(head) in group
        )
        symbol = mol.GetAtomWithIdx(anchor).GetSymbol()
        return GroupFeatures(
            attachment_element=atom.GetSymbol(),
            attachment_bond=f"{symbol}-{cut.GetBondType()}-{atom.GetSymbol()}",
            attachment_atom_bonds=",".join(inner),
            heavy_atoms=sum(1 for i in group if mol.GetAtomWithIdx(i).GetAtomicNum() > 1),
            element_set=tuple(sorted({mol.GetAtomWithIdx(i).GetSymbol() for i in group})),
            ring_atoms=sum(1 for i in group if mol.GetAtomWithIdx(i).IsInRing()),
        )
    return None


def _tell(field: str) -> Callable[[Sequence[Task], StrategyContext], Picks]:
    def pick(tasks: Sequence[Task], context: StrategyContext) -> Picks:
        out: Picks = []
        for task in tasks:
            values: list[Hashable] = []
            for i, c in enumerate(task.candidates):
                features = group_features(task.masked_smiles, c)
                values.append(("no fit", i) if features is None else getattr(features, field))
            out.append(odd_one_out(values))
        return out

    return pick


MAX_POSITIONS = 8

STRATEGIES: tuple[Strategy, ...] = (
    Strategy("id_hash", "leak", "a candidate hashes (common schemes) to the record id", _id_hash),
    Strategy("id_number", "leak", "the record id read as a number, modulo K", _id_number),
    Strategy(
        "selection_replay",
        "leak",
        "chemgauge's selection replayed per candidate",
        _selection_replay,
    ),
    *(
        Strategy(f"position_{i}", "leak", f"always candidate {i}", _position(i))
        for i in range(MAX_POSITIONS)
    ),
    Strategy("order_breaker", "leak", "the one candidate out of sorted order", _order_breaker),
    Strategy("order_first", "leak", "the candidate that sorts first", _lexical(False)),
    Strategy("order_last", "leak", "the candidate that sorts last", _lexical(True)),
    Strategy("spelling", "leak", "odd one out by spelling marks", _by_value(_spelling_marks)),
    Strategy(
        "canonical_form",
        "leak",
        "odd one out by being in canonical form",
        _by_value(lambda c: _canonical(c) == c),
    ),
    Strategy(
        "length_longest", "leak", "longest beyond its canonical spelling", _extra_length(True)
    ),
    Strategy(
        "length_shortest", "leak", "shortest beyond its canonical spelling", _extra_length(False)
    ),
    Strategy("closest_text", "leak", "text closest to the masked SMILES", _closest_text),
    Strategy(
        "known_molecule", "leak", "the one candidate in a public molecule set", _known_molecule
    ),
    Strategy(
        "attachment_element",
        "tell",
        "odd element bonded to the scaffold",
        _tell("attachment_element"),
    ),
    Strategy(
        "attachment_bond",
        "tell",
        "odd bond (elements, order) at the attachment",
        _tell("attachment_bond"),
    ),
    Strategy(
        "attachment_atom_bonds",
        "tell",
        "odd bond orders of the group's attachment atom",
        _tell("attachment_atom_bonds"),
    ),
    Strategy("heavy_atoms", "tell", "odd heavy-atom count of the group", _tell("heavy_atoms")),
    Strategy("element_set", "tell", "odd element set of the group", _tell("element_set")),
    Strategy("ring_membership", "tell", "odd count of group ring atoms", _tell("ring_atoms")),
)
