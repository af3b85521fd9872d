"""The ``parity`` lens between two structures, cheapest evidence first.

Parity is the most lenient identity lens: stereo, salts, charge state, tautomers (keto/enol
included), resonance forms and isotopes are forgiven, and it is never stricter than
``strict_key``. A verdict is reached by the first step that settles it:

1. equal ``strict_key`` keys: the same (parity forgives everything strict_key does);
2. no neutral parent on either side: not standardizable (never credited, never wrong);
3. one neutral parent: the same (the canonical tautomer is a function of it);
4. different heavy-atom skeletons: different, because the tautomer search only moves
   hydrogens and bond orders and the InChI skeleton keeps every bond between non-metals;
5. otherwise both tautomer searches run and their keys are compared; a capped search whose
   key differs proves nothing, so the pair is undecided (``TAUTOMER_CAP``).

Steps 1-4 cost a parse and an InChI or a standardization; the tautomer search, which is
nearly all of parity's cost, runs only for same-skeleton pairs strict_key does not settle.
"""

from __future__ import annotations

import enum
from collections.abc import MutableMapping
from dataclasses import dataclass, field

from rdkit import Chem

from chemgauge.chem.inchi import inchi_key_of, strict_key_of
from chemgauge.chem.smiles import clear_atom_maps, mol_to_canonical, try_parse_smiles
from chemgauge.chem.standardize import (
    DEFAULT_SETTINGS,
    StandardizeSettings,
    tautomer_key,
    try_neutral_parent,
)

__all__ = [
    "KeyedStructure",
    "ParityForm",
    "ParityVerdict",
    "keyed_structure",
    "parity_form",
    "parity_match",
    "parity_verdict",
    "skeleton_of",
]

# Elements whose bonds to each other standard InChI always keeps (it disconnects metals).
# Bonds to anything else are left out of the skeleton, which only makes it coarser.
_NONMETALS = frozenset({5, 6, 7, 8, 9, 14, 15, 16, 17, 34, 35, 53})


def skeleton_of(mol: Chem.Mol) -> str:
    """Heavy atoms and the single bonds between non-metals, as canonical SMILES.

    Hydrogens, charges, isotopes, bond orders and bonds to metals are all dropped: what is
    left cannot be changed by a tautomer search, and the InChI skeleton encodes all of it.
    """
    keep = [atom.GetIdx() for atom in mol.GetAtoms() if atom.GetAtomicNum() != 1]
    index = {old: new for new, old in enumerate(keep)}
    graph = Chem.RWMol()
    for old in keep:
        atom = Chem.Atom(mol.GetAtomWithIdx(old).GetAtomicNum())
        atom.SetNoImplicit(True)
        graph.AddAtom(atom)
    for bond in mol.GetBonds():
        begin, end = bond.GetBeginAtom(), bond.GetEndAtom()
        if begin.GetAtomicNum() in _NONMETALS and end.GetAtomicNum() in _NONMETALS:
            graph.AddBond(index[begin.GetIdx()], index[end.GetIdx()], Chem.BondType.SINGLE)
    graph.UpdatePropertyCache(strict=False)
    return str(Chem.MolToSmiles(graph))


@dataclass(frozen=True, slots=True)
class ParityForm:
    """A structure's neutral parent (canonical SMILES) and its heavy-atom skeleton."""

    neutral: str
    skeleton: str


def parity_form(smiles: str, settings: StandardizeSettings = DEFAULT_SETTINGS) -> ParityForm | None:
    """The neutral parent of a structure and its skeleton; ``None`` if it cannot be made."""
    parent = try_neutral_parent(smiles, settings)
    if parent is None:
        return None
    text, mol = parent
    return ParityForm(text, skeleton_of(mol))


_UNSET = ParityForm("", "")


@dataclass(slots=True)
class KeyedStructure:
    """One structure's keys under the round-trip lenses, each computed at most once.

    The InChIKey and strict key come from a single parse and a single InChI; the parity
    form is computed only when a verdict needs it.
    """

    smiles: str
    inchikey: str | None
    strict_key: str | None
    _form: ParityForm | None = field(default=_UNSET, repr=False)

    def form(self) -> ParityForm | None:
        """The neutral parent and skeleton (computed on first use)."""
        if self._form is _UNSET:
            self._form = parity_form(self.smiles)
        return self._form


def keyed_structure(
    smiles: str, memo: MutableMapping[str, KeyedStructure] | None = None
) -> KeyedStructure:
    """Parse once and compute the InChIKey and strict key of a structure.

    With ``memo`` (canonical SMILES -> keyed structure), a structure already keyed under
    another spelling is returned from it: one canonical SMILES costs far less than an InChI,
    and a correct read-back is usually the input's structure spelled differently.
    """
    mol = try_parse_smiles(smiles)
    if mol is None:
        return KeyedStructure(smiles, None, None, None)
    clear_atom_maps(mol)
    canonical = None
    if memo is not None:
        canonical = mol_to_canonical(mol, source=smiles)
        known = memo.get(canonical)
        if known is not None:
            return known
    full = inchi_key_of(mol)
    keyed = KeyedStructure(smiles, full, strict_key_of(mol, full))
    if memo is not None and canonical is not None:
        memo[canonical] = keyed
    return keyed


class ParityVerdict(enum.StrEnum):
    """Whether two structures are the same under parity, or why that cannot be said."""

    SAME = "same"
    DIFFERENT = "different"
    NOT_STANDARDIZABLE = "not_standardizable"
    TAUTOMER_CAP = "tautomer_cap"


def parity_verdict(
    a: KeyedStructure, b: KeyedStructure, settings: StandardizeSettings = DEFAULT_SETTINGS
) -> ParityVerdict:
    """The parity verdict on two structures (symmetric; see the module docstring)."""
    if a.strict_key is not None and a.strict_key == b.strict_key:
        return ParityVerdict.SAME
    form_a, form_b = a.form(), b.form()
    if form_a is None or form_b is None:
        return ParityVerdict.NOT_STANDARDIZABLE
    if form_a.neutral == form_b.neutral:
        return ParityVerdict.SAME
    if form_a.skeleton != form_b.skeleton:
        return ParityVerdict.DIFFERENT
    key_a = tautomer_key(form_a.neutral, settings)
    key_b = tautomer_key(form_b.neutral, settings)
    if key_a.key is None or key_b.key is None:
        return ParityVerdict.NOT_STANDARDIZABLE
    if key_a.key == key_b.key:
        return ParityVerdict.SAME
    if not (key_a.complete and key_b.complete):
        return ParityVerdict.TAUTOMER_CAP
    return ParityVerdict.DIFFERENT


def parity_match(a: str, b: str) -> bool:
    """True iff two structures are the same under parity (undecided is not a match)."""
    return parity_verdict(keyed_structure(a), keyed_structure(b)) is ParityVerdict.SAME
