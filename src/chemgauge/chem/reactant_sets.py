"""Ranked reactant-set outputs compared with a true reactant multiset under named policies.

A raw output is a dot-separated SMILES; each component is parsed on its own (as syntheseus
does), so an output is *valid* only if every component is a non-empty structure RDKit
accepts. Two outputs are the same reactant set under a policy iff their sorted component
keys are equal (multiplicity kept).

Speed without approximation: a canonical key is only computed where it can change an answer.
Every valid component gets a cheap graph invariant (molecular formula plus bond count) that
any two structures with equal ``exact`` or ``stereo_ignored`` keys share. Within one target,
an output whose invariant multiset differs from the truth's cannot be correct, and one whose
invariant multiset no other output shares cannot be a duplicate, so neither needs a key. The
answers are identical to computing every key (a test checks this on real data); other
policies compute every key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from chemgauge.chem.matchers import get_matcher
from chemgauge.chem.smiles import (
    MAX_ATOMS,
    clear_atom_maps,
    mol_to_canonical,
    smiles_refusal,
    try_parse_smiles,
)
from chemgauge.chem.stereo import flat_key_of_mol

__all__ = ["INVARIANT_POLICIES", "ReactantSetComparison", "ReactantSetScorer", "split_components"]

#: Policies whose equal keys imply equal formula and bond count (the invariant is safe).
INVARIANT_POLICIES = frozenset({"exact", "stereo_ignored"})

_Invariant = tuple[str, ...]


_EXPLICIT_H = re.compile(r"\[\d*H(?![a-z])")
_KEEP_HS = Chem.SmilesParserParams()
setattr(_KEEP_HS, "removeHs", False)  # noqa: B010 - the stubs mistype this attribute


def _parse(text: str) -> Chem.Mol | None:
    """Parse like :func:`try_parse_smiles`, skipping RDKit's hydrogen-removal pass when the
    text has no explicit hydrogen atom (``[H]``, ``[2H]``, ...), where that pass is a no-op
    (a test checks the keys are identical)."""
    if _EXPLICIT_H.search(text) or smiles_refusal(text) is not None:
        return try_parse_smiles(text)
    mol = Chem.MolFromSmiles(text, _KEEP_HS)
    if mol is None or not 0 < mol.GetNumAtoms() <= MAX_ATOMS:
        return None
    return mol


def split_components(smiles: str) -> list[str]:
    """Textual split of a SMILES on '.', which never occurs inside a bracket atom."""
    return smiles.split(".")


def _exact_key_of(mol: Chem.Mol, text: str) -> str:
    if ":" in text:
        clear_atom_maps(mol)
    return mol_to_canonical(mol)


def _flat_key_of(mol: Chem.Mol, text: str) -> str | None:
    """Same steps and result as :func:`chemgauge.chem.stereo.try_flatten_stereo`, on a mol."""
    if ":" in text:
        clear_atom_maps(mol)
    return flat_key_of_mol(mol)


@dataclass
class _Component:
    invariant: str
    keys: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReactantSetComparison:
    """One target's ranked outputs, judged.

    Attributes:
        valid: per raw rank, every component parsed.
        first_seen: per raw rank, the raw rank of the first valid output that is the same
            reactant set under ``exact`` (itself when new); ``None`` for invalid outputs.
        correct: per policy, per raw rank, equal to the true reactant multiset.
        unsupported: per policy, raw ranks whose key could not be computed (never correct).
        truth_unsupported: per policy, the truth has no key (so nothing can be correct).
        product_in_outputs: raw ranks of valid outputs that list the product itself among
            their reactants (``exact``), when a product was given.
        keys_computed: canonical keys computed for this target (work accounting only).
    """

    valid: tuple[bool, ...]
    first_seen: tuple[int | None, ...]
    correct: dict[str, tuple[bool, ...]]
    unsupported: dict[str, tuple[int, ...]]
    truth_unsupported: dict[str, bool]
    product_in_outputs: tuple[int, ...]
    keys_computed: int


class ReactantSetScorer:
    """Per-process memo of component invariants and keys; scores one target at a time."""

    def __init__(self, policies: Sequence[str] = ("exact",), *, max_entries: int = 500_000):
        if "exact" not in policies:
            policies = ("exact", *policies)
        self.policies = tuple(dict.fromkeys(policies))
        self._matchers = {p: get_matcher(p) for p in self.policies}
        self._memo: dict[str, _Component | None] = {}
        self._max_entries = max_entries
        self.parsed = 0
        self.keys_computed = 0

    # -- components -------------------------------------------------------------------------

    def _component(self, text: str, mols: dict[str, Chem.Mol]) -> _Component | None:
        try:
            return self._memo[text]
        except KeyError:
            pass
        self.parsed += 1
        mol = _parse(text)
        info: _Component | None
        if mol is None:
            info = None
        else:
            formula = rdMolDescriptors.CalcMolFormula(mol)
            info = _Component(f"{formula}/{mol.GetNumBonds()}")
            mols[text] = mol
        if len(self._memo) >= self._max_entries:
            self._memo.clear()
        self._memo[text] = info
        return info

    def _key(
        self, text: str, info: _Component, policy: str, mols: dict[str, Chem.Mol]
    ) -> str | None:
        try:
            return info.keys[policy]
        except KeyError:
            pass
        self.keys_computed += 1
        if policy in INVARIANT_POLICIES:
            mol = mols.get(text)
            if mol is None:
                mol = _parse(text)
                if mol is not None:
                    mols[text] = mol
            if mol is None:  # cannot happen for a component that parsed once
                key: str | None = None
            else:
                key = _exact_key_of(mol, text) if policy == "exact" else _flat_key_of(mol, text)
        else:
            key = self._matchers[policy].key(text)
        info.keys[policy] = key
        return key

    def _set_key(
        self,
        comps: list[str],
        infos: list[_Component],
        policy: str,
        mols: dict[str, Chem.Mol],
    ) -> tuple[str, ...] | None:
        keys: list[str] = []
        for text, info in zip(comps, infos, strict=True):
            key = self._key(text, info, policy, mols)
            if key is None:
                return None
            keys.extend(key.split("."))
        return tuple(sorted(keys))

    # -- one target -------------------------------------------------------------------------

    def compare(
        self, truth: Sequence[str], outputs: Sequence[str], product: str | None = None
    ) -> ReactantSetComparison:
        """Judge ranked raw outputs against the true reactants (SMILES, one per component).

        With ``product``, also find outputs whose reactants include the product itself.
        """
        before = self.keys_computed
        mols: dict[str, Chem.Mol] = {}
        parsed: list[tuple[list[str], list[_Component], _Invariant] | None] = []
        for output in outputs:
            comps = split_components(output)
            infos: list[_Component] = []
            for text in comps:
                info = self._component(text, mols) if text else None
                if info is None:
                    break
                infos.append(info)
            if len(infos) != len(comps):
                parsed.append(None)
            else:
                parsed.append((comps, infos, tuple(sorted(i.invariant for i in infos))))

        truth_comps = list(truth)
        truth_infos = [self._component(t, mols) if t else None for t in truth_comps]
        truth_ok = bool(truth_comps) and all(i is not None for i in truth_infos)
        truth_invariant: _Invariant | None = None
        if truth_ok:
            truth_invariant = tuple(sorted(i.invariant for i in truth_infos if i is not None))

        # exact classes: only outputs sharing an invariant multiset can be duplicates
        groups: dict[_Invariant, list[int]] = {}
        for rank, item in enumerate(parsed):
            if item is not None:
                groups.setdefault(item[2], []).append(rank)
        first_seen: list[int | None] = [None] * len(outputs)
        for ranks in groups.values():
            if len(ranks) == 1:
                first_seen[ranks[0]] = ranks[0]
                continue
            seen: dict[tuple[str, ...] | None, int] = {}
            for rank in ranks:
                comps, infos, _ = parsed[rank]  # type: ignore[misc]
                key = self._set_key(comps, infos, "exact", mols)
                if key is None:  # pragma: no cover - exact keys exist for parsed molecules
                    first_seen[rank] = rank
                    continue
                first_seen[rank] = seen.setdefault(key, rank)

        correct: dict[str, tuple[bool, ...]] = {}
        unsupported: dict[str, tuple[int, ...]] = {}
        truth_unsupported: dict[str, bool] = {}
        valid_infos = [i for i in truth_infos if i is not None]
        for policy in self.policies:
            flags = [False] * len(outputs)
            bad: list[int] = []
            lazy = policy in INVARIANT_POLICIES
            candidates = [
                (rank, item)
                for rank, item in enumerate(parsed)
                if item is not None and not (lazy and item[2] != truth_invariant)
            ]
            # A parsed truth always has an exact key, so it is computed only when some output
            # could equal it; every other policy can fail on the truth, so it always runs.
            need_truth = truth_ok and (bool(candidates) or policy != "exact")
            truth_key = (
                self._set_key(truth_comps, valid_infos, policy, mols) if need_truth else None
            )
            truth_unsupported[policy] = not truth_ok or (need_truth and truth_key is None)
            for rank, (comps, infos, _) in candidates:
                key = self._set_key(comps, infos, policy, mols)
                if key is None:
                    bad.append(rank)
                elif truth_key is not None and key == truth_key:
                    flags[rank] = True
            correct[policy] = tuple(flags)
            unsupported[policy] = tuple(bad)
        product_ranks: list[int] = []
        product_info = self._component(product, mols) if product else None
        if product and product_info is not None:
            product_key = None
            for rank, item in enumerate(parsed):
                if item is None:
                    continue
                for text, info in zip(item[0], item[1], strict=True):
                    if info.invariant != product_info.invariant:
                        continue
                    if product_key is None:
                        product_key = self._key(product, product_info, "exact", mols)
                    if self._key(text, info, "exact", mols) == product_key:
                        product_ranks.append(rank)
                        break
        return ReactantSetComparison(
            valid=tuple(item is not None for item in parsed),
            first_seen=tuple(first_seen),
            correct=correct,
            unsupported=unsupported,
            truth_unsupported=truth_unsupported,
            product_in_outputs=tuple(product_ranks),
            keys_computed=self.keys_computed - before,
        )
