"""`confined_path`: manifest and data paths cannot leave their root folder."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemgauge.errors import ChemgaugeError, InputFileError
from chemgauge.eval.paths import confined_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "images").mkdir(parents=True)
    (data / "images" / "a.png").write_bytes(b"x")
    (tmp_path / "secret.txt").write_text("secret")
    return data


def test_plain_relative_paths_resolve_inside(root: Path) -> None:
    assert confined_path(root, "images/a.png") == (root / "images" / "a.png").resolve()
    assert confined_path(root, "./images/./a.png", must_exist=True).name == "a.png"
    assert confined_path(root, Path("images") / "new.png").parent == (root / "images").resolve()


@pytest.mark.parametrize(
    "bad",
    [
        "../secret.txt",
        "images/../../secret.txt",
        "images/..",
        "/etc/passwd",
        "//server/share/x",
        "C:\\Windows\\win.ini",
        "C:relative.txt",
        "\\\\server\\share\\x",
        "images\\..\\..\\secret.txt",
        "",
        "   ",
        "a\x00b",
    ],
)
def test_escapes_are_refused_with_the_value(root: Path, bad: str) -> None:
    with pytest.raises(InputFileError) as info:
        confined_path(root, bad)
    assert "root folder" in str(info.value) or "empty" in str(info.value)
    assert info.value.value == bad


def test_symlink_out_of_root_is_refused(root: Path) -> None:
    (root / "leak.txt").symlink_to(root.parent / "secret.txt")
    (root / "outdir").symlink_to(root.parent, target_is_directory=True)
    with pytest.raises(InputFileError, match="symlink"):
        confined_path(root, "leak.txt")
    with pytest.raises(InputFileError, match="symlink"):
        confined_path(root, "outdir/secret.txt")


def test_symlink_inside_root_is_allowed(root: Path) -> None:
    (root / "alias.png").symlink_to(root / "images" / "a.png")
    assert confined_path(root, "alias.png") == (root / "images" / "a.png").resolve()


def test_symlink_loop_is_an_error_not_a_crash(root: Path) -> None:
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(ChemgaugeError):
        confined_path(root, "loop/x")


def test_missing_file_and_missing_root(root: Path) -> None:
    with pytest.raises(InputFileError, match="not found"):
        confined_path(root, "images/none.png", must_exist=True)
    with pytest.raises(InputFileError, match="not accessible"):
        confined_path(root / "nowhere", "a.png")
    with pytest.raises(InputFileError, match="not a folder"):
        confined_path(root / "images" / "a.png", "x")


def test_root_that_is_itself_a_symlink(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "link_to_data"
    link.symlink_to(root, target_is_directory=True)
    assert confined_path(link, "images/a.png") == (root / "images" / "a.png").resolve()


_SEGMENTS = st.sampled_from(["images", "a.png", "..", ".", "", "x", "/", "\\", "~", "C:", "%2e%2e"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_SEGMENTS, min_size=1, max_size=8))
def test_any_accepted_path_is_inside_the_root(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    root = tmp_path_factory.getbasetemp() / "confined_root"
    root.mkdir(exist_ok=True)
    text = "/".join(parts)
    try:
        resolved = confined_path(root, text)
    except InputFileError:
        return
    assert resolved.is_relative_to(root.resolve())
    assert ".." not in Path(os.path.relpath(resolved, root.resolve())).parts


# --- OCSR manifests: every image and molfile path goes through confined_path -----------------


def _ocsr_manifest(folder: Path, image: str, molfile: str = "ethanol.mol") -> Path:
    from tests.reliability.family_readers import ETHANOL_MOLFILE, png_bytes

    folder.mkdir(parents=True, exist_ok=True)
    data = png_bytes(24, 16)
    (folder / "a.png").write_bytes(data)
    (folder / "ethanol.mol").write_text(ETHANOL_MOLFILE)
    (folder.parent / "outside.png").write_bytes(data)
    (folder.parent / "outside.mol").write_text(ETHANOL_MOLFILE)
    case = {
        "attribution": "t",
        "height": 16,
        "id": "c1",
        "image": image,
        "licence": "CC0",
        "reference": {"molfile": molfile, "smiles": "CCO"},
        "sha256": hashlib.sha256(data).hexdigest(),
        "transformation": {"kind": "original"},
        "width": 24,
    }
    path = folder / "manifest.json"
    text = json.dumps({"manifest_version": 1, "name": "paths", "cases": [case]}, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("image", "molfile", "field", "why"),
    [
        ("../outside.png", "ethanol.mol", "image", "'..' is not allowed"),
        ("a.png", "../outside.mol", "reference molfile", "'..' is not allowed"),
        ("/etc/passwd", "ethanol.mol", "image", "absolute paths are not allowed"),
        ("C:\\images\\a.png", "ethanol.mol", "image", "absolute paths are not allowed"),
        ("leak.png", "ethanol.mol", "image", "through a symlink"),
        ("a.png", "leak.mol", "reference molfile", "through a symlink"),
    ],
)
def test_ocsr_manifest_paths_cannot_leave_its_folder(
    tmp_path: Path, image: str, molfile: str, field: str, why: str
) -> None:
    from chemgauge.families.ocsr.manifest import load_manifest

    folder = tmp_path / "data"
    path = _ocsr_manifest(folder, image, molfile)
    (folder / "leak.png").symlink_to(tmp_path / "outside.png")
    (folder / "leak.mol").symlink_to(tmp_path / "outside.mol")
    value = image if field == "image" else molfile
    line = 1 + path.read_text().splitlines().index(
        next(t for t in path.read_text().splitlines() if json.dumps(value) in t)
    )
    for verify in (True, False):  # refused before any hash or molfile is read
        with pytest.raises(InputFileError) as info:
            load_manifest(path, verify=verify)
        message = str(info.value)
        assert message.startswith(f"{path}, line {line}: case 'c1': {field} path escapes")
        assert why in message and repr(value) in message


def test_ocsr_manifest_paths_inside_its_folder_load(tmp_path: Path) -> None:
    from chemgauge.families.ocsr.manifest import load_manifest

    folder = tmp_path / "data"
    path = _ocsr_manifest(folder, "./a.png")
    (folder / "alias.png").symlink_to(folder / "a.png")
    manifest = load_manifest(path)
    assert manifest.image_path(manifest.cases[0]) == (folder / "a.png").resolve()
    aliased = load_manifest(_ocsr_manifest(folder, "alias.png"))  # a symlink inside the folder
    assert aliased.image_path(aliased.cases[0]) == (folder / "a.png").resolve()
