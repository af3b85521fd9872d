"""Resumable append-only rows: a journal keyed by item identity and the run's config hash.

A restart drops a truncated last line and skips finished items; the final rows file is
streamed back from the journal in input order.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from chemgauge.errors import ConfigError, OutputFileError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.interrupts import interrupted
from chemgauge.eval.provenance import source_tree_sha256

__all__ = [
    "ResumableJsonlWriter",
    "index_journal",
    "is_journal",
    "iter_journal",
    "iter_journal_by_keys",
]

_HEADER_KEY = "chemgauge_rows_journal"

_SORT = orjson.OPT_SORT_KEYS


def _read_header(line: bytes, path: Path) -> dict[str, Any]:
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or _HEADER_KEY not in header:
        raise ConfigError(f"{path}: not a chemgauge resume journal; delete it or move it")
    return header


def is_journal(path: str | Path) -> bool:
    """True iff ``path`` is a file that starts with a chemgauge journal header (so a file of
    the same name written by another tool is never taken for one)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
    except OSError:
        return False
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(header, dict) and _HEADER_KEY in header


def _last_newline_end(handle: IO[bytes], size: int, block: int = 1 << 16) -> int:
    """Offset just past the file's last newline (0 if it has none), reading backwards."""
    end = size
    while end > 0:
        start = max(0, end - block)
        handle.seek(start)
        found = handle.read(end - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def iter_journal(path: str | Path) -> Iterator[dict[str, Any]]:
    """Stream the rows of a closed journal in file order (the header is checked, not yielded)."""
    path = Path(path)
    with open(path, "rb") as handle:
        header = handle.readline()
        if not header:
            raise ConfigError(f"{path}: resume journal has no header; delete it to restart")
        _read_header(header, path)
        for number, line in enumerate(handle, start=2):
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                row = None
            if not isinstance(row, dict):
                raise ConfigError(
                    f"{path}, line {number}: corrupt journal line; delete the file to restart"
                )
            yield row


def index_journal(path: str | Path, key_field: str) -> dict[str, int]:
    """Byte offset of each key's row in a closed journal (the last row of a key wins, as
    after a resume); one int per row, never the rows."""
    path = Path(path)
    offsets: dict[str, int] = {}
    with open(path, "rb") as handle:
        _read_header(handle.readline(), path)
        offset = handle.tell()
        for number, raw in enumerate(handle, start=2):
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                row = None
            if not isinstance(row, dict) or key_field not in row:
                raise ConfigError(
                    f"{path}, line {number}: corrupt journal line; delete the file to restart"
                )
            offsets[str(row[key_field])] = offset
            offset += len(raw)
    return offsets


def iter_journal_by_keys(
    path: str | Path, key_field: str, keys: Iterable[str]
) -> Iterator[dict[str, Any] | None]:
    """Rows of a closed journal in the order of ``keys``, ``None`` for a key without a row.

    Journals are written in completion order and a resumed run appends after older rows, so
    file order is not item order; this reads each row back by offset (:func:`index_journal`)
    and holds only the offsets, so a rows file can be streamed in item order.
    """
    offsets = index_journal(path, key_field)
    with open(path, "rb") as handle:
        for key in keys:
            offset = offsets.get(key)
            if offset is None:
                yield None
                continue
            handle.seek(offset)
            yield orjson.loads(handle.readline())


class ResumableJsonlWriter:
    """Append-only JSONL journal of rows keyed by item identity, tied to one config hash and
    to the program that wrote it.

    On open, a truncated last line (a crash mid-write) is cut off, and the keys of finished
    rows are collected so a restarted run skips them. A journal holding rows written under a
    different config hash, or by a different chemgauge source tree
    (:func:`~chemgauge.eval.provenance.source_tree_sha256`), is never mixed in: that is an
    error unless ``restart`` is set. A journal with a header and no rows (a failed start)
    is simply replaced.

    Rows are appended with unbuffered writes; a write that fails (a full disk, EIO, a file
    size limit) is cut back to the last complete row before the error is raised, so the
    journal stays resumable and no torn line is ever counted as a row. Once the process is
    being stopped by a signal (:mod:`chemgauge.eval.interrupts`), rows are no longer
    written: one finishing then may come from a child the stop just killed.

    ``keep_rows`` (the default) also keeps every row in :attr:`existing` (recovered and
    written), for callers that assemble their output from it. A streaming caller passes
    ``keep_rows=False``: then only the recovered keys are kept (:attr:`keys`), rows written
    now are not remembered (the caller writes each item once), and the rows are read back
    with :func:`iter_journal`, so memory does not grow with the run.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        config_sha256: str,
        key_field: str,
        restart: bool = False,
        keep_rows: bool = True,
        program_sha256: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.config_sha256 = config_sha256
        self.program_sha256 = program_sha256 or source_tree_sha256()
        self.key_field = key_field
        self.keep_rows = keep_rows
        self.existing: dict[str, dict[str, Any]] = {}
        self.keys: set[str] = set()
        self.truncated_bytes = 0
        self._fd: int | None = None
        try:
            if restart and self.path.exists():
                self.path.unlink()
            if not (self.path.exists() and self._recover()):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                header = {
                    _HEADER_KEY: 1,
                    "config_sha256": config_sha256,
                    "source_tree_sha256": self.program_sha256,
                }
                atomic_write_bytes(self.path, orjson.dumps(header, option=_SORT) + b"\n")
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            self._size = os.fstat(self._fd).st_size
        except OSError as exc:
            raise OutputFileError(self.path, exc) from None

    def _recover(self) -> bool:
        """Cut a torn last line, check the header, collect finished keys (streaming).

        Returns False when the journal holds no row (it is then replaced)."""
        with open(self.path, "r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            cut = _last_newline_end(handle, size)
            if cut < size:
                self.truncated_bytes = size - cut
                handle.truncate(cut)
            handle.seek(0)
            first = handle.readline()
            empty = not handle.read(1)
        if cut == 0 or empty:
            return False  # nothing but a header (or a torn one): no row to keep
        header = _read_header(first, self.path)
        if header.get("config_sha256") != self.config_sha256:
            raise ConfigError(
                f"{self.path}: rows were produced under another configuration "
                f"(config_sha256 {header.get('config_sha256')} != {self.config_sha256}); "
                "use another output folder or pass --restart"
            )
        if header.get("source_tree_sha256") != self.program_sha256:
            raise ConfigError(
                f"{self.path}: rows were produced by another version of the program "
                f"(chemgauge source tree {header.get('source_tree_sha256') or 'not recorded'} "
                f"!= {self.program_sha256}); rows of two programs are never mixed: pass "
                "--restart to start over"
            )
        for number, row in enumerate(iter_journal(self.path), start=2):
            if self.key_field not in row:
                raise ConfigError(
                    f"{self.path}, line {number}: journal row has no {self.key_field!r} field "
                    "(edited by hand?); delete the file to restart"
                )
            key = str(row[self.key_field])
            self.keys.add(key)
            if self.keep_rows:
                self.existing[key] = row
        return True

    def done(self, key: str) -> bool:
        """True iff a row for this item key is already in the journal (with ``keep_rows``
        off: was in it when the journal was opened)."""
        return key in self.keys

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row, unbuffered, so a crash loses at most the row being written."""
        if self._fd is None:
            raise ValueError("journal is closed")
        if interrupted() is not None:
            return  # stopping: a row finished now may come from a child we just stopped
        key = str(row[self.key_field])
        line = orjson.dumps(row, option=_SORT) + b"\n"
        data = memoryview(line)
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError as exc:  # a full disk: cut the torn row, keep the finished ones
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise OutputFileError(
                self.path, exc, kept="rows written so far are kept; rerun to resume"
            ) from None
        self._size += len(line)
        if self.keep_rows:
            self.keys.add(key)
            self.existing[key] = dict(row)

    def close(self) -> None:
        """Fsync and close the journal."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.fsync(fd)
        except OSError as exc:
            raise OutputFileError(
                self.path, exc, kept="rows written so far are kept; rerun to resume"
            ) from None
        finally:
            os.close(fd)

    def __enter__(self) -> ResumableJsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
