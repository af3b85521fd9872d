"""The foundation commands through the real Typer app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import require_module
from typer.testing import CliRunner

from chemgauge.cli import app

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("chemgauge ")


def test_matchers_table_and_known_pairs() -> None:
    result = runner.invoke(app, ["matchers", "--known"])
    assert result.exit_code == 0
    assert "strict_key" in result.output and "parity" in result.output


def test_canon_keeps_one_line_per_input_and_reports_invalid(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("OCC ethanol\nC1CC broken\n\nc1ccccc1\n")
    out = tmp_path / "out.txt"
    result = runner.invoke(app, ["canon", str(source), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0
    assert out.read_text() == "CCO\tethanol\n\tbroken\n\nc1ccccc1\n"
    assert f"{source}:2: SMILES syntax error" in result.output


def test_canon_policy_and_jobs_agree(tmp_path: Path, nci_smiles: list[str]) -> None:
    source = tmp_path / "nci.smi"
    source.write_text("\n".join(nci_smiles[:2500]) + "\n")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.txt"
        args = ["canon", str(source), "-p", "stereo_ignored", "-j", jobs, "-o", str(out), "-q"]
        assert runner.invoke(app, args).exit_code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_user_errors_exit_2_or_3_without_traceback(tmp_path: Path) -> None:
    # 3: a missing input file; 2: any other usage or input error
    for args, status in (
        (["canon", str(tmp_path / "missing.smi")], 3),
        (["canon", "-p", "exakt", "-"], 2),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "chemgauge", *args],
            capture_output=True,
            text=True,
            input="",
            check=False,
        )
        assert proc.returncode == status, proc.stderr
        assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert "did you mean 'exact'" in proc.stderr.lower()


def test_strict_stops_at_first_invalid_line(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CCO\nC1CC\n")
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "canon", str(source), "--strict"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "in.smi, line 2" in proc.stderr and "C1CC" in proc.stderr


@pytest.mark.external
def test_canon_bytes_identical_across_executors(tmp_path: Path, nci_smiles: list[str]) -> None:
    require_module("ray")
    source = tmp_path / "nci.smi"
    source.write_text("\n".join(nci_smiles[:1500]) + "\n")
    outputs = []
    for flags in (
        ["--executor", "serial"],
        ["--executor", "local", "-j", "2"],
        ["--executor", "ray", "-j", "2", "--ray-address", "local"],
    ):
        out = tmp_path / f"out-{flags[1]}.txt"
        args = ["canon", str(source), "-o", str(out), "-q", "--chunk-size", "200", *flags]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
