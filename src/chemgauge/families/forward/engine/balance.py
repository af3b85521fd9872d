"""Atom and charge balance of one template application: what the template left out.

Forward templates routinely write only the main product, so water, HCl, a Boc group or a
boronic acid's B(OH)2 silently disappear, and reagents (H2, an oxidant's O) appear from
nowhere. The balance names those atoms instead of hiding them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rdkit import Chem

__all__ = ["Balance", "atom_counts", "compute_balance", "hill_formula"]


def atom_counts(mol: Chem.Mol) -> Counter[str]:
    """Element counts of a molecule, hydrogens (implicit and explicit) included."""
    counts: Counter[str] = Counter()
    for atom in mol.GetAtoms():
        counts[atom.GetSymbol()] += 1
        hydrogens = atom.GetTotalNumHs()
        if hydrogens:
            counts["H"] += hydrogens
    return counts


def net_charge(mols: Iterable[Chem.Mol]) -> int:
    """Sum of formal charges over molecules."""
    return sum(atom.GetFormalCharge() for mol in mols for atom in mol.GetAtoms())


def hill_formula(counts: Iterable[tuple[str, int]]) -> str:
    """Hill-order formula (C, H, then alphabetical; alphabetical if no carbon); "" if empty."""
    table = {symbol: n for symbol, n in counts if n}
    if "C" in table:
        order = ["C", *(["H"] if "H" in table else []), *sorted(set(table) - {"C", "H"})]
    else:
        order = sorted(table)
    return "".join(s if table[s] == 1 else f"{s}{table[s]}" for s in order)


@dataclass(frozen=True, slots=True)
class Balance:
    """Atoms consumed but not in the products (missing), produced from nowhere (extra), charge.

    Attributes:
        missing: element counts present in the consumed reactants but absent from the
            products (leaving groups and by-products the template does not write).
        extra: element counts in the products that no consumed reactant supplied
            (reagents such as H2 in a reduction or O in an oxidation).
        charge_delta: net formal charge of the products minus that of the consumed reactants.
        template_id: the template whose application this balance describes.
    """

    missing: tuple[tuple[str, int], ...]
    extra: tuple[tuple[str, int], ...]
    charge_delta: int
    template_id: str

    @property
    def balanced(self) -> bool:
        """True when no atom is missing or extra and the charge is conserved."""
        return not self.missing and not self.extra and self.charge_delta == 0

    @property
    def missing_formula(self) -> str:
        """The missing atoms as a Hill formula, e.g. ``H2O`` for an amide coupling."""
        return hill_formula(self.missing)

    @property
    def extra_formula(self) -> str:
        """The extra atoms as a Hill formula, e.g. ``H2`` for a hydrogenation."""
        return hill_formula(self.extra)

    @property
    def imbalance(self) -> int:
        """Total number of unaccounted atoms plus the absolute charge change."""
        return (
            sum(n for _, n in self.missing) + sum(n for _, n in self.extra) + abs(self.charge_delta)
        )


def _sorted_counts(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((symbol, n) for symbol, n in counter.items() if n > 0))


def compute_balance(
    reactant_counts: Iterable[Counter[str]],
    reactant_charge: int,
    products: Iterable[Chem.Mol],
    template_id: str,
) -> Balance:
    """Balance of consumed reactants (pre-counted) against sanitized product molecules."""
    consumed: Counter[str] = Counter()
    for counts in reactant_counts:
        consumed.update(counts)
    product_list = list(products)
    produced: Counter[str] = Counter()
    for mol in product_list:
        produced.update(atom_counts(mol))
    return Balance(
        missing=_sorted_counts(consumed - produced),
        extra=_sorted_counts(produced - consumed),
        charge_delta=net_charge(product_list) - reactant_charge,
        template_id=template_id,
    )
