"""A property that is not a folder, or a view without its prediction file, stops with a message
naming it instead of leaving that property (and its use claim) off with exit 0."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.families.p2s.embedded import default_data

runner = CliRunner()


def _chemgauge(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, so its exit status and one-line error are what a user sees."""
    cmd = [sys.executable, "-m", "chemgauge", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(default_data(), copy)
    return copy


@pytest.mark.parametrize("kind", ["a file", "a broken symbolic link"])
def test_a_property_that_is_not_a_folder_is_named(data: Path, kind: str) -> None:
    shutil.rmtree(data / "gap")
    if kind == "a file":
        (data / "gap").write_text("x\n")
    else:
        (data / "gap").symlink_to(data / "nowhere")
    done = _chemgauge("p2s", "tasks", str(data), "--no-chem")
    assert done.returncode == 2
    assert f"property directory 'gap' is {kind}, not a folder" in done.stderr


@pytest.fixture
def run(data: Path, tmp_path: Path) -> Path:
    out = tmp_path / "runs"
    done = runner.invoke(app, ["p2s", "run", str(data), "-m", "random", "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    return out / "random"


def test_a_listed_view_without_its_file_stops_scoring(data: Path, run: Path) -> None:
    (run / "gap" / "shuffled.jsonl").unlink()
    done = _chemgauge("p2s", "score", "--data", str(data), "--out", str(run), "-q")
    assert done.returncode == 2
    assert "gap/shuffled.jsonl" in done.stderr and "run manifest lists it" in done.stderr


def test_without_a_manifest_a_property_needs_all_its_views(data: Path, run: Path) -> None:
    (run / "run_manifest.json").unlink()
    done = _chemgauge("p2s", "score", "--data", str(data), "--out", str(run), "-q")
    assert done.returncode == 0, done.stderr  # every view there: scored as before
    (run / "dipole" / "counterfactual.jsonl").unlink()
    done = _chemgauge("p2s", "score", "--data", str(data), "--out", str(run), "-q")
    assert done.returncode == 2
    assert "dipole/counterfactual.jsonl" in done.stderr and "other views" in done.stderr
