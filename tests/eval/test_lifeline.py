"""The lifeline: a SIGKILLed command's children die with it, in its group or not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chemgauge.eval import lifeline

# A "command": enables the lifeline, starts one child in the lifeline's group and one that
# leaves it for a session of its own (as a local Ray cluster's daemons do), writes their
# pids and waits to be killed.
#
# The watcher notes descendants on every pass of its loop, and a byte on its pipe starts a
# pass at once. The command writes one byte and waits until the watcher has read it (the
# pipe is empty again), then a second: the second is read only after the pass the first
# started, which began after both children existed. An event, not a sleep.
PARENT = """
import fcntl, struct, subprocess, sys, termios, time
from chemgauge.eval import lifeline
lifeline.enable()
sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
grouped = subprocess.Popen(sleeper, **lifeline.child_kwargs())
escaped = subprocess.Popen(sleeper, start_new_session=True)
pipe = lifeline._watcher.stdin
for _ in range(2):
    pipe.write(b"."); pipe.flush()
    while struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"0000"))[0]:
        time.sleep(0.01)
print(grouped.pid, escaped.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_children_of_a_killed_command_die_with_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(lifeline.__file__).parents[2])}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env
    )
    assert parent.stdout is not None
    children = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(children) == 2 and all(_alive(pid) for pid in children)
    parent.send_signal(signal.SIGKILL)
    parent.wait(30)
    deadline = time.monotonic() + 120  # a bound on a failure, not a timing claim
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [pid for pid in children if _alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


def test_a_library_caller_gets_no_lifeline() -> None:
    # Only the command line enables it: a notebook's or a script's children are its own.
    script = (
        "import chemgauge.families.forward, chemgauge.report\n"
        "from chemgauge.eval import lifeline\n"
        "print(lifeline.child_kwargs(), lifeline.ensure())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(lifeline.__file__).parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["{}", "None"]
