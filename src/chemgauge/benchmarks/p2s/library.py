"""The functional-group library: terminal groups that can be masked and swapped in.

Groups are organised by heavy-atom count and every candidate of a task comes from the masked
group's own size class, so the mask metadata (which states the masked heavy-atom count) is
true of every candidate and tells nothing about which one is right.
"""

from __future__ import annotations

import functools

from chemgauge.chem.fragments import canonical_fragment, fragment_heavy_atoms

__all__ = ["GROUP_LIBRARY", "LIBRARY_VERSION", "canonical_library", "size_classes"]

LIBRARY_VERSION = 1

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
    # four heavy atoms
    "[*:1]C(F)(F)F",  # trifluoromethyl
    "[*:1]C(=O)OC",  # methoxycarbonyl
    "[*:1]NC(C)=O",  # acetamido
    "[*:1]C(C)(C)C",  # tert-butyl
    "[*:1]S(C)(=O)=O",  # methylsulfonyl
    "[*:1]S(N)(=O)=O",  # sulfamoyl
    "[*:1]OC(C)=O",  # acetoxy
    "[*:1]C(=O)NC",  # methylcarbamoyl
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
