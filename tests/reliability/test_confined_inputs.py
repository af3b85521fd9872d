"""Diagnostics never quote a file outside the inputs: a task or label file that is a
symbolic link out of the p2s data folder is refused unread, naming the link, never its
contents (a link to /etc/passwd once had its first line printed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.families.p2s.test_scoring import hand_dataset
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import InputFileError
from chemgauge.families.p2s.taskfile import load_directory

SECRET = "root:x:0:0:a line that must never be printed"


@pytest.mark.parametrize("name", ["correct.jsonl", "shuffled.labels.jsonl"])
def test_a_task_file_linked_out_of_the_data_folder_is_refused_unread(
    tmp_path: Path, name: str
) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    outside = tmp_path / "elsewhere.txt"
    outside.write_text(SECRET + "\n")
    link = data / "dipole" / name
    link.unlink()
    link.symlink_to(outside)
    with pytest.raises(InputFileError, match="outside the data folder") as caught:
        load_directory(data, "dipole")
    assert SECRET not in str(caught.value) and name in str(caught.value)

    done = CliRunner().invoke(app, ["p2s", "tasks", str(data)])
    assert done.exit_code != 0
    assert SECRET not in done.output + str(done.exception)


def test_a_link_inside_the_data_folder_is_read(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    kept = data / "dipole" / "kept.jsonl"
    link = data / "dipole" / "correct.jsonl"
    link.rename(kept)
    link.symlink_to(kept)
    assert len(load_directory(data, "dipole")["correct"].tasks) == 3
