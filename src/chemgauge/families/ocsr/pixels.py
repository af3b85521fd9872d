"""The copy of an image a recognizer receives: its pixels and nothing else.

RDKit draws PNGs with the molecule in ``zTXt`` chunks by default (``Chem.MolFromPNGString``
reads it back), and photographs carry EXIF, XMP and comments: any of these can hand a
recognizer the answer. :func:`pixels_only` keeps the chunks that define pixels (PNG
``IHDR``, ``PLTE``, ``tRNS``, ``IDAT``, ``IEND``; JPEG frame, tables, scans and the ``APP0``
and ``APP14`` segments that say how to decode them), drops every other one, and says what it
dropped and whether the dropped metadata decodes to a molecule. A clean PNG is passed on byte
for byte. Any other format is re-encoded from its pixels as PNG. Nothing here decodes a PNG or
JPEG; the run checks every image's header against the image limits first.
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from dataclasses import dataclass

from PIL import Image
from rdkit import Chem

import chemgauge.chem  # noqa: F401  # silences RDKit's log
from chemgauge.errors import ImageRefusedError

__all__ = ["PNG_PIXEL_CHUNKS", "PixelCopy", "pixels_only"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The PNG chunks that define pixels; every other chunk is metadata and is dropped.
PNG_PIXEL_CHUNKS = frozenset({b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND"})
#: JPEG APPn segments kept: APP0 (JFIF) and APP14 (Adobe colour transform) decide decoding.
_JPEG_KEPT_APP = frozenset({0xE0, 0xEE})
_INCHI = re.compile(rb"InChI=1S?/[^\s\x00]+")


@dataclass(frozen=True)
class PixelCopy:
    """What the recognizer receives: the bytes and their suffix, the metadata chunks or
    segments dropped (by type, in file order), and the canonical SMILES of a molecule that
    metadata held (``None`` when it held none)."""

    data: bytes
    suffix: str
    stripped: tuple[str, ...] = ()
    molecule: str | None = None

    def record(self) -> dict[str, object]:
        """The row's ``image_input`` block."""
        import hashlib

        return {
            "sha256": hashlib.sha256(self.data).hexdigest(),
            "metadata_stripped": sorted(set(self.stripped)),
            "metadata_molecule": self.molecule,
        }


def _refused(reason: str) -> ImageRefusedError:
    return ImageRefusedError(reason, path="<image>")


def _canonical(mol: Chem.Mol | None) -> str | None:
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    return str(Chem.MolToSmiles(mol))


def _molecule_in(texts: list[bytes], png: bytes | None = None) -> str | None:
    """The molecule the metadata decodes to: RDKit's own PNG metadata, an InChI or a molfile."""
    if png is not None:
        try:
            found = _canonical(Chem.MolFromPNGString(png))
        except Exception:  # RDKit raises on metadata it cannot parse: not a molecule
            found = None
        if found:
            return found
    for text in texts:
        for inchi in _INCHI.findall(text):
            found = _canonical(Chem.MolFromInchi(inchi.decode("latin-1")))  # type: ignore[no-untyped-call]
            if found:
                return found
        if b"M  END" in text:
            found = _canonical(_molblock(text))
            if found:
                return found
    return None


def _molblock(text: bytes) -> Chem.Mol | None:
    """A molfile inside metadata text (its header is the three lines above the counts line)."""
    lines = text.decode("latin-1").splitlines()
    counts = next((i for i, line in enumerate(lines) if "V2000" in line or "V3000" in line), None)
    if counts is None:
        return None
    return Chem.MolFromMolBlock("\n".join(lines[max(0, counts - 3) :]))


def _png_text(kind: bytes, body: bytes) -> bytes:
    """The readable text of a PNG text chunk (zTXt and compressed iTXt inflated)."""
    try:
        if kind == b"zTXt":
            key, _, rest = body.partition(b"\x00")
            return key + b" " + zlib.decompressobj().decompress(rest[1:], 1 << 20)
        if kind == b"iTXt":
            key, _, rest = body.partition(b"\x00")
            compressed = rest[:1] == b"\x01"
            parts = rest[2:].split(b"\x00", 2)
            text = parts[2] if len(parts) == 3 else b""
            if compressed:
                text = zlib.decompressobj().decompress(text, 1 << 20)
            return key + b" " + text
    except zlib.error:
        return body
    return body


def _strip_png(data: bytes) -> PixelCopy:
    kept = bytearray(PNG_SIGNATURE)
    stripped: list[str] = []
    texts: list[bytes] = []
    at = len(PNG_SIGNATURE)
    ended = False
    while at < len(data) and not ended:
        if at + 12 > len(data):
            raise _refused("PNG ends inside a chunk header")
        (size,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        end = at + 12 + size
        if end > len(data) or not kind.isalpha():
            raise _refused("PNG chunk runs past the end of the file or has no type")
        if kind in PNG_PIXEL_CHUNKS:
            kept.extend(data[at:end])
            ended = kind == b"IEND"
        else:
            stripped.append(kind.decode("ascii"))
            texts.append(_png_text(kind, data[at + 8 : at + 8 + size]))
        at = end
    if not ended:
        raise _refused("PNG has no IEND chunk")
    if at < len(data):
        stripped.append("bytes after IEND")
        texts.append(data[at:])
    if not stripped:
        return PixelCopy(data, ".png")
    return PixelCopy(bytes(kept), ".png", tuple(stripped), _molecule_in(texts, data))


def _strip_jpeg(data: bytes) -> PixelCopy:
    kept = bytearray(data[:2])
    stripped: list[str] = []
    texts: list[bytes] = []
    at = 2
    while True:
        if at + 4 > len(data) or data[at] != 0xFF:
            raise _refused("JPEG segment structure is broken")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD9,):  # EOI before any scan
            kept.extend(data[at : at + 2])
            break
        (size,) = struct.unpack(">H", data[at + 2 : at + 4])
        end = at + 2 + size
        if end > len(data):
            raise _refused("JPEG segment runs past the end of the file")
        is_app = 0xE0 <= marker <= 0xEF
        if (is_app and marker not in _JPEG_KEPT_APP) or marker == 0xFE:
            stripped.append("COM" if marker == 0xFE else f"APP{marker - 0xE0}")
            texts.append(data[at + 4 : end])
        else:
            kept.extend(data[at:end])
        at = end
        if marker == 0xDA:  # start of scan: entropy-coded data to the end, kept as is
            kept.extend(data[at:])
            break
    if not stripped:
        return PixelCopy(data, ".jpg")
    return PixelCopy(bytes(kept), ".jpg", tuple(stripped), _molecule_in(texts))


def _reencode(data: bytes) -> PixelCopy:
    """Any other format: its first frame's pixels as a PNG (metadata cannot survive)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            fmt = str(image.format)
            texts = [str(v).encode("utf-8", "replace") for v in image.info.values()]
            clean = Image.frombytes(image.mode, image.size, image.tobytes())
    except Exception as exc:  # hostile bytes may raise anything
        raise _refused(f"not a readable image ({type(exc).__name__})") from None
    buffer = io.BytesIO()
    try:
        clean.save(buffer, format="PNG")
    except OSError:
        clean.convert("RGBA").save(buffer, format="PNG")
    return PixelCopy(buffer.getvalue(), ".png", (f"{fmt} re-encoded as PNG",), _molecule_in(texts))


def pixels_only(data: bytes, suffix: str = "") -> PixelCopy:
    """The pixels-only copy of an image's bytes (format told by its magic bytes, not
    ``suffix``); raises :class:`ImageRefusedError` when the structure cannot be read."""
    if data.startswith(PNG_SIGNATURE):
        return _strip_png(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _strip_jpeg(data)
    return _reencode(data)
