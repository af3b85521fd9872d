"""No orphans, even on SIGKILL: every child of a chemgauge command dies with it.

A signal the command can catch (Ctrl-C, SIGTERM, SIGHUP) stops its children itself
(:mod:`chemgauge.eval.interrupts`). SIGKILL leaves no chance to, so before the first child
starts, the command starts a *lifeline*: a small watcher process, the leader of a process
group of its own, connected to the command by a pipe. Children join that group (``Popen``
through :func:`child_kwargs`, pool workers through :func:`join_from_worker`, which also sets
the Linux parent-death signal), and the watcher notes every descendant of the command once
a second (processes that leave the group, a local Ray cluster's daemons). When the command
is gone (the pipe reads end of file, or the watcher's parent changes) the watcher kills
every noted descendant still alive with the same start time, then the whole group, itself
last. Long-lived children also exit when their standard input closes.

Only the command line enables it (:func:`enable`); a library caller's children are its own.
Linux only (``/proc``, ``prctl``); elsewhere every function is a no-op. Standard library
only: the watcher runs as ``python -m chemgauge.eval.lifeline PARENT_PID``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

__all__ = ["child_kwargs", "enable", "ensure", "join_from_worker", "set_parent_death_signal"]

_PR_SET_PDEATHSIG = 1
_SCAN_EVERY_S = 1.0
_LINUX = sys.platform.startswith("linux")

_enabled = False
_lock = threading.Lock()
_watcher: subprocess.Popen[bytes] | None = None

try:  # resolved once, here: nothing is loaded between fork and exec or in a signal handler
    _prctl: Any = ctypes.CDLL(None, use_errno=True).prctl if _LINUX else None
except (OSError, AttributeError):
    _prctl = None


def set_parent_death_signal(signum: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``signum`` to this process when its parent thread ends (Linux),
    and leave at once if the parent is already gone."""
    if _prctl is None:
        return
    parent = os.getppid()
    _prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def enable() -> None:
    """Let this process start a lifeline when it first starts a child (the CLI calls it)."""
    global _enabled
    _enabled = _LINUX


def ensure() -> int | None:
    """The lifeline's process group, started on first use; ``None`` when not enabled."""
    global _watcher
    if not _enabled:
        return None
    with _lock:
        if _watcher is None or _watcher.poll() is not None:
            _watcher = subprocess.Popen(
                [sys.executable, "-m", "chemgauge.eval.lifeline", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                process_group=0,
                close_fds=True,
            )
        return _watcher.pid


def child_kwargs() -> dict[str, Any]:
    """Keyword arguments for ``subprocess.Popen`` that put the child in the lifeline's group
    (empty when there is none: the child then lives like any other)."""
    group = ensure()
    return {} if group is None else {"process_group": group}


def join_from_worker(group: int | None) -> None:
    """In a pool worker: join the lifeline's group and die with the parent."""
    set_parent_death_signal()
    if group is not None:
        with contextlib.suppress(OSError):
            os.setpgid(0, group)


# --- the watcher ---------------------------------------------------------------------------


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, ``None`` for a zombie or a gone one."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[1]), int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """Every live process below ``root``: pid -> start time."""
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(entry)
            if found is not None:
                parents.setdefault(found[0], []).append((int(entry), found[1]))
    result: dict[int, int] = {}
    stack = list(parents.get(root, ()))
    while stack:
        pid, started = stack.pop()
        result[pid] = started
        stack.extend(parents.get(pid, ()))
    return result


def _kill_noted(noted: dict[int, int]) -> None:
    me = os.getpid()
    for pid, started in noted.items():
        if pid == me:
            continue
        found = _stat(str(pid))
        if found is not None and found[1] == started:  # the same process, not a reused pid
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def watch(parent: int, pipe: IO[bytes]) -> None:
    """Wait for ``parent`` to end, noting its descendants; then kill them and the group."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    noted: dict[int, int] = {}
    while not stop.is_set() and os.getppid() == parent:
        with contextlib.suppress(OSError):
            noted.update(_descendants(parent))
        with contextlib.suppress(OSError, ValueError):
            ready, _, _ = select.select([pipe], [], [], _SCAN_EVERY_S)
            if ready and not os.read(pipe.fileno(), 4096):
                break  # end of file: the parent is gone (or closed the lifeline on exit)
    _kill_noted(noted)
    time.sleep(0.05)
    _kill_noted(noted)  # a child a dying parent started in between
    with contextlib.suppress(OSError):
        os.killpg(os.getpgid(0), signal.SIGKILL)


if __name__ == "__main__":  # pragma: no cover - runs as the watcher process
    watch(int(sys.argv[1]), sys.stdin.buffer)
