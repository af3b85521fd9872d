"""Row and record I/O: counted rejections, atomic writes and resumable append-only rows.

Nothing is silently dropped: every rejected line is counted by reason with a bounded list of
diagnostics, and ``strict`` turns the first one into an error naming file, line and value.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from chemgauge.errors import ChemgaugeError, ConfigError, DataQualityError, InputFileError

__all__ = [
    "Diagnostic",
    "LineSpan",
    "OutputFileError",
    "RejectionStats",
    "ResumableJsonlWriter",
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_rows",
    "atomic_write_text",
    "index_journal",
    "is_journal",
    "iter_journal",
    "iter_journal_by_keys",
    "iter_line_spans",
    "iter_lines",
    "json_object",
    "read_jsonl",
    "read_span",
]

MAX_DIAGNOSTICS = 50
_EXCERPT = 120


class OutputFileError(ChemgaugeError):
    """An output file or folder cannot be written (read-only, full, missing permission)."""

    def __init__(self, path: str | Path, exc: OSError) -> None:
        reason = exc.strerror or type(exc).__name__
        super().__init__(f"{path}: cannot write output ({reason}); no partial file was left")
        self.path = str(path)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One rejected input: where, why, and a short excerpt of the offending text."""

    line: int
    reason: str
    excerpt: str
    detail: str = ""


@dataclass
class RejectionStats:
    """Counts of rejected inputs by reason plus the first ``max_diagnostics`` diagnostics."""

    path: str | None = None
    strict: bool = False
    max_diagnostics: int = MAX_DIAGNOSTICS
    accepted: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def reject(self, line: int, reason: str, text: str, detail: str = "") -> None:
        """Count a rejection; in strict mode raise instead, naming file, line and value."""
        if self.strict:
            message = f"{reason}{': ' + detail if detail else ''}"
            raise DataQualityError(message, path=self.path, line=line, value=text[:_EXCERPT])
        self.counts[reason] += 1
        if len(self.diagnostics) < self.max_diagnostics:
            self.diagnostics.append(Diagnostic(line, reason, text[:_EXCERPT], detail))

    @property
    def rejected(self) -> int:
        """Total rejected lines over all reasons."""
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for reports (reasons sorted for stable output)."""
        return {
            "accepted": self.accepted,
            "rejected": self.rejected,
            "rejections_by_reason": dict(sorted(self.counts.items())),
            "diagnostics": [
                {"line": d.line, "reason": d.reason, "excerpt": d.excerpt, "detail": d.detail}
                for d in self.diagnostics
            ],
            "diagnostics_truncated": self.rejected > len(self.diagnostics),
        }


def _open_error(path: str | Path, exc: OSError) -> InputFileError:
    """The error naming an input file that cannot be opened, and why."""
    if isinstance(exc, FileNotFoundError):
        return InputFileError("file not found", path=path)
    if isinstance(exc, IsADirectoryError):
        return InputFileError("expected a file, found a directory", path=path)
    return InputFileError(f"cannot open file ({exc.strerror})", path=path)


def _open_text(path: str | Path) -> IO[str]:
    try:
        return open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise _open_error(path, exc) from None


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text without line ending), streaming; names the file on error."""
    handle = _open_text(path)
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, start=1):
                yield number, raw.rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise InputFileError(
                f"not valid UTF-8 ({exc.reason})", path=path, line=number + 1
            ) from None


@dataclass(frozen=True, slots=True)
class LineSpan:
    """One line of a file: its 1-based number, byte span (ending included) and text."""

    number: int
    offset: int
    size: int
    text: str


def iter_line_spans(path: str | Path) -> Iterator[LineSpan]:
    """Like :func:`iter_lines` (same line endings, the same errors naming file and line), plus
    each line's byte span, so a caller can hold spans and read a line again with
    :func:`read_span` instead of holding the text."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise _open_error(path, exc) from None
    with handle:
        offset = number = 0
        for chunk in handle:
            # lines end at \n, \r\n or a lone \r, as in text mode (universal newlines)
            for raw in chunk.splitlines(keepends=True) if b"\r" in chunk else (chunk,):
                number += 1
                try:
                    text = raw.rstrip(b"\r\n").decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputFileError(
                        f"not valid UTF-8 ({exc.reason})", path=path, line=number
                    ) from None
                yield LineSpan(number, offset, len(raw), text)
                offset += len(raw)


def read_span(handle: IO[bytes], span: LineSpan | tuple[int, int]) -> bytes:
    """The bytes of a line again, from a handle opened in binary mode (``(offset, size)``
    works too, for callers that keep only those)."""
    offset, size = (span.offset, span.size) if isinstance(span, LineSpan) else span
    handle.seek(offset)
    return handle.read(size)


def json_object(text: str) -> dict[str, Any] | str:
    """The JSON object on one line, or why it is not one (the detail of a ``malformed_json``
    rejection)."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    return obj if isinstance(obj, dict) else "line is not a JSON object"


def read_jsonl(path: str | Path, stats: RejectionStats) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each JSON-object line; blank lines are skipped silently.

    Lines that are not JSON objects are counted as ``malformed_json`` in ``stats``.
    """
    if stats.path is None:
        stats.path = str(path)
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        obj = json_object(text)
        if isinstance(obj, str):
            stats.reject(number, "malformed_json", text, obj)
            continue
        yield number, obj


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


def atomic_write_rows(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Stream a rows file atomically: one sorted-key JSON object per line, the one byte
    format every family's ``rows.jsonl`` uses (``verify`` and the hashes depend on it)."""
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Atomic UTF-8 text write."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    """Atomic write of indented JSON with sorted keys and a trailing newline."""
    data = orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    return atomic_write_bytes(path, data + b"\n")


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
    """Append-only JSONL journal of rows keyed by item identity, tied to one config hash.

    On open, a truncated last line (a crash mid-write) is cut off, and the keys of finished
    rows are collected so a restarted run skips them. A journal written under a different
    config hash is never mixed in: that is an error unless ``restart`` is set.

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
    ) -> None:
        self.path = Path(path)
        self.config_sha256 = config_sha256
        self.key_field = key_field
        self.keep_rows = keep_rows
        self.existing: dict[str, dict[str, Any]] = {}
        self.keys: set[str] = set()
        self.truncated_bytes = 0
        try:
            if restart and self.path.exists():
                self.path.unlink()
            if self.path.exists():
                self._recover()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                header = orjson.dumps(
                    {_HEADER_KEY: 1, "config_sha256": config_sha256}, option=_SORT
                )
                atomic_write_bytes(self.path, header + b"\n")
            self._handle: IO[bytes] | None = open(self.path, "ab")  # noqa: SIM115 - see close()
        except OSError as exc:
            raise OutputFileError(self.path, exc) from None

    def _recover(self) -> None:
        """Cut a torn last line, check the header, collect finished keys (streaming)."""
        with open(self.path, "r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            cut = _last_newline_end(handle, size)
            if cut < size:
                self.truncated_bytes = size - cut
                handle.truncate(cut)
        if cut == 0:
            raise ConfigError(f"{self.path}: resume journal has no header; delete it to restart")
        with open(self.path, "rb") as handle:
            header = _read_header(handle.readline(), self.path)
        if header.get("config_sha256") != self.config_sha256:
            raise ConfigError(
                f"{self.path}: rows were produced under another configuration "
                f"(config_sha256 {header.get('config_sha256')} != {self.config_sha256}); "
                "use another output folder or pass --restart"
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

    def done(self, key: str) -> bool:
        """True iff a row for this item key is already in the journal (with ``keep_rows``
        off: was in it when the journal was opened)."""
        return key in self.keys

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row and flush it, so a crash loses at most the row being written."""
        if self._handle is None:
            raise ValueError("journal is closed")
        key = str(row[self.key_field])
        try:
            self._handle.write(orjson.dumps(row, option=_SORT) + b"\n")
            self._handle.flush()
        except OSError as exc:  # a full disk: rows already written stay usable
            raise OutputFileError(self.path, exc) from None
        if self.keep_rows:
            self.keys.add(key)
            self.existing[key] = dict(row)

    def close(self) -> None:
        """Flush, fsync and close the journal."""
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def __enter__(self) -> ResumableJsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
