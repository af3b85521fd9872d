"""Localized graph differences by bounded common-topology matching.

Fragments are paired first (identical fragments by canonical SMILES, the rest greedily by
shared elements). Each remaining pair gets a topology-only maximum common substructure (any
atom matches any atom, any bond any bond), which keeps the common part whole across an edit;
then atom and bond properties are diffed on that common part. Among the embeddings of the
common part, the one with the fewest property differences is kept (bounded). Bond orders
compare on a Kekulé form: an aromatic bond against an aromatic bond is equal, and where one
side is aromatic and the other is not, the aromatic side's Kekulé form is the one that agrees
most with the other side, so one dearomatizing edit is one bond-order error (a side with no
Kekulé form falls back to its aromatic flags, recorded in ``detail``). This is a
descriptive localization, not a proof of a minimal chemical edit distance.

``chemgauge.chem.graphdiff_worker.GraphDiffer`` runs this in a worker process with a wall-time
and memory limit, because rdFMCS can run away on some inputs; every timeout is reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rdkit import Chem
from rdkit.Chem import rdFMCS

from chemgauge.chem.molfile import abbreviation_groups, unsupported_features

__all__ = [
    "CATEGORIES",
    "DiffError",
    "DiffSettings",
    "GraphDiff",
    "diff_graphs",
]

ATOM_ELEMENT = "atom_element"
ATOM_CHARGE = "atom_charge"
ATOM_ISOTOPE = "atom_isotope"
ATOM_RADICAL = "atom_radical"
HYDROGEN_COUNT = "hydrogen_count"
MISSING_ATOM = "missing_atom"
EXTRA_ATOM = "extra_atom"
BOND_ORDER = "bond_order"
MISSING_BOND = "missing_bond"
EXTRA_BOND = "extra_bond"
TETRAHEDRAL_MISSING = "tetrahedral_stereo_missing"
TETRAHEDRAL_EXTRA = "tetrahedral_stereo_extra"
TETRAHEDRAL_INVERTED = "tetrahedral_stereo_inverted"
DOUBLE_BOND_MISSING = "double_bond_stereo_missing"
DOUBLE_BOND_EXTRA = "double_bond_stereo_extra"
DOUBLE_BOND_INVERTED = "double_bond_stereo_inverted"
MISSING_FRAGMENT = "missing_fragment"
EXTRA_FRAGMENT = "extra_fragment"
ABBREVIATION_LABEL = "abbreviation_label"
ABBREVIATION_INTEGRITY = "abbreviation_integrity"
ABBREVIATION_MEMBER_CHEMISTRY = "abbreviation_member_chemistry"

#: Graph categories count toward the chemistry; abbreviation categories are scored separately.
GRAPH_CATEGORIES = (
    ATOM_ELEMENT,
    ATOM_CHARGE,
    ATOM_ISOTOPE,
    ATOM_RADICAL,
    HYDROGEN_COUNT,
    MISSING_ATOM,
    EXTRA_ATOM,
    BOND_ORDER,
    MISSING_BOND,
    EXTRA_BOND,
    TETRAHEDRAL_MISSING,
    TETRAHEDRAL_EXTRA,
    TETRAHEDRAL_INVERTED,
    DOUBLE_BOND_MISSING,
    DOUBLE_BOND_EXTRA,
    DOUBLE_BOND_INVERTED,
    MISSING_FRAGMENT,
    EXTRA_FRAGMENT,
)
ABBREVIATION_CATEGORIES = (
    ABBREVIATION_LABEL,
    ABBREVIATION_INTEGRITY,
    ABBREVIATION_MEMBER_CHEMISTRY,
)
CATEGORIES = GRAPH_CATEGORIES + ABBREVIATION_CATEGORIES

_CIS = (Chem.BondStereo.STEREOZ, Chem.BondStereo.STEREOCIS)
_TRANS = (Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOTRANS)
_TETRAHEDRAL = (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW)


@dataclass(frozen=True)
class DiffSettings:
    """Bounds of the search: rdFMCS timeout, embeddings tried, and the worker's hard limits."""

    mcs_timeout_seconds: int = 2
    max_embeddings: int = 256
    wall_seconds: float = 10.0
    memory_mb: int = 2048


@dataclass(frozen=True)
class DiffError:
    """One localized difference; atom and bond indices refer to the reference and candidate."""

    category: str
    detail: str
    ref_atoms: tuple[int, ...] = ()
    pred_atoms: tuple[int, ...] = ()
    ref_bonds: tuple[int, ...] = ()
    pred_bonds: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for rows."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class GraphDiff:
    """Outcome of one comparison.

    ``status`` is ``ok`` (``errors`` is complete up to the bounds), ``unsupported`` (a feature
    with no certified policy; ``unsupported`` lists it), ``timeout``, ``memory_limit`` or
    ``error``. ``mcs_timed_out`` flags an rdFMCS internal timeout whose partial common part
    was still used; ``embeddings_truncated`` flags that not every embedding was tried.
    """

    status: str
    errors: tuple[DiffError, ...] = ()
    mapping: tuple[tuple[int, int], ...] = ()
    unsupported: tuple[str, ...] = ()
    mcs_timed_out: bool = False
    embeddings_truncated: bool = False
    detail: str = ""

    @property
    def graph_errors(self) -> tuple[DiffError, ...]:
        """Errors in the chemistry (abbreviation label and integrity excluded)."""
        return tuple(e for e in self.errors if e.category in GRAPH_CATEGORIES)

    def category_counts(self) -> dict[str, int]:
        """Number of localized errors per category, sorted by category."""
        return dict(sorted(Counter(e.category for e in self.errors).items()))

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for rows (deterministic order)."""
        return {
            "status": self.status,
            "errors": [e.to_dict() for e in self.errors],
            "category_counts": self.category_counts(),
            "mapping": [list(pair) for pair in self.mapping],
            "unsupported": list(self.unsupported),
            "mcs_timed_out": self.mcs_timed_out,
            "embeddings_truncated": self.embeddings_truncated,
            "detail": self.detail,
        }


@dataclass
class _State:
    errors: list[DiffError] = field(default_factory=list)
    mapping: dict[int, int] = field(default_factory=dict)
    mcs_timed_out: bool = False
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


#: Search nodes tried per molecule when choosing its Kekulé form (the best found is kept).
KEKULE_SEARCH_NODES = 20_000


def _kekule_orders(mol: Chem.Mol, weight: dict[int, int]) -> dict[int, Chem.BondType] | str:
    """Single/double orders of ``mol``'s aromatic bonds in the Kekulé form that puts double
    bonds where ``weight`` (+1 wanted double, -1 wanted single, by bond index) asks most,
    searched within :data:`KEKULE_SEARCH_NODES`; the reason when it has no Kekulé form."""
    aromatic = [bond for bond in mol.GetBonds() if bond.GetIsAromatic()]
    if not aromatic:
        return {}
    kekule = Chem.Mol(mol)
    try:
        Chem.Kekulize(kekule, clearAromaticFlags=True)
    except Exception as exc:  # RDKit raises KekulizeException and friends
        return str(exc).strip() or type(exc).__name__
    double = Chem.BondType.DOUBLE
    first = {
        b.GetIdx() for b in aromatic if kekule.GetBondWithIdx(b.GetIdx()).GetBondType() == double
    }
    needs = sorted({i for b in first for i in _ends(mol, b)})
    options: dict[int, list[tuple[int, int, int]]] = {atom: [] for atom in needs}
    for bond in aromatic:
        a, b = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if a in options and b in options:
            w = weight.get(bond.GetIdx(), 0)
            options[a].append((w, bond.GetIdx(), b))
            options[b].append((w, bond.GetIdx(), a))
    for choices in options.values():
        choices.sort(key=lambda item: (-item[0], item[1]))
    best_score = sum(weight.get(b, 0) for b in first)
    best = set(first)
    nodes = 0
    matched: set[int] = set()
    chosen: list[int] = []

    def search(score: int, left: int) -> None:
        nonlocal best_score, best, nodes
        nodes += 1
        if nodes > KEKULE_SEARCH_NODES or (score + left // 2 <= best_score and left):
            return
        atom = next((a for a in needs if a not in matched), None)
        if atom is None:
            if score > best_score:
                best_score, best = score, set(chosen)
            return
        matched.add(atom)
        for w, bond_index, other in options[atom]:
            if other in matched:
                continue
            matched.add(other)
            chosen.append(bond_index)
            search(score + w, left - 2)
            chosen.pop()
            matched.discard(other)
        matched.discard(atom)

    search(0, len(needs))
    single = Chem.BondType.SINGLE
    return {b.GetIdx(): double if b.GetIdx() in best else single for b in aromatic}


def _ends(mol: Chem.Mol, bond_index: int) -> tuple[int, int]:
    bond = mol.GetBondWithIdx(bond_index)
    return bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()


def _fragment_smiles(mol: Chem.Mol, atoms: Sequence[int]) -> str:
    return str(Chem.MolFragmentToSmiles(mol, atomsToUse=list(atoms), isomericSmiles=True))


def _elements(mol: Chem.Mol, atoms: Sequence[int]) -> Counter[int]:
    return Counter(mol.GetAtomWithIdx(i).GetAtomicNum() for i in atoms)


def _submol(mol: Chem.Mol, atoms: Sequence[int]) -> tuple[Chem.Mol, list[int]]:
    """The fragment as its own molecule plus the list new index -> original index."""
    keep = sorted(atoms)
    if len(keep) == mol.GetNumAtoms():
        return mol, keep
    kept = set(keep)
    editable = Chem.RWMol(mol)
    for index in reversed(range(mol.GetNumAtoms())):
        if index not in kept:
            editable.RemoveAtom(index)
    return editable.GetMol(), keep


def _pair_fragments(
    ref: Chem.Mol, pred: Chem.Mol
) -> tuple[
    list[tuple[tuple[int, ...], tuple[int, ...], bool]],
    list[tuple[int, ...]],
    list[tuple[int, ...]],
]:
    ref_frags = [tuple(f) for f in Chem.GetMolFrags(ref)]
    pred_frags = [tuple(f) for f in Chem.GetMolFrags(pred)]
    pairs: list[tuple[tuple[int, ...], tuple[int, ...], bool]] = []
    pred_left = list(pred_frags)
    ref_left: list[tuple[int, ...]] = []
    pred_keys = {f: _fragment_smiles(pred, f) for f in pred_frags}
    for frag in ref_frags:
        key = _fragment_smiles(ref, frag)
        same = next((p for p in pred_left if pred_keys[p] == key), None)
        if same is None:
            ref_left.append(frag)
        else:
            pred_left.remove(same)
            pairs.append((frag, same, True))
    missing: list[tuple[int, ...]] = []
    for frag in sorted(ref_left, key=lambda f: (-len(f), f)):
        ref_elements = _elements(ref, frag)
        best: tuple[int, int, tuple[int, ...]] | None = None
        for cand in pred_left:
            overlap = sum((ref_elements & _elements(pred, cand)).values())
            score = (overlap, -abs(len(cand) - len(frag)), cand)
            if best is None or score[:2] > best[:2]:
                best = score
        if best is not None and best[0] >= max(1, min(len(frag), len(best[2])) / 2):
            pred_left.remove(best[2])
            pairs.append((frag, best[2], False))
        else:
            missing.append(frag)
    return pairs, missing, pred_left


def _property_cost(ref: Chem.Mol, pred: Chem.Mol, mapping: dict[int, int]) -> int:
    cost = 0
    for r, p in mapping.items():
        a, b = ref.GetAtomWithIdx(r), pred.GetAtomWithIdx(p)
        cost += a.GetAtomicNum() != b.GetAtomicNum()
        cost += a.GetFormalCharge() != b.GetFormalCharge()
        cost += a.GetIsotope() != b.GetIsotope()
        cost += a.GetTotalNumHs() != b.GetTotalNumHs()
    for bond in ref.GetBonds():
        r1, r2 = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if r1 in mapping and r2 in mapping:
            other = pred.GetBondBetweenAtoms(mapping[r1], mapping[r2])
            cost += 2 if other is None else other.GetBondType() != bond.GetBondType()
    return cost


def _map_pair(
    ref: Chem.Mol,
    pred: Chem.Mol,
    ref_atoms: tuple[int, ...],
    pred_atoms: tuple[int, ...],
    identical: bool,
    settings: DiffSettings,
    state: _State,
) -> None:
    ref_sub, ref_index = _submol(ref, ref_atoms)
    pred_sub, pred_index = _submol(pred, pred_atoms)
    if identical:
        query = ref_sub
        ref_match: tuple[int, ...] = tuple(range(ref_sub.GetNumAtoms()))
        candidates = pred_sub.GetSubstructMatches(
            query, uniquify=False, useChirality=True, maxMatches=settings.max_embeddings
        )
    else:
        result = rdFMCS.FindMCS(
            [ref_sub, pred_sub],
            atomCompare=rdFMCS.AtomCompare.CompareAny,
            bondCompare=rdFMCS.BondCompare.CompareAny,
            ringMatchesRingOnly=False,
            completeRingsOnly=False,
            matchValences=False,
            timeout=settings.mcs_timeout_seconds,
        )
        state.mcs_timed_out |= bool(result.canceled)
        if result.numAtoms == 0:
            return
        query = Chem.MolFromSmarts(result.smartsString)
        ref_match = ref_sub.GetSubstructMatch(query)
        candidates = pred_sub.GetSubstructMatches(
            query, uniquify=False, maxMatches=settings.max_embeddings
        )
    if not ref_match or not candidates:
        return
    state.truncated |= len(candidates) >= settings.max_embeddings
    best: tuple[int, dict[int, int]] | None = None
    for cand in candidates:
        mapping = {ref_index[r]: pred_index[p] for r, p in zip(ref_match, cand, strict=True)}
        cost = _property_cost(ref, pred, mapping)
        if best is None or cost < best[0]:
            best = (cost, mapping)
            if cost == 0:
                break
    if best is not None:
        state.mapping.update(best[1])


def _atom_properties(atom: Chem.Atom) -> tuple[tuple[str, object], ...]:
    return (
        (ATOM_ELEMENT, atom.GetSymbol()),
        (ATOM_CHARGE, atom.GetFormalCharge()),
        (ATOM_ISOTOPE, atom.GetIsotope()),
        (ATOM_RADICAL, atom.GetNumRadicalElectrons()),
    )


def _atom_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State, touched: set[int]) -> None:
    for r, p in sorted(state.mapping.items()):
        ref_props = _atom_properties(ref.GetAtomWithIdx(r))
        pred_props = _atom_properties(pred.GetAtomWithIdx(p))
        for (category, before), (_, after) in zip(ref_props, pred_props, strict=True):
            if before != after:
                state.errors.append(DiffError(category, f"{before} -> {after}", (r,), (p,)))
                touched.add(r)


def _wanted(mine: Chem.Mol, other: Chem.Mol, pairs: dict[int, int]) -> dict[int, int]:
    """Per aromatic bond of ``mine`` whose partner in ``other`` is not aromatic: +1 if the
    partner is double, -1 if single (``pairs`` maps ``mine``'s atoms to ``other``'s)."""
    wanted: dict[int, int] = {}
    for bond in mine.GetBonds():
        a, b = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if not bond.GetIsAromatic() or a not in pairs or b not in pairs:
            continue
        partner = other.GetBondBetweenAtoms(pairs[a], pairs[b])
        if partner is None or partner.GetIsAromatic():
            continue
        kind = partner.GetBondType()
        wanted[bond.GetIdx()] = (kind == Chem.BondType.DOUBLE) - (kind == Chem.BondType.SINGLE)
    return wanted


def _kekule_sides(
    ref: Chem.Mol, pred: Chem.Mol, state: _State
) -> tuple[dict[int, Chem.BondType], dict[int, Chem.BondType]]:
    """Each side's Kekulé orders, each chosen to agree with the other side's explicit orders
    as far as a Kekulé form allows; a side that has none falls back to its aromatic flags
    (recorded in ``state.notes``)."""
    inverse = {p: r for r, p in state.mapping.items()}
    sides = []
    for name, mine, other, pairs in (
        ("reference", ref, pred, state.mapping),
        ("candidate", pred, ref, inverse),
    ):
        orders = _kekule_orders(mine, _wanted(mine, other, pairs))
        if isinstance(orders, str):
            state.notes.append(
                f"bond orders on aromatic flags for the {name}: kekulization failed ({orders})"
            )
            orders = {}
        sides.append(orders)
    return sides[0], sides[1]


def _bond_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State, touched: set[int]) -> None:
    """Missing, extra and changed bonds; orders compare aromatic to aromatic as equal and
    otherwise on the Kekulé form of the aromatic side (:func:`_kekule_sides`)."""
    mapping = state.mapping
    inverse = {p: r for r, p in mapping.items()}
    ref_kekule, pred_kekule = _kekule_sides(ref, pred, state)
    for bond in ref.GetBonds():
        r1, r2 = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if r1 not in mapping or r2 not in mapping:
            touched.update(i for i in (r1, r2) if i in mapping)
            continue
        other = pred.GetBondBetweenAtoms(mapping[r1], mapping[r2])
        pair = (mapping[r1], mapping[r2])
        if other is None:
            state.errors.append(
                DiffError(MISSING_BOND, str(bond.GetBondType()), (r1, r2), pair, (bond.GetIdx(),))
            )
            touched.update((r1, r2))
            continue
        before, after = bond.GetBondType(), other.GetBondType()
        if bond.GetIsAromatic() != other.GetIsAromatic():
            before = ref_kekule.get(bond.GetIdx(), before)
            after = pred_kekule.get(other.GetIdx(), after)
        if before != after:
            detail = f"{before} -> {after}"
            state.errors.append(
                DiffError(BOND_ORDER, detail, (r1, r2), pair, (bond.GetIdx(),), (other.GetIdx(),))
            )
            touched.update((r1, r2))
    for bond in pred.GetBonds():
        p1, p2 = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if p1 not in inverse or p2 not in inverse:
            touched.update(inverse[i] for i in (p1, p2) if i in inverse)
            continue
        if ref.GetBondBetweenAtoms(inverse[p1], inverse[p2]) is None:
            state.errors.append(
                DiffError(
                    EXTRA_BOND,
                    str(bond.GetBondType()),
                    (inverse[p1], inverse[p2]),
                    (p1, p2),
                    (),
                    (bond.GetIdx(),),
                )
            )
            touched.update((inverse[p1], inverse[p2]))


def _hydrogen_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State, touched: set[int]) -> None:
    """Report H-count changes not already explained by an edit at the same atom."""
    for r, p in sorted(state.mapping.items()):
        if r in touched:
            continue
        h_ref = ref.GetAtomWithIdx(r).GetTotalNumHs()
        h_pred = pred.GetAtomWithIdx(p).GetTotalNumHs()
        if h_ref != h_pred:
            state.errors.append(DiffError(HYDROGEN_COUNT, f"{h_ref} -> {h_pred}", (r,), (p,)))


def _neighbour_order(atom: Chem.Atom) -> list[int]:
    return [bond.GetOtherAtomIdx(atom.GetIdx()) for bond in atom.GetBonds()]


def _permutation_parity(order: list[int], target: list[int]) -> int:
    position = {value: i for i, value in enumerate(target)}
    permutation = [position[value] for value in order]
    parity = 0
    seen = [False] * len(permutation)
    for start in range(len(permutation)):
        length = 0
        i = start
        while not seen[i]:
            seen[i] = True
            i = permutation[i]
            length += 1
        if length:
            parity += length - 1
    return parity % 2


def _tetrahedral_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State) -> None:
    for r, p in sorted(state.mapping.items()):
        a, b = ref.GetAtomWithIdx(r), pred.GetAtomWithIdx(p)
        ref_set, pred_set = a.GetChiralTag() in _TETRAHEDRAL, b.GetChiralTag() in _TETRAHEDRAL
        if ref_set and not pred_set:
            state.errors.append(DiffError(TETRAHEDRAL_MISSING, str(a.GetChiralTag()), (r,), (p,)))
        elif pred_set and not ref_set:
            state.errors.append(DiffError(TETRAHEDRAL_EXTRA, str(b.GetChiralTag()), (r,), (p,)))
        elif ref_set and pred_set:
            ref_order = [state.mapping.get(n, -1 - n) for n in _neighbour_order(a)]
            pred_order = _neighbour_order(b)
            if sorted(ref_order) != sorted(pred_order):
                continue  # neighbours differ: the neighbour edit is already reported
            same_tag = a.GetChiralTag() == b.GetChiralTag()
            odd = _permutation_parity(ref_order, pred_order) == 1
            if same_tag == odd:
                state.errors.append(
                    DiffError(TETRAHEDRAL_INVERTED, "opposite configuration", (r,), (p,))
                )


def _cis(bond: Chem.Bond) -> bool | None:
    stereo = bond.GetStereo()
    if stereo in _CIS:
        return True
    if stereo in _TRANS:
        return False
    return None


def _relation_in(bond: Chem.Bond, x: int, y: int) -> bool | None:
    """Whether substituents ``x`` and ``y`` are cis across ``bond`` in its own molecule."""
    cis = _cis(bond)
    atoms = list(bond.GetStereoAtoms())
    if cis is None or len(atoms) != 2:
        return None
    mol = bond.GetOwningMol()
    begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
    flips = 0
    for substituent, anchor in ((x, begin), (y, end)):
        reference = atoms[0] if anchor == begin else atoms[1]
        if substituent == reference:
            continue
        if mol.GetBondBetweenAtoms(substituent, anchor) is None:
            return None
        flips += 1
    return cis if flips % 2 == 0 else not cis


def _double_bond_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State) -> None:
    mapping = state.mapping
    for bond in ref.GetBonds():
        if bond.GetBondType() != Chem.BondType.DOUBLE:
            continue
        r1, r2 = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if r1 not in mapping or r2 not in mapping:
            continue
        other = pred.GetBondBetweenAtoms(mapping[r1], mapping[r2])
        if other is None or other.GetBondType() != Chem.BondType.DOUBLE:
            continue
        ref_cis, pred_cis = _cis(bond), _cis(other)
        atoms, bonds = (r1, r2), (bond.GetIdx(),)
        pair, other_bonds = (mapping[r1], mapping[r2]), (other.GetIdx(),)
        if ref_cis is not None and pred_cis is None:
            state.errors.append(
                DiffError(DOUBLE_BOND_MISSING, str(bond.GetStereo()), atoms, pair, bonds)
            )
        elif pred_cis is not None and ref_cis is None:
            state.errors.append(
                DiffError(DOUBLE_BOND_EXTRA, str(other.GetStereo()), atoms, pair, (), other_bonds)
            )
        elif ref_cis is not None:
            s1, s2 = list(bond.GetStereoAtoms())
            if s1 not in mapping or s2 not in mapping:
                continue
            x, y = mapping[s1], mapping[s2]
            if other.GetBeginAtomIdx() != mapping[r1]:
                x, y = y, x
            relation = _relation_in(other, x, y)
            if relation is not None and relation != ref_cis:
                state.errors.append(
                    DiffError(
                        DOUBLE_BOND_INVERTED, "cis/trans swapped", atoms, pair, bonds, other_bonds
                    )
                )


def _abbreviation_errors(ref: Chem.Mol, pred: Chem.Mol, state: _State) -> None:
    mapping = state.mapping
    pred_groups = abbreviation_groups(pred)
    claimed: set[int] = set()
    for group in abbreviation_groups(ref):
        members = set(group.members)
        image = {mapping[m] for m in members if m in mapping}
        candidate = next(
            (i for i, g in enumerate(pred_groups) if i not in claimed and image & set(g.members)),
            None,
        )
        if candidate is None:
            state.errors.append(
                DiffError(
                    ABBREVIATION_LABEL,
                    f"label {group.label!r} missing",
                    group.members,
                    tuple(sorted(image)),
                )
            )
        else:
            claimed.add(candidate)
            found = pred_groups[candidate]
            if found.label != group.label:
                state.errors.append(
                    DiffError(
                        ABBREVIATION_LABEL,
                        f"label {group.label!r} -> {found.label!r}",
                        group.members,
                        found.members,
                    )
                )
            problems = found.problems(pred)
            anchors = {mapping.get(a, -1) for a in group.anchors}
            if set(found.members) != image or len(image) != len(members):
                problems.append("members differ from the reference group")
            if set(found.anchors) != anchors:
                problems.append("anchor differs from the reference group")
            if problems:
                state.errors.append(
                    DiffError(
                        ABBREVIATION_INTEGRITY,
                        f"{group.label}: " + "; ".join(problems),
                        group.members,
                        found.members,
                    )
                )
        chemistry = [
            e
            for e in state.errors
            if e.category in GRAPH_CATEGORIES and members.intersection(e.ref_atoms)
        ]
        if chemistry:
            kinds = sorted({e.category for e in chemistry})
            state.errors.append(
                DiffError(
                    ABBREVIATION_MEMBER_CHEMISTRY,
                    f"{group.label}: {', '.join(kinds)}",
                    group.members,
                    tuple(sorted(image)),
                )
            )
    for i, found in enumerate(pred_groups):
        if i in claimed:
            continue
        problems = found.problems(pred)
        detail = f"unexpected label {found.label!r}"
        if problems:
            detail += " (" + "; ".join(problems) + ")"
        state.errors.append(DiffError(ABBREVIATION_LABEL, detail, (), found.members))


def diff_graphs(ref: Chem.Mol, pred: Chem.Mol, settings: DiffSettings | None = None) -> GraphDiff:
    """Localize the differences between a reference and a candidate graph (in process)."""
    settings = settings or DiffSettings()
    unsupported = tuple(f"reference: {f}" for f in unsupported_features(ref)) + tuple(
        f"candidate: {f}" for f in unsupported_features(pred)
    )
    if unsupported:
        return GraphDiff("unsupported", unsupported=unsupported)
    state = _State()
    pairs, missing, extra = _pair_fragments(ref, pred)
    for ref_atoms, pred_atoms, identical in pairs:
        _map_pair(ref, pred, ref_atoms, pred_atoms, identical, settings, state)
    for frag in missing:
        smiles = _fragment_smiles(ref, frag)
        state.errors.append(DiffError(MISSING_FRAGMENT, smiles, ref_atoms=frag))
    for frag in extra:
        smiles = _fragment_smiles(pred, frag)
        state.errors.append(DiffError(EXTRA_FRAGMENT, smiles, pred_atoms=frag))
    in_fragments = {i for f in missing for i in f}
    in_pred_fragments = {i for f in extra for i in f}
    mapped_pred = set(state.mapping.values())
    for atom in ref.GetAtoms():
        index = atom.GetIdx()
        if index not in state.mapping and index not in in_fragments:
            state.errors.append(DiffError(MISSING_ATOM, atom.GetSymbol(), ref_atoms=(index,)))
    for atom in pred.GetAtoms():
        index = atom.GetIdx()
        if index not in mapped_pred and index not in in_pred_fragments:
            state.errors.append(DiffError(EXTRA_ATOM, atom.GetSymbol(), pred_atoms=(index,)))
    touched: set[int] = set()
    _atom_errors(ref, pred, state, touched)
    _bond_errors(ref, pred, state, touched)
    _hydrogen_errors(ref, pred, state, touched)
    _tetrahedral_errors(ref, pred, state)
    _double_bond_errors(ref, pred, state)
    _abbreviation_errors(ref, pred, state)
    order = {name: i for i, name in enumerate(CATEGORIES)}
    errors = sorted(
        state.errors,
        key=lambda e: (order[e.category], e.ref_atoms, e.pred_atoms, e.ref_bonds, e.pred_bonds),
    )
    return GraphDiff(
        "ok",
        tuple(errors),
        tuple(sorted(state.mapping.items())),
        mcs_timed_out=state.mcs_timed_out,
        embeddings_truncated=state.truncated,
        detail="; ".join(state.notes),
    )
