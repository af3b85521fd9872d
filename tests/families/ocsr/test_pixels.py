"""The recognizer sees pixels only: every non-pixel PNG chunk (and JPEG EXIF/XMP/comments)
is stripped from the copy it receives, import records what it found, and an image whose
metadata decodes to a molecule (RDKit draws PNGs with the molecule in them by default) is
flagged as leaked on the manifest and on every row of its run."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from rdkit import Chem
from rdkit.Chem.Draw import rdMolDraw2D
from typer.testing import CliRunner

from chemgauge.chem import parse_smiles
from chemgauge.cli.app import app
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.pixels import pixels_only

TOLUENE = "Cc1ccccc1"


def rdkit_png(smiles: str) -> bytes:
    """A PNG as RDKit draws it by default: the molecule rides in zTXt chunks."""
    drawer = rdMolDraw2D.MolDraw2DCairo(300, 200)
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, parse_smiles(smiles))
    drawer.FinishDrawing()
    data = drawer.GetDrawingText()
    assert Chem.MolToSmiles(Chem.MolFromPNGString(data)) == TOLUENE  # the leak is real
    return bytes(data)


def chunk_types(data: bytes) -> list[str]:
    at, found = 8, []
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        found.append(data[at + 4 : at + 8].decode())
        at += 12 + size
    return found


def pixels(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGBA").tobytes()


def test_png_metadata_is_stripped_and_the_molecule_flagged() -> None:
    data = rdkit_png(TOLUENE)
    copy = pixels_only(data, ".png")
    assert set(chunk_types(copy.data)) <= {"IHDR", "PLTE", "tRNS", "IDAT", "IEND"}
    assert Chem.MolFromPNGString(copy.data) is None
    assert pixels(copy.data) == pixels(data)  # the same pixels, nothing else
    assert "zTXt" in copy.stripped and copy.molecule == TOLUENE


def test_a_clean_png_is_passed_on_byte_for_byte() -> None:
    buffer = io.BytesIO()
    Image.new("L", (20, 10), 255).save(buffer, format="PNG")
    copy = pixels_only(buffer.getvalue(), ".png")
    assert copy.data == buffer.getvalue() and copy.stripped == () and copy.molecule is None


def test_jpeg_exif_xmp_and_comments_are_stripped() -> None:
    buffer = io.BytesIO()
    exif = Image.Exif()
    exif[0x010E] = "InChI=1S/C7H8/c1-7-5-3-2-4-6-7/h2-6H,1H3"  # ImageDescription
    Image.new("RGB", (16, 16), (255, 255, 255)).save(
        buffer, format="JPEG", exif=exif, comment=b"CCO", quality=95
    )
    data = buffer.getvalue()
    copy = pixels_only(data, ".jpg")
    assert b"InChI=" not in copy.data and b"Exif" not in copy.data
    assert {"APP1", "COM"} <= set(copy.stripped)
    assert copy.molecule == TOLUENE
    assert pixels(copy.data) == pixels(data)


def _import(tmp_path: Path, data: bytes) -> dict[str, Any]:
    images, refs = tmp_path / "img", tmp_path / "ref"
    images.mkdir()
    refs.mkdir()
    (images / "toluene.png").write_bytes(data)
    (refs / "toluene.mol").write_text(Chem.MolToMolBlock(parse_smiles(TOLUENE)))
    result = CliRunner().invoke(
        app,
        [
            "ocsr", "import", "--images", str(images), "--references", str(refs),
            "--out", str(tmp_path / "manifest.json"), "--name", "t", "--attribution", "a",
            "--licence", "MIT",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "metadata" in result.output and "holds a molecule" in result.output
    return json.loads((tmp_path / "manifest.json").read_text())


def test_import_records_the_leak_and_the_run_sends_pixels_only(tmp_path: Path) -> None:
    manifest = _import(tmp_path, rdkit_png(TOLUENE))
    recorded = manifest["cases"][0]["image_metadata"]
    assert recorded["molecule"] == TOLUENE and "zTXt" in recorded["stripped"]
    received: list[bytes] = []

    def recognize(image: Path) -> str:
        received.append(image.read_bytes())
        return "CCO" if Chem.MolFromPNGString(image.read_bytes()) is None else TOLUENE

    RECOGNIZERS.register("peeker", recognize, replace=True)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "ocsr", "run", "--manifest", str(tmp_path / "manifest.json"), "--model", "python",
            "--callable", "peeker", "-o", str(out), "--run", "--no-html",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(received) == 1 and Chem.MolFromPNGString(received[0]) is None
    row = json.loads((out / "scored.jsonl").read_text().splitlines()[0])
    assert row["image_input"]["metadata_molecule"] == TOLUENE
    assert "zTXt" in row["image_input"]["metadata_stripped"]
    assert row["identity"]["exact"] == "mismatch"  # the peeker could not read the answer
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["image_inputs"]["attempts_with_metadata_molecule"] == 1
    assert "metadata" in result.output


@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_garbage_is_never_passed_on(suffix: str) -> None:
    from chemgauge.errors import ImageRefusedError

    with pytest.raises(ImageRefusedError):
        pixels_only(b"\x89PNG\r\n\x1a\nnot chunks at all", suffix)
