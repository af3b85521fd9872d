"""SIGTERM, SIGHUP and Ctrl-C stop a run the same way, children included.

The CLI installs :func:`install_handlers`: the first signal records itself, sends SIGTERM
to every descendant process (pool workers, OPSIN JVMs, OSRA and command children; a local
Ray cluster is left to ``ray.shutdown``) and raises :class:`Interrupted` (a
``KeyboardInterrupt``), so every ``finally`` block runs as for Ctrl-C: executors are shut
down without waiting, journals are closed and take no more rows. The CLI then makes sure no
descendant is left (:func:`stop_descendants`: SIGTERM, a grace period, SIGKILL) and exits
128 + the signal number (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
Descendants are found by walking ``/proc`` (Linux); elsewhere only direct cleanup runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from types import FrameType

__all__ = [
    "Interrupted",
    "descendants",
    "install_handlers",
    "interrupted",
    "reinstall_handlers",
    "reset_in_worker",
    "stop_descendants",
]

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: int | None = None
_installed = False


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; ``exit_code`` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


def interrupted() -> int | None:
    """The signal that is stopping this process, or ``None`` while it runs normally."""
    return _received


def _children_map() -> dict[int, list[int]]:
    """Parent pid -> live child pids (zombies, already dead, are left out)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # gone already
        # the command name (field 2) may hold spaces and parentheses: parse after the last ")"
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below ``pid`` (default: this one), parents before children."""
    tree = _children_map()
    found: list[int] = []
    stack = list(tree.get(os.getpid() if pid is None else pid, ()))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(tree.get(child, ()))
    return found


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def stop_descendants(grace_s: float = 5.0) -> int:
    """SIGTERM every descendant, wait up to ``grace_s``, SIGKILL the rest; returns how many
    were still running at the start."""
    pids = descendants()
    if not pids:
        return 0
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        alive = [pid for pid in descendants() if pid in pids]
        if not alive:
            return len(pids)
        time.sleep(0.05)
    _signal_all(descendants(), signal.SIGKILL)
    return len(pids)


# A local Ray cluster is stopped by ``ray.shutdown`` during cleanup, not at the signal: a
# driver whose raylet (or one of its agents) dies exits at once, before any cleanup. Its
# processes are found by these names; whatever outlives the shutdown goes in
# stop_descendants.
_CLUSTER_DAEMONS = (b"raylet", b"gcs_server")


def _cluster_daemon(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read(4096)
    except OSError:
        return False
    return any(marker in command for marker in _CLUSTER_DAEMONS)


def _handle(signum: int, frame: FrameType | None) -> None:
    global _received
    if _received is not None:
        return  # already stopping: cleanup is bounded, a repeat changes nothing
    _received = signum
    for other in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(other, signal.SIG_IGN)
    pids = descendants()
    if not any(_cluster_daemon(pid) for pid in pids):
        _signal_all(pids, signal.SIGTERM)
    raise Interrupted(signum)


def _adopt_orphans() -> None:
    """Become the subreaper of our descendants (Linux), so a grandchild whose parent dies
    first stays below us and is still found by :func:`descendants`."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def install_handlers() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP as described in the module docstring (main thread
    only; a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return
    global _installed
    for signum in HANDLED:
        signal.signal(signum, _handle)
    if not _installed:
        _adopt_orphans()
    _installed = True


def reinstall_handlers() -> None:
    """Put our handlers back after a library replaced them (Ray does, starting a cluster),
    if :func:`install_handlers` was called in this process."""
    if _installed:
        install_handlers()


def reset_in_worker() -> None:
    """In a forked worker: default SIGTERM/SIGHUP (the parent stops it), Ctrl-C ignored (the
    parent handles it for the whole run)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
