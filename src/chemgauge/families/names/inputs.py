"""Reading (structure, name) pairs from TSV, CSV or JSONL, with every rejection counted.

Pairs files stream (:func:`iter_pairs`); a SMILES file for an external namer is read whole,
as the namer takes it in one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.chem import describe_parse_failure, try_parse_smiles
from chemgauge.errors import InputFileError
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.lines import parse_delimited, read_lines
from chemgauge.eval.rejections import RejectionStats

__all__ = ["NamePair", "count_lines", "iter_pairs", "read_pairs", "read_smiles_file"]

_FORMATS = (".tsv", ".csv", ".jsonl")


@dataclass(frozen=True, slots=True)
class NamePair:
    """One input structure and the name a generator gave it (``None`` if none was given)."""

    item_id: str
    line: int
    smiles: str
    name: str | None
    namer_status: str | None = None  # an open namer's outcome on the structure


def _table_records(
    path: Path, delimiter: str, stats: RejectionStats
) -> Iterator[tuple[int, dict[str, str]]]:
    """Check the header now; then stream (line, record) pairs, counting malformed records.

    Each physical line is one record (:func:`~chemgauge.eval.lines.parse_delimited`): a stray
    quote is that line's ``malformed_row``, never a merge of two rows; a line that is not
    UTF-8 is ``invalid_utf8``.
    """
    lines = read_lines(path, keep_undecodable=True)
    first = next(lines, None)
    if first is None:
        raise InputFileError("file is empty (expected a header with smiles and name)", path=path)
    if first.problem is not None:
        raise InputFileError(first.problem, path=path, line=1, value=first.text)
    cells = parse_delimited(first.text, delimiter)
    if isinstance(cells, str):
        raise InputFileError(f"unreadable header ({cells})", path=path, line=1)
    header = [h.strip() for h in cells]
    repeated = sorted({h for h in header if h and header.count(h) > 1})
    if repeated:
        raise InputFileError(
            f"duplicate column name(s) {', '.join(repeated)} in the header {header}: "
            "each column must be named once",
            path=path,
            line=1,
        )
    missing = [c for c in ("smiles", "name") if c not in header]
    if missing:
        raise InputFileError(
            f"missing column(s) {', '.join(missing)}; the header has {header}", path=path, line=1
        )

    def records() -> Iterator[tuple[int, dict[str, str]]]:
        for line in lines:
            if line.problem is not None:
                stats.reject(line.number, "invalid_utf8", line.text, line.problem)
                continue
            row = parse_delimited(line.text, delimiter) if line.text.strip() else []
            if isinstance(row, str):
                stats.reject(line.number, "malformed_row", line.text, row)
                continue
            if not row:
                continue
            # as csv.DictReader: a missing cell is empty, cells past the header are dropped
            yield (
                line.number,
                {h: row[i] if i < len(row) else "" for i, h in enumerate(header) if h},
            )

    return records()


# Input SMILES RDKit reads, remembered so a structure repeated in a corpus is parsed once
# here (the parse only checks it: matching keys it again in a worker). Cleared when full.
_VALID_LIMIT = 100_000


def _accepted(
    raw: Iterable[tuple[int, dict[str, Any]]], stats: RejectionStats
) -> Iterator[NamePair]:
    seen: set[str] = set()
    valid: set[str] = set()
    for number, record in raw:
        smiles = record.get("smiles")
        name = record.get("name")
        excerpt = f"{smiles}\t{name}"
        if smiles is not None and not isinstance(smiles, str):
            kind = type(smiles).__name__
            stats.reject(number, "smiles_not_a_string", excerpt, f"smiles is a JSON {kind}")
            continue
        if not smiles or not smiles.strip():
            stats.reject(number, "empty_smiles", excerpt)
            continue
        if name is not None and not isinstance(name, str):
            stats.reject(number, "name_not_a_string", excerpt)
            continue
        if smiles not in valid:
            if try_parse_smiles(smiles.strip()) is None:
                stats.reject(number, "unparseable_smiles", excerpt, describe_parse_failure(smiles))
                continue
            if len(valid) >= _VALID_LIMIT:
                valid.clear()
            valid.add(smiles)
        item_id = str(record.get("id") or number)
        if item_id in seen:
            stats.reject(number, "duplicate_id", excerpt, f"id {item_id!r} seen before")
            continue
        seen.add(item_id)
        stats.accepted += 1
        yield NamePair(item_id, number, smiles.strip(), name)


def _records(source: Path, stats: RejectionStats) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) of every well-formed record; malformed lines are counted in ``stats``."""
    suffix = source.suffix.lower()
    if suffix == ".jsonl":
        return read_jsonl(source, stats)
    return _table_records(source, "\t" if suffix == ".tsv" else ",", stats)


def iter_pairs(path: str | Path, stats: RejectionStats) -> Iterator[NamePair]:
    """Stream pairs by extension; bad rows are counted in ``stats`` with their line numbers.

    Before this returns, the file is checked the way a whole-file read would check it, with
    the same errors and counts in the same order: format, decoding, header, then malformed
    lines (counted first, in file order); in strict mode every row's checks too, so no pair
    of a file that will be refused is ever yielded. Pairs are then read one at a time, so
    ``stats`` is complete once the stream is exhausted. The ids seen so far are kept (one
    short string a pair) to reject a repeated id.
    """
    source = Path(path)
    stats.path = str(source)
    suffix = source.suffix.lower()
    if suffix not in _FORMATS:
        raise InputFileError(
            f"unknown format {suffix!r}; use one of {', '.join(_FORMATS)}", path=path
        )
    if not source.is_file():
        raise InputFileError("file not found" if not source.exists() else "not a file", path=path)
    for _ in _records(source, stats):
        pass
    if stats.strict:
        ahead = RejectionStats(path=stats.path, strict=True)
        for _ in _accepted(_records(source, RejectionStats()), ahead):
            pass
    return _accepted(_records(source, RejectionStats()), stats)


def read_pairs(path: str | Path, stats: RejectionStats) -> list[NamePair]:
    """All pairs of a file at once (see :func:`iter_pairs`); for small inputs and tests."""
    return list(iter_pairs(path, stats))


def count_lines(path: str | Path) -> int:
    """Physical lines in a text file (the progress total; undecodable lines count too)."""
    return sum(1 for _ in read_lines(path, keep_undecodable=True))


def read_smiles_file(path: str | Path, stats: RejectionStats) -> list[NamePair]:
    """Structures to name with an external namer: first token a SMILES, optional second an id
    (the line number without one); a repeated id is a counted rejection, as in pair files."""
    source = Path(path)
    stats.path = str(source)
    pairs: list[NamePair] = []
    seen: set[str] = set()
    for number, text, *_ in read_lines(source, stats):
        tokens = text.split()
        if not tokens:
            continue
        if try_parse_smiles(tokens[0]) is None:
            stats.reject(number, "unparseable_smiles", text, describe_parse_failure(tokens[0]))
            continue
        item_id = tokens[1] if len(tokens) > 1 else str(number)
        if item_id in seen:
            stats.reject(number, "duplicate_id", text, f"id {item_id!r} seen before")
            continue
        seen.add(item_id)
        stats.accepted += 1
        pairs.append(NamePair(item_id, number, tokens[0], None))
    return pairs
