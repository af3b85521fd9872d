"""Reading (structure, name) pairs from TSV, CSV or JSONL, with every rejection counted."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.chem import describe_parse_failure, try_canonical_smiles
from chemgauge.errors import InputFileError
from chemgauge.eval.records import RejectionStats, iter_lines, read_jsonl

__all__ = ["NamePair", "read_pairs", "read_smiles_file"]

_FORMATS = (".tsv", ".csv", ".jsonl")


@dataclass(frozen=True, slots=True)
class NamePair:
    """One input structure and the name a generator gave it (``None`` if none was given)."""

    item_id: str
    line: int
    smiles: str
    name: str | None


def _table_rows(
    path: Path, delimiter: str, stats: RejectionStats
) -> list[tuple[int, dict[str, str]]]:
    lines = list(iter_lines(path))
    if not lines:
        raise InputFileError("file is empty (expected a header with smiles and name)", path=path)
    reader = csv.DictReader(
        (text.lstrip("\ufeff") if number == 1 else text for number, text in lines),
        delimiter=delimiter,
    )
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
    except csv.Error as exc:
        raise InputFileError(f"unreadable header ({exc})", path=path, line=1) from None
    missing = [c for c in ("smiles", "name") if c not in header]
    if missing:
        raise InputFileError(
            f"missing column(s) {', '.join(missing)}; the header has {header}", path=path, line=1
        )
    rows: list[tuple[int, dict[str, str]]] = []
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # One bad record (an oversized field, a quote left open): count it and go on.
            number = reader.line_num
            stats.reject(number, "malformed_row", lines[number - 1][1][:200], str(exc))
            continue
        # The source yields one item per physical line, so line_num is the record's last line.
        rows.append((reader.line_num, {k.strip(): (v or "") for k, v in record.items() if k}))
    return rows


def read_pairs(path: str | Path, stats: RejectionStats) -> list[NamePair]:
    """Load pairs by extension; bad rows are counted in ``stats`` with their line numbers."""
    source = Path(path)
    stats.path = str(source)
    suffix = source.suffix.lower()
    if suffix not in _FORMATS:
        raise InputFileError(
            f"unknown format {suffix!r}; use one of {', '.join(_FORMATS)}", path=path
        )
    if not source.is_file():
        raise InputFileError("file not found" if not source.exists() else "not a file", path=path)
    raw: list[tuple[int, dict[str, Any]]]
    if suffix == ".jsonl":
        raw = list(read_jsonl(source, stats))
    else:
        raw = _table_rows(source, "\t" if suffix == ".tsv" else ",", stats)
    pairs: list[NamePair] = []
    seen: set[str] = set()
    for number, record in raw:
        smiles = record.get("smiles")
        name = record.get("name")
        excerpt = f"{smiles}\t{name}"
        if not isinstance(smiles, str) or not smiles.strip():
            stats.reject(number, "empty_smiles", excerpt)
            continue
        if name is not None and not isinstance(name, str):
            stats.reject(number, "name_not_a_string", excerpt)
            continue
        if try_canonical_smiles(smiles.strip()) is None:
            stats.reject(number, "unparseable_smiles", excerpt, describe_parse_failure(smiles))
            continue
        item_id = str(record.get("id") or number)
        if item_id in seen:
            stats.reject(number, "duplicate_id", excerpt, f"id {item_id!r} seen before")
            continue
        seen.add(item_id)
        stats.accepted += 1
        pairs.append(NamePair(item_id, number, smiles.strip(), name))
    return pairs


def read_smiles_file(path: str | Path, stats: RejectionStats) -> list[NamePair]:
    """Structures to name with an external namer: first token a SMILES, optional second an id."""
    source = Path(path)
    stats.path = str(source)
    pairs: list[NamePair] = []
    for number, text in iter_lines(source):
        tokens = text.split()
        if not tokens:
            continue
        if try_canonical_smiles(tokens[0]) is None:
            stats.reject(number, "unparseable_smiles", text, describe_parse_failure(tokens[0]))
            continue
        stats.accepted += 1
        pairs.append(
            NamePair(tokens[1] if len(tokens) > 1 else str(number), number, tokens[0], None)
        )
    return pairs
