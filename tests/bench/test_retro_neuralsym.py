"""bench/retro_neuralsym.py: the re-implementation's test labels are read row for row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.conftest import shared_file

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import retro_neuralsym  # noqa: E402


def _copy_head(tmp_path: Path, rows: int) -> Path:
    csv_lines = shared_file("neuralsym/test.csv").read_text().splitlines(keepends=True)
    label_lines = shared_file("neuralsym/labels_test.txt").read_text().splitlines(keepends=True)
    (tmp_path / "test.csv").write_text("".join(csv_lines[: rows + 1]))
    (tmp_path / "labels_test.txt").write_text("".join(label_lines[:rows]))
    return tmp_path


def test_shared_labels_align_with_the_test_rows() -> None:
    products, labels = retro_neuralsym.read_reimpl_test(shared_file("neuralsym/test.csv").parent)
    assert len(products) == len(labels) == 5005
    # the "no training template" label is one past the last of the 10,198 templates
    assert max(labels) == 10198 and labels.count(10198) == 839


def test_a_shifted_label_file_is_refused_naming_the_line(tmp_path: Path) -> None:
    folder = _copy_head(tmp_path, 6)
    lines = (folder / "labels_test.txt").read_text().splitlines()
    assert lines[1] != lines[2], "the first rows carry different templates"
    (folder / "labels_test.txt").write_text("\n".join([lines[0], *lines[2:], lines[1]]) + "\n")
    with pytest.raises(SystemExit, match=r"labels_test\.txt:2: label .* test\.csv row 2"):
        retro_neuralsym.read_reimpl_test(folder)
    (folder / "labels_test.txt").write_text("\n".join(lines[:5]) + "\n")
    with pytest.raises(SystemExit, match=r"5 labels for 6 test\.csv rows"):
        retro_neuralsym.read_reimpl_test(folder)
