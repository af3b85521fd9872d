"""One table of exit statuses for every command, and no traceback on any user-fixable path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chemgauge", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def test_help_documents_the_exit_statuses() -> None:
    done = _run(["--help"])
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for fragment in ("Exit status: 0 ok", "1 a check failed", "3 a missing input"):
        assert fragment in text


def test_usage_errors_exit_2_without_traceback() -> None:
    for args in (["canon", "--no-such-option"], ["forward", "benchmark", "--jobs", "x"], ["nope"]):
        done = _run(args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1, (args, done.stderr)  # one line, as every other error
        assert lines[0].startswith("error: python -m chemgauge") and "-h'" in lines[0], lines


def test_a_usage_error_names_the_command_and_the_option() -> None:
    done = _run(["forward", "benchmark", "--max-results", "0"])
    assert done.returncode == 2
    assert done.stderr.startswith("error: python -m chemgauge forward benchmark: "), done.stderr
    assert "--max-results" in done.stderr and done.stderr.count("\n") == 1


def test_a_closed_pipe_is_a_quiet_exit(tmp_path: Path, nci_smiles: list[str]) -> None:
    source = tmp_path / "in.smi"
    source.write_text("\n".join(nci_smiles * 4) + "\n")
    reader = subprocess.Popen(["head", "-n", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = subprocess.run(
        [sys.executable, "-m", "chemgauge", "canon", str(source), "-q", "-j", "1"],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        check=False,
    )
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait(timeout=60)
    assert writer.returncode != 0
    assert "Traceback" not in writer.stderr and "Exception" not in writer.stderr, writer.stderr
