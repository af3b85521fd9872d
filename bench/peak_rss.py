"""Wall time and peak resident memory of one run in a fresh process (for bench/scale*.py).

Two probes. :func:`measure_command` runs any command as a child of a small probe process and
reports the largest process among it and its descendants (getrusage RUSAGE_CHILDREN).
:func:`measure_chemgauge` runs the chemgauge CLI inside the probe itself, so the CLI process
(RUSAGE_SELF) and its largest worker (RUSAGE_CHILDREN) are reported apart.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass

_COMMAND_PROBE = (
    "import resource, subprocess, sys; "
    "subprocess.run(sys.argv[1:], check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)

_CHEMGAUGE_PROBE = """
import resource, runpy, sys
sys.argv = ["chemgauge", *sys.argv[1:]]
try:
    runpy.run_module("chemgauge", run_name="__main__")
except SystemExit as done:
    if done.code not in (0, None):
        raise
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(own, children)
"""


@dataclass(frozen=True)
class Measure:
    """One run: wall seconds, the CLI process's peak RSS and its largest child's (KiB)."""

    wall_s: float
    cli_kib: int
    child_kib: int

    @property
    def peak_kib(self) -> int:
        """The largest process of the run."""
        return max(self.cli_kib, self.child_kib)


def _probe(script: str, args: list[str], what: str) -> tuple[float, str]:
    start = time.perf_counter()
    probe = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if probe.returncode != 0:
        raise RuntimeError(f"{what} failed ({probe.returncode}): {probe.stderr[-3000:]}")
    return wall, probe.stdout.strip().splitlines()[-1]


def measure_command(cmd: list[str], what: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB, the largest process) of ``cmd``."""
    wall, line = _probe(_COMMAND_PROBE, cmd, what)
    return wall, int(line)


def measure_chemgauge(args: list[str], what: str) -> Measure:
    """``chemgauge ARGS`` run inside the probe: wall seconds and both peaks."""
    wall, line = _probe(_CHEMGAUGE_PROBE, args, what)
    own, children = (int(v) for v in line.split())
    return Measure(wall, own, children)
