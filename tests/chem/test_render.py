"""Rendering: no embedded molecule, deterministic variants."""

from __future__ import annotations

import pytest
from rdkit import Chem
from rdkit.Chem.Draw import rdMolDraw2D

from chemgauge.chem import parse_smiles
from chemgauge.chem.render import (
    embedded_molecule,
    highlighted_svg,
    png_size,
    render_png,
    transform_png,
)


def test_rdkit_default_png_leaks_the_molecule_but_ours_does_not() -> None:
    mol = parse_smiles("CC(=O)Oc1ccccc1C(=O)O")
    drawer = rdMolDraw2D.MolDraw2DCairo(300, 300)
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
    drawer.FinishDrawing()
    leaked = embedded_molecule(drawer.GetDrawingText())
    assert leaked is not None and Chem.MolToSmiles(leaked) == Chem.MolToSmiles(mol)
    ours = render_png(mol)
    assert embedded_molecule(ours) is None
    assert b"tEXt" not in ours and b"iTXt" not in ours and b"zTXt" not in ours
    assert b"rdkit" not in ours.lower()


def test_rendering_and_variants_are_deterministic() -> None:
    mol = parse_smiles("NCC(=O)N[C@@H](C)C(=O)O")
    png = render_png(mol, 400, 300)
    assert png == render_png(mol, 400, 300)
    assert png_size(png) == (400, 300)
    half = transform_png(png, "scale", {"factor": 0.5})
    assert png_size(half) == (200, 150)
    assert half == transform_png(png, "scale", {"factor": 0.5})
    assert png_size(transform_png(png, "resize", {"width": 11, "height": 5})) == (11, 5)
    assert png_size(transform_png(png, "crop", {"box": [0, 0, 0.5, 1]})) == (200, 300)
    low = transform_png(png, "contrast", {"factor": 0.25})
    assert png_size(low) == (400, 300) and low != png
    with pytest.raises(ValueError, match="unknown image transformation"):
        transform_png(png, "blur", {})


def test_highlighted_svg_marks_atoms() -> None:
    svg = highlighted_svg(parse_smiles("CCO"), [2], [1])
    assert svg.startswith("<?xml") and "#FF8C8C" in svg.upper()
