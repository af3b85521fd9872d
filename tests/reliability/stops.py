"""Stop a family's running CLI with a signal and look for any process it left behind.

Each scenario runs the real ``chemgauge`` entry point (:func:`chemgauge.cli.main`) in a child
process, after patches that only slow the work down so the run has children at work when
it is stopped. The run is signalled once its journal holds a row and its expected children
(pool workers, OPSIN JVMs, recognizer commands) are running. Every process of the run
carries a unique tag in its environment, so a survivor is found whatever its parent became
(orphans are reparented). Shared by ``test_signals.py`` and ``bench/reliability.py``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO_CORPUS = REPO / "src" / "chemgauge" / "families" / "forward" / "data" / "demo_corpus.jsonl"
_TAG = "CHEMGAUGE_STOP_TEST_TAG"
_DEADLINE_S = 300.0
#: How long the children of a SIGKILLed run may take to die with it.
_ORPHAN_GRACE_S = 10.0

_MAIN = """
from chemgauge.cli.app import main
sys.argv[0] = "chemgauge"
main()
"""

# Every patch only makes work slower, so a run is caught mid-way with its children busy.
SLOW_FORWARD = """
import sys, time
import chemgauge.families.forward.engine.predictor as forward
_real = forward.predict_products_detailed
def _slow(*args, **kwargs):
    time.sleep(0.5)
    return _real(*args, **kwargs)
forward.predict_products_detailed = _slow
"""

SLOW_RETRO = """
import sys, time
from chemgauge.families.retro.engine.registry import RetroModel
_real = RetroModel.predict
def _slow(self, products, num_results):
    time.sleep(0.3)
    return _real(self, products, num_results)
RetroModel.predict = _slow
"""

SLOW_NAMES = """
import sys, time
import chemgauge.families.names.api as names
from chemgauge.families.names.engine.runner import OpsinRunner
names._BLOCK = 2
_real = OpsinRunner.names_to_smiles
def _slow(self, batch):
    time.sleep(0.3)
    return _real(self, batch)
OpsinRunner.names_to_smiles = _slow
"""

SLOW_P2S_BUILD = """
import sys, time
from pathlib import Path
from chemgauge.families.p2s.engine.properties import TableProvider
_real = TableProvider._compute
_marker = Path(sys.argv.pop(1))
def _slow(self, smiles):
    _marker.touch()
    time.sleep(0.2 * len(smiles))
    return _real(self, smiles)
TableProvider._compute = _slow
"""

NO_PATCH = "import sys\n"

# An OCSR "recognizer" command: while the file argv[1] exists, it answers the first image at
# once and then takes a minute an image; without it, it answers at once.
SLOW_RECOGNIZER = """
import sys, time
from pathlib import Path
slow = Path(sys.argv[1])
if slow.exists():
    calls = slow.with_name(slow.name + ".calls")
    first = not calls.exists()
    calls.touch()
    if not first:
        time.sleep(60)
print("CCO")
"""


@dataclass
class StopResult:
    """What stopping one run found."""

    family: str
    signal_name: str
    returncode: int | None
    children_at_stop: int
    survivors: list[str] = field(default_factory=list)
    stderr: str = ""
    resumed: bool | None = None


def _tagged(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment holds ``tag``."""
    found = []
    needle = f"{_TAG}={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :].split()[:1] != [b"Z"]:
            found.append(int(entry))
    return found


def _describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        return f"{pid}: {command[:120]}"
    except OSError:
        return f"{pid}: (gone)"


def _rows(journal: Path) -> int:
    try:
        return max(0, journal.read_bytes().count(b"\n") - 1)
    except OSError:
        return 0


@dataclass
class Scenario:
    """One family's run to stop: patches, CLI arguments, the journal that marks progress,
    and how many children must be running before the signal is sent."""

    family: str
    patches: str
    args: list[str]
    ready: Callable[[], bool]
    children: int
    verify: list[str] | None = None
    extra_argv: list[str] = field(default_factory=list)
    before_resume: Callable[[], None] | None = None


def stop_run(scenario: Scenario, signum: int, *, resume: bool = True) -> StopResult:
    """Run, wait until ready with its children up, signal it, and look for survivors."""
    tag = uuid.uuid4().hex
    env = {**os.environ, _TAG: tag}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    code = scenario.patches + _MAIN
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *scenario.extra_argv, *scenario.args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + _DEADLINE_S
    children = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if scenario.ready():
                children = len([p for p in _tagged(tag) if p != proc.pid])
                if children >= scenario.children:
                    break
            time.sleep(0.05)
        if proc.poll() is not None:
            raise AssertionError(f"{scenario.family}: exited {proc.returncode} before the stop")
        if time.monotonic() >= deadline:
            raise AssertionError(f"{scenario.family}: never ready ({children} children)")
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30 if signum == signal.SIGKILL else 120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # A kill the run cannot handle (SIGKILL) leaves cleanup to its children: each must die
    # with its parent, within a few seconds.
    settle = time.monotonic() + (_ORPHAN_GRACE_S if signum == signal.SIGKILL else 0.0)
    while _tagged(tag) and time.monotonic() < settle:
        time.sleep(0.1)
    survivors = [_describe(pid) for pid in _tagged(tag)]
    for pid in _tagged(tag):  # leave nothing behind for the next test, whatever happened
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    result = StopResult(
        scenario.family, signal.Signals(signum).name, proc.returncode, children, survivors, err
    )
    if resume:
        if scenario.before_resume is not None:
            scenario.before_resume()
        done = subprocess.run(
            [sys.executable, "-c", NO_PATCH + _MAIN, *scenario.args],
            capture_output=True,
            text=True,
            timeout=_DEADLINE_S,
            env=env,
            check=False,
        )
        result.resumed = done.returncode == 0
        if not result.resumed:
            result.stderr += f"\nresume exited {done.returncode}: {done.stderr[-2000:]}"
        elif scenario.verify is not None:
            checked = subprocess.run(
                [sys.executable, "-m", "chemgauge", "verify", *scenario.verify],
                capture_output=True,
                text=True,
                timeout=_DEADLINE_S,
                env=env,
                check=False,
            )
            result.resumed = checked.returncode == 0
            if not result.resumed:
                result.stderr += f"\nverify: {checked.stdout[-2000:]}{checked.stderr[-2000:]}"
    return result


# --- the scenarios -------------------------------------------------------------------------


def forward_scenario(work: Path, executor: str = "local") -> Scenario:
    """``forward benchmark --jobs 2`` on the demo corpus (or a local Ray cluster)."""
    out = work / "forward"
    journal = out / "rows.jsonl.journal"
    args = [
        "forward",
        "benchmark",
        "--corpus",
        str(DEMO_CORPUS),
        "--out",
        str(out),
        "--executor",
        executor,
        "--jobs",
        "2",
        "--chunk-size",
        "1",
        "-q",
    ]
    children = 2 if executor == "local" else 3  # workers; a Ray cluster has more
    return Scenario(
        f"forward ({executor})",
        SLOW_FORWARD,
        args,
        lambda: _rows(journal) >= 1,
        children,
        [str(out)],
    )


def retro_scenario(work: Path) -> Scenario:
    """``retro eval`` with the predictions model on two worker processes."""
    from tests.reliability.commands import retro_eval, retro_inputs

    out = work / "retro"
    options = ("executor=local", "jobs=2", "batch_size=1", "chunk_size=1")
    args = retro_eval(*retro_inputs(work / "retro-inputs", copies=12), out, *options)
    journal = out / "journal.jsonl"
    return Scenario("retro", SLOW_RETRO, args, lambda: _rows(journal) >= 1, 2, [str(out)])


NAMES = [
    ("C", "methane"),
    ("CC", "ethane"),
    ("CCO", "ethanol"),
    ("CO", "methanol"),
    ("c1ccccc1", "benzene"),
    ("Cc1ccccc1", "toluene"),
    ("Oc1ccccc1", "phenol"),
    ("CC(=O)O", "acetic acid"),
]


def names_scenario(work: Path) -> Scenario:
    """``names coverage`` with two OPSIN JVMs (and two scoring workers)."""
    pairs = work / "pairs.tsv"
    rows = [f"{s}\t{n}\tp{r}-{i}" for r in range(6) for i, (s, n) in enumerate(NAMES)]
    pairs.write_text("smiles\tname\tid\n" + "\n".join(rows) + "\n")
    out = work / "names"
    out.mkdir(parents=True, exist_ok=True)
    args = [
        "names",
        "coverage",
        "-i",
        str(pairs),
        "--out",
        str(out),
        "-j",
        "2",
        "-q",
    ]
    journal = out / "rows.jsonl.journal"
    return Scenario("names", SLOW_NAMES, args, lambda: _rows(journal) >= 1, 3)


def ocsr_scenario(work: Path) -> Scenario:
    """``ocsr run`` with a command back-end, two attempts in flight (recognizer children)."""
    cohort = work / "cohort"
    subprocess.run(
        [sys.executable, "-m", "chemgauge", "ocsr", "render", "--out", str(cohort), "-q"],
        check=True,
        timeout=_DEADLINE_S,
    )
    script = work / "recognizer.py"
    script.write_text(SLOW_RECOGNIZER)
    slow = work / "recognizer-slow"
    slow.touch()
    out = work / "ocsr"
    args = [
        "ocsr",
        "run",
        "--manifest",
        str(cohort / "manifest.json"),
        "--model",
        "command",
        "--command-arg",
        sys.executable,
        "--command-arg",
        str(script),
        "--command-arg",
        str(slow),
        "--command-arg",
        "{image}",
        "--format",
        "smiles",
        "--out",
        str(out),
        "--jobs",
        "2",
        "--per-workflow-seconds",  # the limit before the bounded policy's 300 s default
        "60",
        "--run",
        "-q",
    ]
    journal = out / "attempts.jsonl"
    return Scenario(
        "ocsr", NO_PATCH, args, lambda: _rows(journal) >= 1, 2, before_resume=slow.unlink
    )


def p2s_build_scenario(work: Path) -> Scenario:
    """``p2s build`` from a property table, the provider slowed."""
    from tests.reliability.commands import p2s_build, p2s_build_inputs

    marker = work / "p2s-computing"
    args = p2s_build(*p2s_build_inputs(work), work / "p2s-data")
    return Scenario("p2s build", SLOW_P2S_BUILD, args, marker.exists, 0, None, [str(marker)])
