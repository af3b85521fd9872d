"""Ranked reactant-set outputs compared with a true reactant multiset under named policies.

A raw output is a dot-separated SMILES; each component is parsed on its own (as syntheseus
does), so an output is *valid* only if every component is a non-empty structure RDKit
accepts. Two outputs are the same reactant set under a policy iff their sorted component
keys are equal (multiplicity kept).

Speed without approximation: a canonical key is only computed where it can change an answer.
Every valid component gets a cheap graph invariant (heavy-atom formula with charge, plus bond
count; see :func:`structure_invariant`) that any two structures with equal ``exact`` or
``stereo_ignored`` keys share. Within one target, an output whose invariant multiset differs
from the truth's cannot be correct, and one whose invariant multiset no other output shares
cannot be a duplicate, so neither needs a key. The answers are identical to computing every
key (a test checks this on real data); other policies compute every key.

Validity itself is decided by a screen cheaper than a full parse: RDKit's parse without
sanitization, then only the sanitization steps that can reject a structure (clean-up,
organometallic clean-up when a metal may be present, valence, kekulization when an aromatic
atom may be present). The steps it skips (SSSR symmetrization, radicals, aromaticity,
conjugation, hybridization, chirality clean-up, hydrogen adjustment, stereo perception) cannot
reject a molecule, so the screen accepts exactly what a full parse accepts; a screen rejection
is confirmed by a full parse anyway, and keys always come from a full parse. Without metals or
dative bonds, kekulization runs on the fast ring finder's rings instead of the SSSR
sanitization would compute (see :func:`_kekulizes`). Seeded mutation fuzzes of real SMILES
(tests) guard the equivalence. About 1.7x cheaper per component than a full parse.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from chemgauge.chem.matchers import get_matcher
from chemgauge.chem.smiles import (
    HYDROGEN_ATOM,
    MAX_SMILES_CHARS,
    PARSE_FAILURE_KINDS,
    clear_atom_maps,
    mol_to_canonical,
    parse_failure_kind,
    size_refusal,
    try_parse_smiles_for_key,
)
from chemgauge.chem.stereo import flat_key_of_mol

__all__ = [
    "INVALIDITY_REASONS",
    "INVARIANT_POLICIES",
    "ReactantSetComparison",
    "ReactantSetScorer",
    "screen_component",
    "split_components",
    "structure_invariant",
]

#: Policies whose equal keys imply equal formula and bond count (the invariant is safe).
INVARIANT_POLICIES = frozenset({"exact", "stereo_ignored"})

_Invariant = tuple[str, ...]

#: Why a raw output is invalid: no text at all, an empty component ('A..B', 'A.'), a
#: component with a dummy atom ('*', '[1*]': a placeholder, not a reactant anyone can buy),
#: or the :data:`~chemgauge.chem.smiles.PARSE_FAILURE_KINDS` code of its first unparsable
#: component.
INVALIDITY_REASONS = ("empty", "empty_component", "dummy_atom", *PARSE_FAILURE_KINDS)


_SCREEN = Chem.SmilesParserParams()
setattr(_SCREEN, "removeHs", False)  # noqa: B010
setattr(_SCREEN, "sanitize", False)  # noqa: B010
_SCREEN_OPS = Chem.SanitizeFlags.SANITIZE_CLEANUP | Chem.SanitizeFlags.SANITIZE_PROPERTIES
# An aromatic atom or bond can only be written as a lowercase organic-subset symbol, a
# bracket atom starting lowercase, or ':'; without one, kekulization has nothing to do.
# Over-matching ('[Co]', atom maps) only costs the kekulization.
_MAY_BE_AROMATIC = re.compile(r"[bcnops:]|\[\d*[a-z]")
# A metal can only be written as a bracket atom; the organometallic clean-up (dative bonds
# to metals) has nothing to do when every bracket atom is one of these non-metals.
_BRACKET_ELEMENT = re.compile(r"\[\d*([A-Za-z][a-z]?)")
_NON_METALS = frozenset(
    {"H", "B", "C", "N", "O", "F", "Si", "P", "S", "Cl", "Se", "Br", "I"}
    | {"b", "c", "n", "o", "p", "s", "se"}
)


def _screen_ops(text: str) -> Chem.SanitizeFlags:
    """The sanitization steps that can reject this text's structure, kekulization aside."""
    ops = _SCREEN_OPS
    if "[" in text:
        symbols = _BRACKET_ELEMENT.findall(text)
        if len(symbols) != text.count("[") or not _NON_METALS.issuperset(symbols):
            ops |= Chem.SanitizeFlags.SANITIZE_CLEANUP_ORGANOMETALLICS
    return ops  # type: ignore[no-any-return]  # the stubs type flag unions as Any


def _kekulizes(mol: Chem.Mol) -> bool:
    """Kekulization as sanitization runs it (aromatic flags cleared, valences re-checked), on
    ring membership from RDKit's fast ring finder: sanitization would first reset the ring
    information and compute an SSSR through ring families, about a third of the screen's
    cost. Only for molecules without metals or dative bonds, where the two ring perceptions
    cover the same ring atoms and bonds."""
    Chem.FastFindRings(mol)
    try:
        Chem.Kekulize(mol, clearAromaticFlags=True)
        mol.UpdatePropertyCache(strict=True)
    except Exception:  # RDKit's sanitization exceptions; anything else: the full parse decides
        return False
    return True


def _screen_accepts(mol: Chem.Mol, text: str) -> bool:
    """True if the sanitization steps that can reject a structure all pass."""
    ops = _screen_ops(text)
    aromatic = _MAY_BE_AROMATIC.search(text) is not None
    if ops & Chem.SanitizeFlags.SANITIZE_CLEANUP_ORGANOMETALLICS or "->" in text or "<-" in text:
        # rings through metals or dative bonds: let sanitization perceive them its own way
        if aromatic:
            ops |= Chem.SanitizeFlags.SANITIZE_KEKULIZE
        return not Chem.SanitizeMol(mol, ops, catchErrors=True)
    if Chem.SanitizeMol(mol, ops, catchErrors=True):
        return False
    return not aromatic or _kekulizes(mol)


# The hydrogen count in a Hill formula: 'H' not starting a two-letter element (Hg, He, ...).
_FORMULA_HYDROGENS = re.compile(r"H(?![a-z])\d*")


def structure_invariant(mol: Chem.Mol) -> str:
    """Heavy-atom formula (with net charge) and bond count: equal for any two spellings of one
    structure, whether the molecule came from the screen or from a full parse.

    Hydrogen counts are left out: they depend on when RDKit last perceived valences, and the
    screen stops at the Kekule form, where an odd aromatic atom can carry a different count
    than after a full parse (``s=1c2nc(N)cn2c1Br``: one more H on the sulfur). Heavy atoms,
    charges and bonds are fixed before any of that. On the USPTO-50k benchmark outputs the
    hydrogen-free invariant computes 0.2% more keys.
    """
    formula = rdMolDescriptors.CalcMolFormula(mol)
    heavy = _HEAVY_FORMULAS.get(formula)
    if heavy is None:
        if len(_HEAVY_FORMULAS) >= _MAX_FORMULAS:
            _HEAVY_FORMULAS.clear()
        heavy = _HEAVY_FORMULAS[formula] = _FORMULA_HYDROGENS.sub("", formula)
    return f"{heavy}/{mol.GetNumBonds()}"


#: Hill formula -> the same without hydrogens (formulas recur across molecules: a look-up
#: costs less than the substitution).
_HEAVY_FORMULAS: dict[str, str] = {}
_MAX_FORMULAS = 100_000


# Texts the screen leaves to the full parse: a hydrogen atom of its own ([H], [2H]: the full
# parse removes it), or any character outside printable ASCII (whitespace, which may be refused
# or a CXSMILES extension, and non-ASCII text), so the screen never decides what
# :func:`~chemgauge.chem.smiles.smiles_refusal` would refuse.
_FULL_PATH = re.compile(f"{HYDROGEN_ATOM.pattern}|[^!-~]")


def screen_component(text: str, failures: dict[str, str] | None = None) -> str | None:
    """The invariant of a component RDKit accepts, or ``None`` if a full parse rejects it.

    Texts with hydrogen atoms, whitespace or non-ASCII characters, or over the length limit,
    take the full path, so the invariant is always that of the molecule a full parse builds.
    With ``failures``, a text rejected for its syntax is recorded there as ``"syntax"`` (the
    one invalidity reason the screen knows for free, so the reason costs no second parse).
    """
    if len(text) > MAX_SMILES_CHARS() or _FULL_PATH.search(text) is not None:
        mol = try_parse_smiles_for_key(text)
        return None if mol is None else structure_invariant(mol)
    mol = Chem.MolFromSmiles(text, _SCREEN)
    if mol is None:
        # a syntax error: a full parse runs the same grammar first and fails too
        if failures is not None:
            failures[text] = "syntax"
        return None
    if size_refusal(mol) is None and _screen_accepts(mol, text):
        return structure_invariant(mol)
    # rejected by the screen's sanitization: confirm with the full parse (never wrongly
    # invalid)
    full = try_parse_smiles_for_key(text)
    return None if full is None else structure_invariant(full)


# Letters of a SMILES other than H: the same for most spellings of one structure.
_NOT_HEAVY_LETTERS = str.maketrans("", "", "H0123456789()[]=#-+@/\\%.:*$")


def _spelling_hint(smiles: str) -> str:
    """The sorted letters of a whole output (components together: '.' is dropped)."""
    return "".join(sorted(smiles.translate(_NOT_HEAVY_LETTERS)))


def _likely_keyed(truth: Sequence[str], outputs: Sequence[str]) -> set[int]:
    """Ranks of outputs that will probably need canonical keys: their letters (a cheap
    proxy for the structure) match the truth's or another output's. Only a scheduling hint:
    such outputs are parsed fully up front instead of screened and parsed again for the
    key; answers never depend on it."""
    hints = [_spelling_hint(o) for o in outputs]
    counts: dict[str, int] = {}
    for hint in hints:
        counts[hint] = counts.get(hint, 0) + 1
    target = _spelling_hint(".".join(truth))
    return {rank for rank, hint in enumerate(hints) if counts[hint] > 1 or hint == target}


def split_components(smiles: str) -> list[str]:
    """Textual split of a SMILES on '.', which never occurs inside a bracket atom."""
    return smiles.split(".")


def _exact_key_of(mol: Chem.Mol, text: str) -> str:
    if ":" in text:
        clear_atom_maps(mol)
        return mol_to_canonical(mol)
    return mol_to_canonical(mol, source=text)  # a canonical output is not parsed again


def _flat_key_of(mol: Chem.Mol, text: str) -> str | None:
    """Same steps and result as :func:`chemgauge.chem.stereo.try_flatten_stereo`, on a mol."""
    if ":" in text:
        clear_atom_maps(mol)
    return flat_key_of_mol(mol)


class _Component:
    """A valid component's invariant and the keys computed for it so far, by policy."""

    __slots__ = ("invariant", "keys")

    def __init__(self, invariant: str) -> None:
        self.invariant = invariant
        self.keys: dict[str, str | None] = {}


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
        invalid_reasons: per invalid output, in rank order, why it is invalid (one of
            :data:`INVALIDITY_REASONS`).
        keys_computed: canonical keys computed for this target (work accounting only).
    """

    valid: tuple[bool, ...]
    first_seen: tuple[int | None, ...]
    correct: dict[str, tuple[bool, ...]]
    unsupported: dict[str, tuple[int, ...]]
    truth_unsupported: dict[str, bool]
    product_in_outputs: tuple[int, ...]
    invalid_reasons: tuple[str, ...]
    keys_computed: int


_UNSEEN = _Component("")  # memo sentinel (``None`` is a memoized invalid component)


class ReactantSetScorer:
    """Per-process memo of component invariants and keys; scores one target at a time.

    The memo is cleared when it reaches ``max_entries`` (about 25 MB at the default), so a
    worker's memory does not grow with the number of targets it has scored.
    """

    def __init__(self, policies: Sequence[str] = ("exact",), *, max_entries: int = 100_000):
        if "exact" not in policies:
            policies = ("exact", *policies)
        self.policies = tuple(dict.fromkeys(policies))
        self._matchers = {p: get_matcher(p) for p in self.policies}
        self._memo: dict[str, _Component | None] = {}
        self._reasons: dict[str, str] = {}  # invalid component -> parse failure kind
        self._max_entries = max_entries
        self.parsed = 0
        self.keys_computed = 0

    # -- components -------------------------------------------------------------------------

    def _component(self, text: str, mols: dict[str, Chem.Mol] | None = None) -> _Component | None:
        """Memoized validity and invariant of one component. With ``mols`` (the component
        will probably need a key), parse it fully right away and keep the molecule there, so
        the key does not parse it a second time; otherwise run the cheaper screen."""
        info = self._memo.get(text, _UNSEEN)
        if info is not _UNSEEN:
            return info
        self.parsed += 1
        if "*" in text:  # SMILES writes an atom of atomic number 0 only as '*'
            self._memo[text] = None
            self._reasons[text] = "dummy_atom"
            return None
        if mols is None:
            invariant = screen_component(text, self._reasons)
        else:
            mol = try_parse_smiles_for_key(text)
            invariant = None if mol is None else structure_invariant(mol)
            if mol is not None:
                mols[text] = mol
        info = None if invariant is None else _Component(invariant)
        if len(self._memo) >= self._max_entries:
            self._memo.clear()
            self._reasons.clear()
        self._memo[text] = info
        return info

    def _invalidity(self, output: str, failed: str) -> str:
        """Why ``output`` is invalid, given its first invalid component (the failure path
        only: valid outputs never get here)."""
        if not output:
            return "empty"
        if not failed:
            return "empty_component"
        if "*" in failed:
            return "dummy_atom"
        reason = self._reasons.get(failed)
        if reason is None:
            reason = self._reasons[failed] = parse_failure_kind(failed)
        return reason

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
                mol = try_parse_smiles_for_key(text)
                if mol is not None:
                    mols[text] = mol
            if mol is None:  # screened valid but the full parse fails: never correct
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
        self,
        truth: Sequence[str],
        outputs: Sequence[str],
        product: str | None = None,
        *,
        canonical_truth: bool = False,
    ) -> ReactantSetComparison:
        """Judge ranked raw outputs against the true reactants (SMILES, one per component).

        With ``product``, also find outputs whose reactants include the product itself. With
        ``canonical_truth``, the caller promises the truth components and the product are
        already chemgauge canonical SMILES (a fixed point of canonicalization, as the data
        loaders write them), so their ``exact`` keys are their own texts.
        """
        before = self.keys_computed
        mols: dict[str, Chem.Mol] = {}
        likely = _likely_keyed(truth, outputs)
        parsed: list[tuple[list[str], list[_Component], _Invariant] | None] = []
        reasons: list[str] = []
        for rank, output in enumerate(outputs):
            comps = split_components(output)
            infos: list[_Component] = []
            keep = mols if rank in likely else None
            for text in comps:
                info = self._component(text, keep) if text else None
                if info is None:
                    break
                infos.append(info)
            if len(infos) != len(comps):
                parsed.append(None)
                reasons.append(self._invalidity(output, comps[len(infos)]))
            else:
                parsed.append((comps, infos, tuple(sorted(i.invariant for i in infos))))

        truth_comps = list(truth)
        truth_infos = [self._component(t) if t else None for t in truth_comps]
        if canonical_truth:
            for text, known in zip(truth_comps, truth_infos, strict=True):
                if known is not None:
                    known.keys.setdefault("exact", text)
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
        product_info = self._component(product) if product else None
        if canonical_truth and product and product_info is not None:
            product_info.keys.setdefault("exact", product)
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
            invalid_reasons=tuple(reasons),
            keys_computed=self.keys_computed - before,
        )
