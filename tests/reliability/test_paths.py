"""`confined_path`: manifest and data paths cannot leave their root folder."""

from __future__ import annotations

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
