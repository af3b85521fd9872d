"""One line reader for every text input: bytes split into lines first, each decoded alone.

A file is split on ``\\n``, ``\\r\\n`` and a lone ``\\r`` before anything is decoded, so one
bad byte spoils only its own line: it comes out as a :class:`Line` whose ``problem`` says
why (the caller counts it as ``invalid_utf8`` with its true line number and goes on, or
stops under ``--strict``). A UTF-8 byte-order mark at the start of a file is stripped,
always. CSV and TSV lines are parsed one physical line at a time
(:func:`parse_delimited`): a quote left open, a quoted field running over a line end or a
field over :data:`FIELD_LIMIT` characters is that line's counted problem, and never merges
two rows. Multi-line quoted fields are therefore not supported: each line of one is counted.

Standard library only (the p2s task loader and scorer run without chemgauge's dependencies).
"""

from __future__ import annotations

import csv
import errno
import io
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, NamedTuple, Protocol

from chemgauge.errors import InputFileError, MissingInputError

__all__ = [
    "BOM",
    "FIELD_LIMIT",
    "Line",
    "Reject",
    "RejectSink",
    "check_input_file",
    "input_error",
    "open_input",
    "open_problem",
    "parse_delimited",
    "read_document",
    "read_lines",
    "read_span",
    "wide_encoding",
]

BOM = b"\xef\xbb\xbf"
# Largest CSV/TSV field accepted (characters); above it the line is a counted rejection.
FIELD_LIMIT = 16 * 1024 * 1024

# A rejection sink: (line number, reason, offending text, detail), e.g. RejectionStats.reject.
Reject = Callable[[int, str, str, str], None]


class RejectSink(Protocol):
    """Anything with a ``reject`` sink and a ``path`` (``RejectionStats``)."""

    path: str | None

    def reject(self, line: int, reason: str, text: str, detail: str = "") -> None:
        """Count one rejected line."""


class Line(NamedTuple):
    """One physical line: number (1-based), text without its ending, byte span, and why the
    bytes are not text (``None`` when they are; the text is then a lossy decoding, shown in
    diagnostics only). The span excludes a leading BOM, so it reads back as the text."""

    number: int
    text: str
    problem: str | None = None
    offset: int = 0
    size: int = 0


def open_problem(path: str | Path, exc: OSError) -> str:
    """Why an input cannot be opened, exactly (not "file not found" for a directory)."""
    if isinstance(exc, FileNotFoundError):
        broken = os.path.islink(path)
        return "broken symlink (its target does not exist)" if broken else "file not found"
    if isinstance(exc, IsADirectoryError):
        return "expected a file, found a directory"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(exc, NotADirectoryError):
        return "a folder on the path is a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot open file ({exc.strerror or type(exc).__name__})"


def input_error(path: str | Path, exc: OSError) -> InputFileError:
    """The error naming an input that cannot be opened, with the exact cause (a missing one
    is a :class:`MissingInputError`, exit status 3)."""
    missing = isinstance(exc, FileNotFoundError)
    return (MissingInputError if missing else InputFileError)(open_problem(path, exc), path=path)


def check_input_file(path: str | Path) -> None:
    """Refuse, with the exact cause, an input that is not a readable regular file (checked
    without opening it, so a FIFO is never read by a check)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise input_error(path, exc) from None
    if stat.S_ISDIR(mode):
        raise InputFileError("expected a file, found a directory", path=path)
    if not stat.S_ISREG(mode):
        raise InputFileError("not a regular file (a FIFO, socket or device)", path=path)
    if not os.access(path, os.R_OK):
        raise InputFileError("permission denied", path=path)


def open_input(path: str | Path) -> IO[bytes]:
    """Open an input file for binary reading; anything but a readable regular file (or a
    pipe/FIFO, read as a stream) is an :class:`InputFileError` with its exact cause."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise input_error(path, exc) from None
    return handle


def _decode(raw: bytes) -> tuple[str, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        lossy = raw.decode("utf-8", "backslashreplace")
        return lossy, f"not valid UTF-8 ({exc.reason} at byte {exc.start + 1} of the line)"


_WIDE_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
)


def wide_encoding(prefix: bytes) -> str | None:
    """The encoding a file's first bytes show when it is UTF-16 or UTF-32 instead of UTF-8
    (a byte-order mark, or NUL bytes in every other or every fourth place), else ``None``."""
    for mark, name in _WIDE_BOMS:
        if prefix.startswith(mark):
            return name
    sample = prefix[:64]
    if len(sample) < 8 or sample.count(0) < len(sample) // 3:
        return None
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    fourths = [sample[i::4].count(0) for i in range(4)]
    quarter = len(sample) // 4
    if fourths[1] >= quarter - 1 and fourths[2] >= quarter - 1:
        return "UTF-32 (little-endian)" if fourths[0] < quarter // 2 else "UTF-32 (big-endian)"
    if odd >= len(sample) // 2 - 1 and even < len(sample) // 8:
        return "UTF-16 (little-endian)"
    if even >= len(sample) // 2 - 1 and odd < len(sample) // 8:
        return "UTF-16 (big-endian)"
    return None


def _refuse_wide(prefix: bytes, where: str | Path | None) -> None:
    name = wide_encoding(prefix)
    if name is not None:
        raise InputFileError(
            f"the file is {name} text, not UTF-8 (save it as UTF-8 and run again)", path=where
        )


def read_lines(
    source: str | Path | IO[bytes] | bytes,
    reject: Reject | RejectSink | None = None,
    *,
    keep_undecodable: bool = False,
    name: str | Path | None = None,
) -> Iterator[Line]:
    """The one line reader: every line of a file (a path), an open binary stream (standard
    input) or bytes already in memory, split and decoded as described above, streaming.

    A line that is not UTF-8 is yielded with its ``problem`` when ``keep_undecodable`` (the
    caller reports it); otherwise it goes to ``reject`` as ``invalid_utf8`` and is skipped
    (``reject`` is a sink or an object with a ``reject`` method, such as
    :class:`~chemgauge.eval.rejections.RejectionStats`, whose unset ``path`` becomes the
    file's), and without a sink it is an :class:`InputFileError` naming the file and line
    (``name`` names bytes or a stream in errors). A file that is UTF-16 or UTF-32 text is an
    error saying so, before any line is read.
    """
    sink: Reject | None = reject.reject if hasattr(reject, "reject") else reject  # type: ignore[union-attr]
    where = source if isinstance(source, (str, Path)) else name
    if where is not None and reject is not None and getattr(reject, "path", "") is None:
        reject.path = str(where)  # type: ignore[union-attr]
    if isinstance(source, (str, Path)):
        with open_input(source) as handle:
            _refuse_wide(_peek(handle), where)
            yield from _decoded(_split(handle), where, sink, keep_undecodable)
    elif isinstance(source, bytes):
        _refuse_wide(source[:64], where)
        yield from _decoded(_split(io.BytesIO(source)), where, sink, keep_undecodable)
    else:
        _refuse_wide(_peek(source), where or "standard input")
        yield from _decoded(_split(source), where, sink, keep_undecodable)


def _peek(handle: IO[bytes]) -> bytes:
    """The first bytes of a stream without consuming them (a buffered reader's peek)."""
    peek = getattr(handle, "peek", None)
    try:
        return bytes(peek(64)[:64]) if peek is not None else b""
    except OSError:
        return b""


def _decoded(
    lines: Iterator[Line], where: str | Path | None, sink: Reject | None, keep: bool
) -> Iterator[Line]:
    for line in lines:
        if line.problem is None or keep:
            yield line
        elif sink is not None:
            sink(line.number, "invalid_utf8", line.text, line.problem)
        else:
            raise InputFileError(line.problem, path=where, line=line.number, value=line.text)


def read_span(handle: IO[bytes], span: Line | tuple[int, int]) -> bytes:
    """The bytes of a line again, from a handle opened in binary mode (``(offset, size)``
    works too, for callers that keep only those)."""
    offset, size = (span.offset, span.size) if isinstance(span, Line) else span
    handle.seek(offset)
    return handle.read(size)


def _split(handle: IO[bytes]) -> Iterator[Line]:
    offset = number = 0
    first = True
    for chunk in handle:
        # lines end at \n, \r\n or a lone \r (universal newlines); a chunk ends at \n or EOF
        for raw in chunk.splitlines(keepends=True) if b"\r" in chunk else (chunk,):
            number += 1
            size = len(raw)
            start = offset
            offset += size
            if first:
                first = False
                if raw.startswith(BOM):
                    raw, start, size = raw[3:], start + 3, size - 3
            body = raw.rstrip(b"\r\n")
            text, problem = _decode(body)
            yield Line(number, text, problem, start, size)


def read_document(path: str | Path) -> bytes:
    """A whole file (a JSON document) with a leading BOM removed; exact open errors."""
    with open_input(path) as handle:
        try:
            data = handle.read()
        except OSError as exc:
            raise input_error(path, exc) from None
    _refuse_wide(data[:64], path)
    return data[3:] if data.startswith(BOM) else data


def _raise_field_limit() -> None:
    # The csv module's limit is process-wide (128 KiB by default); raise it once so a long
    # field is our counted rejection, not csv's error.
    if csv.field_size_limit() < FIELD_LIMIT + 1:
        csv.field_size_limit(FIELD_LIMIT + 1)


def parse_delimited(text: str, delimiter: str = ",") -> list[str] | str:
    """The cells of one CSV/TSV line, or why it cannot be read (quote left open, text after a
    closing quote, a field over :data:`FIELD_LIMIT` characters)."""
    if len(text) > FIELD_LIMIT and max(map(len, text.split(delimiter))) > FIELD_LIMIT:
        return f"a field is longer than {FIELD_LIMIT:,} characters"
    _raise_field_limit()
    try:
        return next(csv.reader((text,), delimiter=delimiter, strict=True), [])
    except csv.Error as exc:
        message = str(exc)
        if "unexpected end of data" in message or "newline inside string" in message:
            return "a quoted field is not closed on this line (multi-line fields are not read)"
        return f"malformed quoting ({message})"
