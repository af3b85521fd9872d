"""Inline SVG structure drawings for the HTML pages (RDKit's SVG drawer, via ``chem``).

Every drawing has the same box and the same bond length, so two molecules on a page are drawn
at one scale (a small molecule is not blown up to fill its box); only a molecule too big for
the box is shrunk to fit.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence

from rdkit import Chem

from chemgauge.chem import try_parse_smiles
from chemgauge.chem.render import highlighted_svg

__all__ = ["BOND_LENGTH", "HEIGHT", "WIDTH", "mol_svg", "structure_svg"]

WIDTH, HEIGHT = 260, 190
#: Bond length in drawing pixels: about ten bonds across the box.
BOND_LENGTH = 24.0


def _placeholder(text: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mol missing" viewBox="0 0 {WIDTH} '
        f'{HEIGHT}" role="img" aria-label="{html.escape(text)}"><rect width="{WIDTH}" '
        f'height="{HEIGHT}" fill="#f4f4f4"/><text x="{WIDTH // 2}" y="{HEIGHT // 2}" '
        f'text-anchor="middle" font-size="14" fill="#555">{html.escape(text)}</text></svg>'
    )


def mol_svg(mol: Chem.Mol, label: str, atoms: Sequence[int] = (), bonds: Sequence[int] = ()) -> str:
    """An ``<svg class="mol">`` element drawing a molecule, with atoms and bonds highlighted."""
    svg = highlighted_svg(mol, atoms, bonds, width=WIDTH, height=HEIGHT, bond_length=BOND_LENGTH)
    svg = svg[svg.index("<svg") :].replace("<!-- END OF HEADER -->\n", "")
    aria = html.escape(label, quote=True)
    # The viewBox keeps proportions; CSS sets the size so drawings shrink on narrow screens.
    return re.sub(
        r"width='\d+px' height='\d+px'",
        f"class='mol' role='img' aria-label='{aria}'",
        svg,
        count=1,
    )


@functools.lru_cache(maxsize=4096)
def structure_svg(smiles: str | None, label: str = "") -> str:
    """An ``<svg>`` element drawing a SMILES, or a labelled placeholder if there is none."""
    if not smiles:
        return _placeholder("no structure")
    mol = try_parse_smiles(smiles)
    if mol is None:
        return _placeholder("unparsable SMILES")
    return mol_svg(mol, label or smiles)
