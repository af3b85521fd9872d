"""USPTO CSV layout (``id,class,reactants>reagents>production``) to schema-1 corpus records.

Each CSV row becomes one record: ``reaction_id`` ``<file stem>:<line>`` (the ``id`` column
is a patent number shared by many reactions; when two input files share a stem, each gets
the shortest trailing part of its path that tells them apart, ``a/test:2`` and
``b/test:2``, so no two files give the same ids), the patent number as ``group_key`` (so one
patent's reactions share a split), the class as ``reaction_class`` (omitted when ``UNK``),
each reactant molecule as its own unmapped SMILES, the product side as the one accepted
product multiset, and the mapped reaction text as ``mapped_reaction`` for template
extraction. Atom maps never reach ``reactants``: they leak the reaction centre. Reagents are
left out, as the corpus schema asks. A component RDKit cannot read is written as given, so
the benchmark counts it (``unparseable_smiles``) instead of this step hiding it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import try_canonical_smiles
from chemgauge.errors import InputFileError
from chemgauge.eval.atomic import atomic_open
from chemgauge.eval.lines import Line, parse_delimited, read_lines
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.forward.corpus import CORPUS_SCHEMA_VERSION

__all__ = ["USPTO_COLUMN", "id_prefixes", "uspto_lines", "uspto_records", "write_uspto_corpus"]

USPTO_COLUMN = "reactants>reagents>production"


def _unmapped_components(side: str) -> list[str]:
    """Each component unmapped and canonical; an unparsable one is kept verbatim so the
    corpus loader counts it as ``unparseable_smiles`` instead of it vanishing here."""
    return [try_canonical_smiles(text) or text for text in side.split(".") if text]


def id_prefixes(paths: Sequence[str | Path]) -> list[str]:
    """One reaction-id prefix per file: the stem, or the shortest trailing path part (without
    the suffix) that no other file shares; the same file given twice is an error."""
    resolved = [Path(p).resolve() for p in paths]
    for index, path in enumerate(resolved):
        if path in resolved[:index]:
            raise InputFileError("the same file is given twice", path=paths[index])
    parts = [(*p.parent.parts, p.stem) for p in resolved]
    prefixes = []
    for own in parts:
        depth = 1
        while any(o != own and o[-depth:] == own[-depth:] for o in parts) and depth < len(own):
            depth += 1
        prefixes.append("/".join(own[-depth:]).lstrip("/"))
    return prefixes


def _rows(
    path: str | Path, prefix: str | None = None
) -> Iterator[tuple[Line, dict[str, Any] | None]]:
    """Each line of one USPTO CSV with its record, or ``None`` and the line's problem set
    (not UTF-8, bad quoting, wrong column count, not a reaction); the header must read."""
    stem = prefix or Path(path).stem
    lines = read_lines(path, keep_undecodable=True)
    first = next(lines, None)
    header = [] if first is None or first.problem else parse_delimited(first.text)
    if isinstance(header, str) or USPTO_COLUMN not in header:
        raise InputFileError(f"CSV header has no {USPTO_COLUMN!r} column", path=path, line=1)
    column = {name: index for index, name in reversed(list(enumerate(header)))}
    for line in lines:
        if line.problem is not None:
            yield line, None
            continue
        if not line.text.strip():
            continue
        cells = parse_delimited(line.text)
        if isinstance(cells, str):
            yield line._replace(problem=cells), None
            continue
        if len(cells) != len(header):
            problem = f"{len(cells)} columns where the header has {len(header)}"
            yield line._replace(problem=problem), None
            continue
        text = cells[column[USPTO_COLUMN]].strip()
        parts = text.split(">")
        if len(parts) != 3:
            yield line._replace(problem="reaction needs reactants>reagents>products"), None
            continue
        record: dict[str, Any] = {
            "schema_version": CORPUS_SCHEMA_VERSION,
            "reaction_id": f"{stem}:{line.number}",
            "reactants": _unmapped_components(parts[0]),
            "accepted_products": [_unmapped_components(parts[2])],
        }
        reaction_class = cells[column["class"]].strip() if "class" in column else ""
        if reaction_class and reaction_class.upper() != "UNK":
            record["reaction_class"] = reaction_class
        patent = cells[column["id"]].strip() if "id" in column else ""
        if patent:
            record["group_key"] = patent
        record["mapped_reaction"] = text
        yield line, record


def uspto_records(
    path: str | Path, prefix: str | None = None, stats: RejectionStats | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every data row of one USPTO CSV file (ids ``<prefix>:<line>``,
    the prefix defaulting to the file's stem); a line that cannot be
    read (see :mod:`chemgauge.eval.lines`) is counted in ``stats`` by reason, or without
    ``stats`` is an error naming file and line."""
    if stats is not None and stats.path is None:
        stats.path = str(path)
    for line, record in _rows(path, prefix):
        if record is not None:
            yield line.number, record
            continue
        problem = line.problem or ""
        reason = "invalid_utf8" if problem.startswith("not valid UTF-8") else "malformed_row"
        if stats is None:
            raise InputFileError(problem, path=path, line=line.number, value=line.text)
        stats.reject(line.number, reason, line.text, problem)


def uspto_lines(path: str | Path) -> Iterator[Line]:
    """The records of one CSV as lines of JSON text, ready for the corpus builder; a line
    that cannot be read keeps its problem, so the corpus counts it (``malformed_json``)."""
    for line, record in _rows(path):
        if record is None:
            yield line
        else:
            yield Line(line.number, orjson.dumps(record).decode())


def write_uspto_corpus(
    paths: Sequence[str | Path], out: str | Path, stats: Sequence[RejectionStats] = ()
) -> int:
    """Convert CSV files (in the order given) into one corpus JSONL, atomically; returns rows.

    ``stats`` (one per file) receive the lines that could not be read; without them, the
    first such line is an error naming file and line."""
    counted: list[RejectionStats | None] = [*stats] or [None] * len(paths)
    prefixes = id_prefixes(paths)
    rows = 0

    def lines() -> Iterator[bytes]:
        nonlocal rows
        for path, prefix, tally in zip(paths, prefixes, counted, strict=True):
            for _, record in uspto_records(path, prefix, tally):
                rows += 1
                yield orjson.dumps(record) + b"\n"

    with atomic_open(out) as handle:
        for line in lines():
            handle.write(line)
    return rows
