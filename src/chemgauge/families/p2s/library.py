"""The functional-group library: terminal groups that can be masked and swapped in.

Groups are organised in *pools*: the same heavy-atom count and the same attachment class (the
element of the atom bonded to the scaffold, with the halogens as one class). Every candidate
of a task comes from the masked group's own pool, so the mask metadata (the masked heavy-atom
count) is true of every candidate and no candidate stands out by what it bonds to the scaffold
with (a nitrogen-oxygen or sulfur-sulfur bond, say). Pools hold a multiple of four groups
where the chemistry allows, so four-candidate tasks use every member; pools smaller than the
task cannot be masked.
"""

from __future__ import annotations

import functools

from chemgauge.chem.fragments import attachment_element, canonical_fragment, fragment_heavy_atoms

__all__ = [
    "GROUP_LIBRARY",
    "LIBRARY_VERSION",
    "attachment_class",
    "canonical_library",
    "pools",
    "size_classes",
]

LIBRARY_VERSION = 2
HALOGENS = frozenset({"F", "Cl", "Br", "I"})

# Written attached at [*:1]; the comment names the group.
GROUP_LIBRARY: tuple[str, ...] = (
    # one heavy atom
    "[*:1]F",
    "[*:1]Cl",
    "[*:1]Br",
    "[*:1]I",
    "[*:1]O",  # hydroxy
    "[*:1]N",  # amino
    "[*:1]C",  # methyl
    "[*:1]S",  # sulfanyl
    # two heavy atoms
    "[*:1]C#N",  # cyano
    "[*:1]OC",  # methoxy
    "[*:1]C=O",  # formyl
    "[*:1]NC",  # methylamino
    "[*:1]CO",  # hydroxymethyl
    "[*:1]C=C",  # vinyl
    "[*:1]C#C",  # ethynyl
    "[*:1]CC",  # ethyl
    "[*:1]SC",  # methylsulfanyl
    "[*:1]CN",  # aminomethyl
    "[*:1]CCl",  # chloromethyl
    # three heavy atoms
    "[*:1][N+](=O)[O-]",  # nitro
    "[*:1]C(=O)O",  # carboxy
    "[*:1]C(N)=O",  # carbamoyl
    "[*:1]C(C)=O",  # acetyl
    "[*:1]N(C)C",  # dimethylamino
    "[*:1]C(C)C",  # isopropyl
    "[*:1]OCC",  # ethoxy
    "[*:1]NC=O",  # formamido
    "[*:1]CC#N",  # cyanomethyl
    "[*:1]CCC",  # propyl
    "[*:1]CCO",  # 2-hydroxyethyl
    "[*:1]C(=O)Cl",  # chlorocarbonyl
    "[*:1]NCC",  # ethylamino
    # four heavy atoms
    "[*:1]C(F)(F)F",  # trifluoromethyl
    "[*:1]C(=O)OC",  # methoxycarbonyl
    "[*:1]NC(C)=O",  # acetamido
    "[*:1]C(C)(C)C",  # tert-butyl
    "[*:1]S(C)(=O)=O",  # methylsulfonyl
    "[*:1]S(N)(=O)=O",  # sulfamoyl
    "[*:1]OC(C)=O",  # acetoxy
    "[*:1]C(=O)NC",  # methylcarbamoyl
    "[*:1]CCCC",  # butyl
    "[*:1]CC(C)C",  # isobutyl
    "[*:1]CC(=O)O",  # carboxymethyl
    "[*:1]CC(N)=O",  # carbamoylmethyl
    "[*:1]NC(N)=O",  # ureido
    "[*:1]N(C)C=O",  # N-methylformamido
    "[*:1]NC(C)C",  # isopropylamino
    "[*:1]S(=O)(=O)O",  # sulfo
    "[*:1]SC(C)C",  # isopropylsulfanyl
    "[*:1]OC(F)F",  # difluoromethoxy
    "[*:1]OC(C)C",  # isopropoxy
    "[*:1]OCCC",  # propoxy
)


@functools.cache
def canonical_library() -> tuple[tuple[str, int], ...]:
    """(canonical group SMILES, heavy-atom count) for every library group, in library order."""
    return tuple((canonical_fragment(g), fragment_heavy_atoms(g)) for g in GROUP_LIBRARY)


@functools.cache
def size_classes() -> dict[int, tuple[str, ...]]:
    """Canonical groups keyed by heavy-atom count."""
    classes: dict[int, list[str]] = {}
    for key, heavy in canonical_library():
        classes.setdefault(heavy, []).append(key)
    return {size: tuple(keys) for size, keys in classes.items()}


def attachment_class(group: str) -> str:
    """The element bonded to the scaffold, with the four halogens as one class."""
    element = attachment_element(group)
    return "halogen" if element in HALOGENS else element


@functools.cache
def pools() -> dict[tuple[int, str], tuple[str, ...]]:
    """Canonical groups keyed by (heavy-atom count, attachment class), in library order."""
    found: dict[tuple[int, str], list[str]] = {}
    for key, heavy in canonical_library():
        found.setdefault((heavy, attachment_class(key)), []).append(key)
    return {pool: tuple(keys) for pool, keys in found.items()}
