"""Readers of the forward corpus, retro data files and OCSR manifests, under the same rule.

Each ``read`` loads a file the way the CLI would and checks the counting invariant where the
reader counts lines: every non-blank data line is accepted or rejected with a reason. OCSR
manifests are one JSON document (no lines to count): they load whole or are refused. Files
a reader needs beside the hostile one (images, molfiles, a rule file) are written next to it.
"""

from __future__ import annotations

import functools
import shutil
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import orjson
from tests.reliability.readers import CountingError, Reader, _check, _data_lines, landed_readers

from chemgauge.errors import InputFileError
from chemgauge.eval.provenance import sha256_bytes
from chemgauge.families.forward.corpus import load_corpus
from chemgauge.families.forward.sources import load_rules_for_source
from chemgauge.families.ocsr.external import build_import
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.ocsr.runner import read_attempts
from chemgauge.families.retro.data import DataFile, load_targets
from chemgauge.families.retro.engine.predictions import PredictionsFileModel

__all__ = [
    "all_readers",
    "family_readers",
    "hostile_images",
    "patched_image",
    "png_bomb",
    "png_bytes",
]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(width: int, height: int, *, bit_depth: int = 8, idat: bytes | None = None) -> bytes:
    """A greyscale PNG built byte by byte (deterministic; no Pillow).

    With ``idat`` given, that is the compressed pixel stream as is (a bomb can declare any
    size and carry a short or a full stream); otherwise white pixels are compressed here.
    """
    header = struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)
    if idat is None:
        row = b"\x00" + b"\xff" * ((width * bit_depth + 7) // 8)
        idat = zlib.compress(row * height, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def png_bomb(width: int = 100_000, height: int = 100_000, rows_per_piece: int = 100) -> bytes:
    """A real decompression bomb: a valid 1-bit PNG of ``width`` x ``height`` black pixels.

    The pixel stream is complete (it decodes to every row), yet small on disk: one piece of
    ``rows_per_piece`` zero rows is deflated once, ending in a full flush (no reference
    crosses it, and it ends on a byte boundary), then repeated. 100,000 x 100,000 is 1.2 MB.
    """
    if height % rows_per_piece:
        raise ValueError("height must be a multiple of rows_per_piece")
    row = 1 + (width + 7) // 8  # filter byte + packed bits, all zero
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = deflate.compress(bytes(row * rows_per_piece)) + deflate.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)  # empty last block
    adler = ((row * height) % 65521) << 16 | 1  # Adler-32 of n zero bytes
    stream = b"\x78\xda" + piece * (height // rows_per_piece) + final + struct.pack(">I", adler)
    return png_bytes(width, height, bit_depth=1, idat=stream)


def patched_image(fmt: str, size: tuple[int, int]) -> bytes:
    """A tiny Pillow-written JPEG, GIF or BMP whose header is patched to declare ``size``."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (8, 8)).save(buffer, fmt)
    data = bytearray(buffer.getvalue())
    width, height = size
    if fmt == "JPEG":
        sof = data.find(b"\xff\xc0")
        data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    elif fmt == "GIF":
        data[6:10] = struct.pack("<HH", width, height)
    else:  # BMP
        data[18:26] = struct.pack("<ii", width, height)
    return bytes(data)


def hostile_images() -> dict[str, bytes]:
    """Images no recognizer should be handed: bombs, absurd resolutions, non-images."""
    return {
        "png_bomb_100000x100000": png_bomb(),
        "png_header_only_100000x100000": png_bytes(100_000, 100_000, idat=zlib.compress(b"")),
        "jpeg_65535x65535": patched_image("JPEG", (65_535, 65_535)),
        "bmp_8000x8000": patched_image("BMP", (8_000, 8_000)),
        "gif_65535x65535": patched_image("GIF", (65_535, 65_535)),
        "truncated_png": png_bytes(20, 10)[:20],
        "text_named_png": b"not an image\n",
    }


# --- forward -------------------------------------------------------------------------------

FORWARD_CORPUS = (
    b'{"schema_version": 1, "reaction_id": "r1", "reactants": ["CC(=O)O", "NCc1ccccc1"], '
    b'"accepted_products": [["CC(=O)NCc1ccccc1"]], "reaction_class": "amide"}\n'
    b'{"schema_version": 1, "reaction_id": "r2", "reactants": ["CCO", "CC(=O)O"], '
    b'"accepted_products": [["CCOC(C)=O"]], "group_key": "g2"}\n'
    b'{"schema_version": 1, "reaction_id": "r3", "reactants": ["C1CC"], '
    b'"accepted_products": [["CC"]]}\n'
    b'{"schema_version": 2, "reaction_id": "r4", "reactants": ["C"], '
    b'"accepted_products": [["C"]]}\n'
)


def read_forward_corpus(path: Path) -> None:
    corpus = load_corpus(path)
    stats = corpus.stats
    counted = stats.records_accepted + sum(stats.counts.values())
    expected = _data_lines(path)
    if stats.lines_read - stats.blank_lines != expected or counted != expected:
        raise CountingError(
            f"{path}: {expected} data lines, {stats.lines_read - stats.blank_lines} read, "
            f"{counted} accounted ({stats.to_dict()})"
        )
    if any(not getattr(e, "reason", "x") for e in corpus.entries):
        raise CountingError(f"{path}: an input_invalid row without a reason")


RULES = b'{"template_id": "amide", "smirks": "[C:1](=[O:2])[OH].[N;H2:3]>>[C:1](=[O:2])[N:3]"}\n'
CORPUS_SHA = "0" * 64


def template_manifest() -> bytes:
    """A manifest that attests :data:`RULES` for a corpus hashing to :data:`CORPUS_SHA`."""
    from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION

    return orjson.dumps(
        {
            "manifest_schema_version": 1,
            "templates_sha256": sha256_bytes(RULES),
            "source_corpus_sha256": CORPUS_SHA,
            "split_protocol_version": SPLIT_PROTOCOL_VERSION,
            "included_split": "train",
        },
        option=orjson.OPT_INDENT_2,
    )


def read_manifest(path: Path) -> None:
    rules = path.parent / "attested_rules.jsonl"
    if not rules.exists():
        rules.write_bytes(RULES)
    load_rules_for_source("train-extracted", rules, path, CORPUS_SHA)


# --- retro ---------------------------------------------------------------------------------

RETRO_SMI = (
    b"CC(=O)O.CN>>CNC(C)=O\n"
    b"[CH3:1][C:2](=O)Cl.NCC>>CCNC(C)=O id-2\n"
    b"not a reaction\n"
    b"CCO.CC(=O)O>CC>CCOC(C)=O\n"
    b"C1CC>>CC\n"
)
RETRO_CSV = (
    b"id,class,reactants>reagents>production\n"
    b"a,1,CC(=O)O.CN>>CNC(C)=O\n"
    b'b,UNK,"CC(=O)Cl.NCC>>CCNC(C)=O"\n'
    b"c,2,not a reaction\n"
)
RETRO_JSONL = (
    b'{"id": "a", "reactants": [{"smiles": "CC(=O)O"}, {"smiles": "CN"}], '
    b'"products": [{"smiles": "CNC(C)=O"}]}\n'
    b'{"id": 2, "class": 3, "reactants": [{"smiles": "CCO"}], "products": [{"smiles": "CC"}], '
    b'"reagents": "O"}\n'
    b'{"reactants": [], "products": [{"smiles": "C"}]}\n'
)
RETRO_PREDICTIONS = (
    b'{"product": "CNC(C)=O", "predictions": ["CC(=O)O.CN", "CC(=O)Cl.CN", "C1CC"]}\n'
    b'{"product": "CCOC(C)=O", "predictions": []}\n'
    b'{"product": "C1CC", "predictions": ["CC"]}\n'
)


def retro_data_reader(fmt: str) -> Callable[[Path], None]:
    def read(path: Path) -> None:
        targets = load_targets(DataFile("test", fmt, path))
        assert targets.stats.accepted == len(targets.targets)
        if fmt != "csv":  # CSV: quoted fields may span lines
            _check(targets.stats, _data_lines(path), path)
        elif targets.stats.rejected and not all(d.reason for d in targets.stats.diagnostics):
            raise CountingError(f"{path}: a rejection without a reason")

    return read


def read_retro_predictions(path: Path) -> None:
    model = PredictionsFileModel(path, jobs=1)
    model.prepare()  # lines are keyed (and rejections counted) here
    _check(model.stats, _data_lines(path), path)


# --- ocsr ----------------------------------------------------------------------------------

ASSETS = "ocsr_assets"
ETHANOL_MOLFILE = (
    "\n     RDKit          2D\n\n  3  2  0  0  0  0  0  0  0  0999 V2000\n"
    "    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n"
    "    1.2990    0.7500    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n"
    "    2.5981    0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0\n"
    "  1  2  1  0\n  2  3  1  0\nM  END\n"
)


@functools.cache
def _image() -> bytes:
    return png_bytes(24, 16)


def ocsr_manifest() -> bytes:
    """A valid two-case manifest whose files live in :data:`ASSETS` beside it."""
    image = _image()
    common = {
        "sha256": sha256_bytes(image),
        "width": 24,
        "height": 16,
        "transformation": {"kind": "original"},
        "attribution": "test",
        "licence": "CC0",
    }
    cases = [
        {
            "id": "ethanol",
            "image": f"{ASSETS}/ethanol.png",
            "reference": {"molfile": f"{ASSETS}/ethanol.mol", "smiles": "CCO"},
            **common,
        },
        {
            "id": "blank",
            "image": f"{ASSETS}/ethanol.png",
            "no_reference_reason": "no structure drawn",
            **common,
        },
    ]
    body = {"manifest_version": 1, "name": "hostile", "cases": cases}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _ocsr_assets(folder: Path) -> Path:
    assets = folder / ASSETS
    if not assets.exists():
        assets.mkdir(parents=True)
        (assets / "ethanol.png").write_bytes(_image())
        (assets / "ethanol.mol").write_text(ETHANOL_MOLFILE)
    return assets


def read_ocsr_manifest(path: Path) -> None:
    _ocsr_assets(path.parent)
    load_manifest(path)


ATTEMPTS = (
    b'{"chemgauge_rows_journal":1,"config_sha256":"00"}\n'
    b'{"attempt_id":"ethanol#r1","case_id":"ethanol","not_run_reason":null,"plan_index":0,'
    b'"recognition":{"candidate_format":"smiles","candidate_text":"CCO","elapsed_seconds":0.1,'
    b'"message":"","status":"completed"},"repeat":1,"status":"completed","timeout_seconds":60}\n'
    b'{"attempt_id":"blank#r1","case_id":"blank","not_run_reason":"max_requests (1) reached",'
    b'"plan_index":1,"recognition":null,"repeat":1,"status":"not_run","timeout_seconds":null}\n'
)


def read_ocsr_attempts(path: Path) -> None:
    """``ocsr score``'s reading of an attempts journal against the hostile-test manifest."""
    manifest = path.parent / "attempts_manifest.json"
    if not manifest.exists():
        manifest.write_bytes(ocsr_manifest())
        _ocsr_assets(path.parent)
    rows = read_attempts(path, load_manifest(manifest, verify=False))
    expected = _data_lines(path) - (1 if b"chemgauge_rows_journal" in path.read_bytes() else 0)
    if len(rows) != expected:
        raise CountingError(f"{path}: {expected} rows but {len(rows)} read")


def ocsr_import_reader(role: str) -> Callable[[Path], None]:
    """Import an image set where the hostile file is the image (or the reference molfile)."""

    def read(path: Path) -> None:
        data = path.parent / f"data_{path.name}"
        if data.exists():
            shutil.rmtree(data)
        images, references = data / "images", data / "references"
        images.mkdir(parents=True)
        references.mkdir()
        (images / "ethanol.png").write_bytes(_image())
        (references / "ethanol.mol").write_text(ETHANOL_MOLFILE)
        target = (images / "case.png") if role == "image" else (references / "ethanol.mol")
        target.unlink(missing_ok=True)
        if path.is_dir():
            target.mkdir()
        elif path.exists():
            shutil.copyfile(path, target)
        if role == "reference" or path.exists():
            (references / "case.mol").write_text(ETHANOL_MOLFILE)
        imported = build_import(
            images, references, data / "manifest.json", name="x", attribution="a", licence="l"
        )
        load_manifest(data / "manifest.json")  # what import wrote reads back
        cases = imported.manifest.cases
        if role == "image" and path.exists() and len(cases) != 2:
            raise CountingError(f"{path}: {len(cases)} cases for 2 images")
        refused = imported.summary.refused_images.get("case")
        if refused is not None:
            # recorded as a case the run will not send (ocsr run: not_run), never decoded:
            # the import refused the image itself, so it counts as refused here
            raise InputFileError(f"image refused and recorded: {refused}", path=target)

    return read


def family_readers() -> list[Reader]:
    """Readers of the forward corpus, retro data files and OCSR manifests."""
    image, reference = ocsr_import_reader("image"), ocsr_import_reader("reference")
    return [
        Reader("forward", "corpus", FORWARD_CORPUS, ".jsonl", read_forward_corpus),
        Reader("forward", "template_manifest", template_manifest(), ".json", read_manifest),
        Reader("retro", "data_smi", RETRO_SMI, ".smi", retro_data_reader("smi")),
        Reader("retro", "data_csv", RETRO_CSV, ".csv", retro_data_reader("csv")),
        Reader("retro", "data_jsonl", RETRO_JSONL, ".jsonl", retro_data_reader("jsonl")),
        Reader("retro", "predictions", RETRO_PREDICTIONS, ".jsonl", read_retro_predictions),
        Reader("ocsr", "manifest", ocsr_manifest(), ".json", read_ocsr_manifest),
        Reader("ocsr", "attempts", ATTEMPTS, ".jsonl", read_ocsr_attempts),
        Reader("ocsr", "import_image", _image(), ".png", image, False),
        Reader("ocsr", "import_reference", ETHANOL_MOLFILE.encode(), ".mol", reference, False),
    ]  # fmt: skip


def all_readers(p2s_data: Path | None = None) -> list[Reader]:
    """Every landed reader: foundation, names, p2s, rule files, and the three families above."""
    return landed_readers(p2s_data) + family_readers()
