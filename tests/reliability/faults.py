"""SIGKILL a resumable run at random points, resume it, and compare with an uninterrupted run.

A driver is a child Python process running one family's command; it is killed when its
journal holds at least ``k`` rows (``k`` drawn from a seeded generator, increasing), plus a
random few milliseconds, so kills land between and in the middle of row writes.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_POLL_S = 0.005
_RUN_TIMEOUT_S = 300.0

# Names coverage: tiny journal blocks and a slowed OPSIN so a run has many kill points.
NAMES_DRIVER = """
import sys, time
import chemgauge.families.names.api as names
from chemgauge.families.names.engine.runner import OpsinRunner
names._BLOCK = 3
_real = OpsinRunner.names_to_smiles
def _slow(self, batch):
    time.sleep(0.03)
    return _real(self, batch)
OpsinRunner.names_to_smiles = _slow
from chemgauge.cli import app
app(sys.argv[1:])
"""

# p2s run: batch size 1 and a slowed model, same reason.
P2S_DRIVER = """
import sys, time
from chemgauge.families.p2s.engine.models import P2SModel
_real = P2SModel.predict
def _slow(self, tasks):
    time.sleep(0.01)
    return _real(self, tasks)
P2SModel.predict = _slow
from chemgauge.cli import app
app(sys.argv[1:])
"""


# Forward, retro and OCSR rows carry timing fields (elapsed_ms, elapsed_seconds) measured
# with time.perf_counter; the drivers freeze that clock so the final rows of a killed and an
# uninterrupted run can be compared byte for byte, timing fields included. Nothing else is
# patched except a sleep per item, so a run has many kill points.
_FROZEN_CLOCK = """
import sys, time
time.perf_counter = lambda: 0.0
"""

# Forward benchmark: a slowed engine (patched before the CLI imports it by name).
FORWARD_DRIVER = (
    _FROZEN_CLOCK
    + """
import chemgauge.families.forward.engine.predictor as forward
_real = forward.predict_products_detailed
def _slow(*args, **kwargs):
    time.sleep(0.02)
    return _real(*args, **kwargs)
forward.predict_products_detailed = _slow
from chemgauge.cli import app
app(sys.argv[1:])
"""
)

# Retro eval with the ``predictions`` model: every model call slowed.
RETRO_DRIVER = (
    _FROZEN_CLOCK
    + """
from chemgauge.families.retro.engine.base import RetroModel
_real = RetroModel.predict
def _slow(self, products, num_results):
    time.sleep(0.02)
    return _real(self, products, num_results)
RetroModel.predict = _slow
from chemgauge.cli import app
app(sys.argv[1:])
"""
)

# OCSR run: a Python recognizer behind the injected boundary, answering from a table keyed
# by image hash (argv[1], a JSON file); ``--callable __main__:recognize`` names it.
OCSR_DRIVER = (
    _FROZEN_CLOCK
    + """
import hashlib, json
from pathlib import Path
TABLE = json.loads(Path(sys.argv.pop(1)).read_text())
def recognize(image):
    time.sleep(0.03)
    answer = TABLE.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")
    if answer == "raise":
        raise RuntimeError("recognizer crashed")
    return answer
from chemgauge.cli import app
app(sys.argv[1:])
"""
)


@dataclass
class KillReport:
    """What a kill-and-resume campaign did."""

    kills: int = 0
    runs: int = 0
    truncated_journals: int = 0
    torn_lines_added: int = 0
    kill_points: list[int] = field(default_factory=list)


def _rows(path: Path) -> int:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return max(0, data.count(b"\n") - 1)  # minus the header line


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return env


def run_to_end(driver: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """One uninterrupted run of a driver."""
    return subprocess.run(
        [sys.executable, "-c", driver, *args],
        capture_output=True,
        text=True,
        timeout=_RUN_TIMEOUT_S,
        env=_env(),
        check=False,
    )


def _tear(journal: Path) -> bool:
    """Append the first half of the journal's last row, unterminated: what a kill in the
    middle of a write leaves (a small row is one write(2), so a real kill rarely does)."""
    data = journal.read_bytes() if journal.exists() else b""
    lines = data.splitlines()
    if len(lines) < 2 or not data.endswith(b"\n"):
        return False
    with open(journal, "ab") as handle:
        handle.write(lines[-1][: len(lines[-1]) // 2])
    return True


def kill_and_resume(
    driver: str,
    args: list[str],
    journals: list[Path],
    total: int,
    kills: int,
    seed: int,
    *,
    tear_every: int = 0,
) -> KillReport:
    """Run ``driver`` with ``args``, SIGKILLing it ``kills`` times at random journal sizes,
    resuming each time, until a run finishes. ``journals`` are the files whose row count
    marks progress (summed); ``total`` is the number of rows a full run journals. With
    ``tear_every`` = n, every n-th kill also leaves a torn last line in the first journal.
    """
    rng = random.Random(seed)
    points = sorted(rng.sample(range(1, max(2, total - 1)), min(kills, max(1, total - 2))))
    report = KillReport()
    for point in [*points, None]:
        report.runs += 1
        proc = subprocess.Popen(
            [sys.executable, "-c", driver, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        deadline = time.monotonic() + _RUN_TIMEOUT_S
        killed = False
        while proc.poll() is None and time.monotonic() < deadline:
            if point is not None and sum(_rows(j) for j in journals) >= point:
                time.sleep(rng.uniform(0, 0.02))
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(_POLL_S)
        try:
            _, err = proc.communicate(timeout=_RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        if killed and proc.returncode == -signal.SIGKILL:
            report.kills += 1
            report.kill_points.append(point or 0)
            for journal in journals:
                if journal.exists() and not journal.read_bytes().endswith(b"\n"):
                    report.truncated_journals += 1
            if tear_every and report.kills % tear_every == 0 and _tear(journals[0]):
                report.torn_lines_added += 1
            continue
        if proc.returncode != 0:
            raise AssertionError(f"run {report.runs} exited {proc.returncode}: {err[-2000:]}")
        if point is None:
            break
    return report
