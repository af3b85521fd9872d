"""Every command in the README runs as written, in a fresh folder with the shipped examples.

The ``bash`` blocks of README.md are read in order (``make`` targets aside), each command run
with this checkout's ``chemgauge`` in one temporary folder where ``chemgauge examples .``
copied the example inputs, so a command may use what an earlier one wrote; each must exit 0.
The ``python`` blocks run too. README and behaviour cannot drift.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(), re.M | re.S)


def readme_commands() -> list[list[str]]:
    """Each README shell command as an argument list (continuations joined, comments cut)."""
    commands = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv and argv[0] != "make":
                commands.append(argv)
    return commands


def test_readme_commands_are_found_and_use_only_chemgauge() -> None:
    commands = readme_commands()
    assert len(commands) >= 25
    assert {argv[0] for argv in commands} == {"chemgauge"}
    families = {argv[1] for argv in commands}
    assert {"canon", "forward", "retro", "names", "ocsr", "p2s", "report", "verify"} <= families


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


@pytest.mark.slow
@pytest.mark.external
def test_every_readme_command_runs_as_written(tmp_path: Path) -> None:
    copied = _run(["chemgauge", "examples", "."], tmp_path)
    assert copied.returncode == 0, copied.stderr
    for argv in readme_commands():
        done = _run(argv, tmp_path)
        assert done.returncode == 0, f"{shlex.join(argv)}\n{done.stderr[-3000:]}"
    # each family wrote under its own folder
    runs = {p.name for p in (tmp_path / "runs").iterdir()}
    assert {"canon", "forward", "retro", "names", "ocsr", "p2s"} <= runs
    for block in _blocks("python"):
        done = _run([sys.executable, "-c", block], tmp_path)
        assert done.returncode == 0, f"{block}\n{done.stderr[-3000:]}"
