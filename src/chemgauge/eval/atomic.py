"""Atomic writes: an output is either its old content or the complete new one, never half."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from chemgauge.errors import OutputFileError

__all__ = [
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_rows",
    "atomic_write_text",
    "row_line",
]


def _read_umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# Read once at import: os.umask is process-wide, so probing it per write would race threads.
_UMASK = _read_umask()


@contextlib.contextmanager
def atomic_open(path: str | Path, *, text: bool = False) -> Iterator[IO[Any]]:
    """Stream into a temporary file beside ``path``; fsync and rename over it only on success.

    A failure (or Ctrl-C) mid-write removes the temporary file, so ``path`` is either its old
    content or the complete new one; an unwritable folder is an :class:`OutputFileError`.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputFileError(target, exc) from None
    try:
        # mkstemp creates 0600; give the file the permissions a plain open() would.
        os.fchmod(fd, 0o666 & ~_UMASK)
        handle: IO[Any] = (
            os.fdopen(fd, "w", encoding="utf-8", newline="\n") if text else os.fdopen(fd, "wb")
        )
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputFileError(target, exc) from None
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write bytes atomically (see :func:`atomic_open`)."""
    with atomic_open(path) as handle:
        handle.write(data)
    return Path(path)


def row_line(row: Mapping[str, Any]) -> bytes:
    """One row as a rows-file line: a sorted-key JSON object and a newline, the one byte
    format every family's ``rows.jsonl`` uses (``verify`` and the hashes depend on it)."""
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_rows(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Stream a rows file atomically, one :func:`row_line` per row."""
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(row_line(row))
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Atomic UTF-8 text write."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    """Atomic write of indented JSON with sorted keys and a trailing newline."""
    data = orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    return atomic_write_bytes(path, data + b"\n")
