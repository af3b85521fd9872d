"""Drawing structures: benchmark PNGs without embedded molecules, variants, highlighted SVGs.

RDKit embeds the molecule in PNG metadata by default, so ``Chem.MolFromPNGString`` would
hand a recognizer the answer. Benchmark images are drawn with ``includeMetadata=False`` and
re-encoded by Pillow from pixels only, which drops every text chunk; all variants
(resolution, contrast, crop) are pure pixel operations, so the same inputs give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageEnhance
from rdkit import Chem
from rdkit.Chem import rdAbbreviations
from rdkit.Chem.Draw import rdMolDraw2D

__all__ = [
    "TRANSFORMS",
    "embedded_molecule",
    "highlighted_svg",
    "png_size",
    "render_png",
    "transform_png",
]

TRANSFORMS = ("scale", "contrast", "crop", "resize")


def _pixels_only_png(image: Image.Image) -> bytes:
    """Encode pixels as PNG with no ancillary chunks (no text, no embedded molecule)."""
    clean = Image.frombytes(image.mode, image.size, image.tobytes())
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG", optimize=False, compress_level=9)
    return buffer.getvalue()


def _display_mol(mol: Chem.Mol) -> Chem.Mol:
    """Collapse superatom S-groups into their labels for drawing (the graph keeps members)."""
    if any(
        sg.HasProp("TYPE") and sg.GetProp("TYPE") == "SUP" for sg in Chem.GetMolSubstanceGroups(mol)
    ):
        return rdAbbreviations.CondenseAbbreviationSubstanceGroups(mol)
    return mol


def render_png(mol: Chem.Mol, width: int = 400, height: int = 300) -> bytes:
    """Draw a molecule as a greyscale PNG with no embedded molecule metadata."""
    drawer = rdMolDraw2D.MolDraw2DCairo(width, height)
    options = drawer.drawOptions()
    options.includeMetadata = False  # type: ignore[assignment]
    options.useBWAtomPalette()
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, _display_mol(mol))
    drawer.FinishDrawing()
    image = Image.open(io.BytesIO(drawer.GetDrawingText())).convert("L")
    return _pixels_only_png(image)


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of PNG bytes."""
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def embedded_molecule(data: bytes) -> Chem.Mol | None:
    """The molecule RDKit can read back out of PNG metadata, if any (must be ``None`` here)."""
    try:
        return Chem.MolFromPNGString(data)
    except Exception:
        return None


def transform_png(data: bytes, kind: str, params: Mapping[str, Any]) -> bytes:
    """A deterministic pixel variant of an image.

    Kinds: ``scale`` (``factor``, bilinear), ``resize`` (``width``, ``height``), ``contrast``
    (``factor`` < 1 lowers contrast towards mid grey), ``crop`` (``box`` as fractions
    ``[left, top, right, bottom]``).
    """
    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("L")
    if kind == "scale":
        factor = float(params["factor"])
        size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
        image = image.resize(size, Image.Resampling.BILINEAR)
    elif kind == "resize":
        size = (int(params["width"]), int(params["height"]))
        image = image.resize(size, Image.Resampling.BILINEAR)
    elif kind == "contrast":
        image = ImageEnhance.Contrast(image).enhance(float(params["factor"]))
    elif kind == "crop":
        left, top, right, bottom = (float(v) for v in params["box"])
        box = (
            round(left * image.width),
            round(top * image.height),
            round(right * image.width),
            round(bottom * image.height),
        )
        image = image.crop(box)
    else:
        raise ValueError(f"unknown image transformation {kind!r} (known: {', '.join(TRANSFORMS)})")
    return _pixels_only_png(image)


def highlighted_svg(
    mol: Chem.Mol,
    atoms: Sequence[int] = (),
    bonds: Sequence[int] = (),
    width: int = 320,
    height: int = 240,
    bond_length: float | None = None,
) -> str:
    """SVG drawing with the given atoms and bonds highlighted (for the HTML report).

    ``bond_length`` (pixels) draws every molecule that fits at one scale instead of filling
    the box; a molecule too big for it is shrunk to fit.
    """
    drawer = rdMolDraw2D.MolDraw2DSVG(width, height)
    options = drawer.drawOptions()
    options.includeMetadata = False  # type: ignore[assignment]
    if bond_length is not None:
        options.fixedBondLength = bond_length  # type: ignore[assignment]
    colour = (1.0, 0.55, 0.55)
    valid_atoms = sorted({a for a in atoms if 0 <= a < mol.GetNumAtoms()})
    valid_bonds = sorted({b for b in bonds if 0 <= b < mol.GetNumBonds()})
    rdMolDraw2D.PrepareAndDrawMolecule(
        drawer,
        mol,
        highlightAtoms=valid_atoms,
        highlightBonds=valid_bonds,
        highlightAtomColors=dict.fromkeys(valid_atoms, colour),
        highlightBondColors=dict.fromkeys(valid_bonds, colour),
    )
    drawer.FinishDrawing()
    return str(drawer.GetDrawingText())
