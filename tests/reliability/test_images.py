"""Decompression bombs and absurd resolutions are refused from the header, before decoding.

The bomb is real: a valid 1-bit PNG of 100,000 x 100,000 pixels whose complete pixel stream
fits in 1.2 MB (decoding it would take 1.25 GB packed, 10 GB as Pillow holds it). It is
refused by :func:`read_image_header`, recorded ``not_run`` by an OCSR run, never handed to
the recognizer, not embedded in the HTML report, and recorded by the image-set import (the
run then records it ``not_run``).
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from PIL import Image
from tests.reliability.family_readers import (
    ETHANOL_MOLFILE,
    hostile_images,
    patched_image,
    png_bomb,
    png_bytes,
)

from chemgauge.errors import ConfigError, ImageRefusedError, InputFileError
from chemgauge.eval.images import ImageLimits, read_image_header
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.external import import_image_set
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.ocsr.page import write_html
from chemgauge.families.ocsr.report import write_report
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.scoring import POLICIES

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return png_bomb()


def test_the_bomb_is_a_complete_valid_png() -> None:
    # The same construction at a decodable size decodes to every pixel.
    small = Image.open(io.BytesIO(png_bomb(800, 1000)))
    small.load()
    assert (small.size, small.mode, small.getextrema()) == ((800, 1000), "1", (0, 0))


def test_bomb_is_refused_from_its_header(tmp_path: Path, bomb: bytes) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb)
    assert len(bomb) < 2_000_000
    with pytest.raises(ImageRefusedError) as info:
        read_image_header(path)
    assert str(path) in str(info.value)
    assert "declares 100000 x 100000 pixels (10,000,000,000)" in info.value.reason
    assert "refused before decoding" in info.value.reason
    assert str(path) not in info.value.reason  # rows carry the reason without a path


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("huge.jpg", patched_image("JPEG", (65_535, 65_535)), "declares 65535 x 65535"),
        (
            "huge.bmp",
            patched_image("BMP", (8_000, 8_000)),
            "declares 8000 x 8000",
        ),  # under Pillow's own limit
        (
            "huge.gif",
            patched_image("GIF", (65_535, 65_535)),
            "decompression bomb",
        ),  # over it: Pillow's error
        ("text.png", b"not an image at all\n", "not an image format"),
        ("truncated.png", png_bytes(20, 10)[:20], "not a readable image"),
    ],
)
def test_absurd_or_unreadable_images_are_refused_without_global_changes(
    tmp_path: Path, name: str, data: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    pillow_limit = Image.MAX_IMAGE_PIXELS
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ImageRefusedError, match=expected):
            read_image_header(path)
    assert pillow_limit == Image.MAX_IMAGE_PIXELS  # no global change
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]


def test_every_hostile_image_is_refused(tmp_path: Path) -> None:
    for name, data in hostile_images().items():
        path = tmp_path / f"{name}.img"
        path.write_bytes(data)
        with pytest.raises(ImageRefusedError):
            read_image_header(path)


def test_limits_are_explicit_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(png_bytes(40, 30))
    header = read_image_header(path)
    assert (header.format, header.width, header.height, header.pixels) == ("PNG", 40, 30, 1200)
    with pytest.raises(ImageRefusedError, match="more than the limit of 1,000"):
        read_image_header(path, ImageLimits(max_pixels=1000))
    with pytest.raises(ImageRefusedError, match="bytes, more than the limit of 10"):
        read_image_header(path, ImageLimits(max_bytes=10))
    with pytest.raises(ImageRefusedError, match="found a directory"):
        read_image_header(tmp_path)
    with pytest.raises(ImageRefusedError, match="not found"):
        read_image_header(tmp_path / "missing.png")
    with pytest.raises(ConfigError):
        ImageLimits(max_pixels=0)


def _manifest(folder: Path, images: dict[str, bytes]) -> Path:
    (folder / "images").mkdir(parents=True)
    (folder / "ethanol.mol").write_text(ETHANOL_MOLFILE)
    cases = []
    for case_id, data in images.items():
        (folder / "images" / f"{case_id}.png").write_bytes(data)
        cases.append(
            {
                "id": case_id,
                "image": f"images/{case_id}.png",
                "sha256": hashlib.sha256(data).hexdigest(),
                "width": 100_000 if case_id == "bomb" else 24,
                "height": 100_000 if case_id == "bomb" else 16,
                "transformation": {"kind": "original"},
                "attribution": "test",
                "licence": "CC0",
                "reference": {"molfile": "ethanol.mol", "smiles": "CCO"},
            }
        )
    path = folder / "manifest.json"
    path.write_bytes(orjson.dumps({"manifest_version": 1, "name": "bombs", "cases": cases}))
    return path


def test_an_ocsr_run_records_the_bomb_and_never_hands_it_on(tmp_path: Path, bomb: bytes) -> None:
    path = _manifest(
        tmp_path / "data",
        {"bomb": bomb, "text": b"not an image\n", "ok": png_bytes(24, 16)},
    )
    manifest = load_manifest(path)
    seen: list[str] = []

    def recognize(image: Path) -> str:
        seen.append(hashlib.sha256(image.read_bytes()).hexdigest())
        return "CCO"

    RECOGNIZERS.register("test_bomb_guard", recognize, replace=True)
    out = tmp_path / "out"
    rows = run_attempts(
        manifest, PythonRecognizer("test_bomb_guard"), RunConfig(max_requests=1), out
    )
    by_case = {row["case_id"]: row for row in rows}
    assert seen == [manifest.by_id["ok"].sha256]  # the only image the recognizer saw
    assert by_case["ok"]["status"] == "completed"  # refusals spent no request
    assert by_case["bomb"]["status"] == by_case["text"]["status"] == "not_run"
    assert by_case["bomb"]["not_run_reason"].startswith(
        "image refused: image declares 100000 x 100000 pixels"
    )
    assert "not an image format" in by_case["text"]["not_run_reason"]
    assert str(tmp_path) not in json.dumps(rows)
    scored = score_attempts(manifest, rows)
    report = write_report(out, manifest, scored, POLICIES, {"test": True}, page=write_html)
    assert report["metrics"]["finite_reference"]["not_run"] == 2
    page = (out / "report.html").read_text()
    assert "image not shown: image declares 100000 x 100000 pixels" in page
    assert page.count("data:image/png;base64,") == 1


def test_import_records_a_bomb_like_the_run_does(tmp_path: Path, bomb: bytes) -> None:
    # Before: one over-limit image aborted the whole import (issue 23 item 10).
    images, references = tmp_path / "images", tmp_path / "refs"
    images.mkdir()
    references.mkdir()
    (images / "bomb.png").write_bytes(bomb)
    (images / "ok.png").write_bytes(png_bytes(24, 16))
    (references / "bomb.mol").write_text(ETHANOL_MOLFILE)
    manifest = import_image_set(
        images, references, tmp_path / "m.json", name="x", attribution="a", licence="l"
    )
    bomb_case = manifest.by_id["bomb"]
    assert (bomb_case.width, bomb_case.height) == (100_000, 100_000)  # header only
    seen: list[str] = []

    def recognize(image: Path) -> str:
        seen.append(hashlib.sha256(image.read_bytes()).hexdigest())
        return "CCO"

    RECOGNIZERS.register("test_import_bomb", recognize, replace=True)
    rows = run_attempts(
        load_manifest(tmp_path / "m.json"),
        PythonRecognizer("test_import_bomb"),
        RunConfig(),
        tmp_path / "out",
    )
    by_case = {row["case_id"]: row for row in rows}
    assert by_case["bomb"]["status"] == "not_run"
    assert "image declares 100000 x 100000" in by_case["bomb"]["not_run_reason"]
    assert seen == [manifest.by_id["ok"].sha256]


def test_import_stops_on_an_image_path_that_is_no_file(tmp_path: Path) -> None:
    images, references = tmp_path / "images", tmp_path / "refs"
    (images / "dir.png").mkdir(parents=True)
    references.mkdir()
    with pytest.raises(InputFileError, match=r"dir.png: expected an image file, found a dir"):
        import_image_set(
            images, references, tmp_path / "m.json", name="x", attribution="a", licence="l"
        )
    assert not (tmp_path / "m.json").exists()


_CHILD = """
import hashlib, json, resource, sys
from pathlib import Path
from PIL import Image
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer

# A recognizer with no protection of its own (as OSRA has none): it decodes whatever it gets.
Image.MAX_IMAGE_PIXELS = None
def naive(image):
    with Image.open(image) as opened:
        opened.load()
    return "CCO"
RECOGNIZERS.register("naive", naive)
manifest = load_manifest(sys.argv[1])
recognizer = PythonRecognizer("naive")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = run_attempts(manifest, recognizer, RunConfig(), sys.argv[2])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before_kb": before, "after_kb": after, "calls": recognizer.calls,
                  "statuses": {r["case_id"]: r["status"] for r in rows}}))
"""


def test_refusal_keeps_memory_bounded(tmp_path: Path, bomb: bytes) -> None:
    path = _manifest(tmp_path / "data", {"bomb": bomb, "ok": png_bytes(24, 16)})
    # Address space capped at 4 GB: were the guard to fail, decoding the bomb (10 GB) would
    # fail inside this child instead of pressing the machine.
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
    done = subprocess.run(
        [sys.executable, "-c", limit + _CHILD, str(path), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert result["statuses"] == {"bomb": "not_run", "ok": "completed"}
    assert result["calls"] == 1
    assert result["after_kb"] - result["before_kb"] < 50 * 1024  # < 50 MB over the run
