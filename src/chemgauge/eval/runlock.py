"""Run locks: one chemgauge run at a time writes a given output.

A run takes an exclusive ``fcntl.flock`` on a lock file beside each output before touching
any of them (``.<name>.lock`` beside a file, ``.chemgauge.lock`` inside a folder output),
holding the pid, start time and command. A second run into the same outputs stops at once:
"another chemgauge run (pid N, started T) is writing to X". The kernel drops the lock when
its process dies, so the lock of a dead run is simply taken over; forked worker processes
close their copy at fork, so a worker left behind by a killed run never holds it. The lock
file is removed when the run ends (a crashed run's file stays, unlocked, and is reused).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson

from chemgauge.errors import ConfigError, RunLockedError, excerpt

__all__ = ["RunLockedError", "lock_path", "run_lock"]

FOLDER_LOCK = ".chemgauge.lock"

# Descriptors of the locks this process holds: closed in forked children (see module doc).
_HELD: set[int] = set()


def _close_in_child() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


def lock_path(output: Path, *, folder: bool = False) -> Path:
    """The lock file of an output: inside a folder output, beside a file output."""
    return output / FOLDER_LOCK if folder else output.with_name(f".{output.name}.lock")


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        info = orjson.loads(os.read(fd, 65536))
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["started"])))
        command = excerpt(str(info.get("command", "")), 160)
        return f"pid {int(info['pid'])}, started {started}: {command}"
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return "pid unknown"


def _acquire(path: Path, target: Path, record: bytes) -> int:
    """Lock ``path`` (created if missing); returns the descriptor holding the lock."""
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunLockedError(
                f"another chemgauge run ({holder}) is writing to {target}; wait for it to "
                "finish or choose another output"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder may have removed the file between our open and our lock: then this
        # descriptor locks an orphaned inode, so start again on the path's current file.
        try:
            current = os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        mine = os.fstat(fd)
        if (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
        return fd


def _release(path: Path, fd: int) -> None:
    # Removed while still locked, so a waiting opener sees the inode change and retries.
    with contextlib.suppress(OSError):
        os.unlink(path)
    _HELD.discard(fd)
    with contextlib.suppress(OSError):
        os.close(fd)


@contextlib.contextmanager
def run_lock(
    targets: Sequence[tuple[Path, bool]], command: str | None = None
) -> Iterator[list[Path]]:
    """Hold the lock of every ``(output path, is_folder)`` for the duration of the block.

    Raises :class:`RunLockedError` (exit status 2) at once if another live run holds one;
    locks already taken are released. Yields the lock files.
    """
    shown = command if command is not None else " ".join(["chemgauge", *sys.argv[1:]])
    record = orjson.dumps({"pid": os.getpid(), "started": time.time(), "command": shown})
    held: list[tuple[Path, int]] = []
    try:
        for target, folder in sorted(set(targets)):
            path = lock_path(target, folder=folder)
            try:
                fd = _acquire(path, target, record)
            except OSError as exc:
                raise ConfigError(f"{path}: cannot create the run lock ({exc.strerror})") from None
            _HELD.add(fd)
            held.append((path, fd))
        yield [path for path, _ in held]
    finally:
        for path, fd in reversed(held):
            _release(path, fd)
