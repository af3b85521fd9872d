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

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.forward.corpus import CORPUS_SCHEMA_VERSION
from chemgauge.chem import try_canonical_smiles
from chemgauge.errors import InputFileError
from chemgauge.eval.records import atomic_write_bytes

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


def uspto_records(
    path: str | Path, prefix: str | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every data row of one USPTO CSV file (ids ``<prefix>:<line>``,
    the prefix defaulting to the file's stem)."""
    stem = prefix or Path(path).stem
    try:
        handle = open(path, encoding="utf-8", newline="")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputFileError(f"cannot open file ({exc.strerror})", path=path) from None
    with handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        if USPTO_COLUMN not in fields:
            raise InputFileError(f"CSV header has no {USPTO_COLUMN!r} column", path=path, line=1)
        for row in reader:
            line = reader.line_num
            text = (row.get(USPTO_COLUMN) or "").strip()
            parts = text.split(">")
            if len(parts) != 3:
                raise InputFileError(
                    "reaction needs reactants>reagents>products", path=path, line=line, value=text
                )
            record: dict[str, Any] = {
                "schema_version": CORPUS_SCHEMA_VERSION,
                "reaction_id": f"{stem}:{line}",
                "reactants": _unmapped_components(parts[0]),
                "accepted_products": [_unmapped_components(parts[2])],
            }
            reaction_class = (row.get("class") or "").strip()
            if reaction_class and reaction_class.upper() != "UNK":
                record["reaction_class"] = reaction_class
            patent = (row.get("id") or "").strip()
            if patent:
                record["group_key"] = patent
            record["mapped_reaction"] = text
            yield line, record


def uspto_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """The records of one CSV as ``(line, JSON text)``, ready for the corpus builder."""
    for line, record in uspto_records(path):
        yield line, orjson.dumps(record).decode()


def write_uspto_corpus(paths: Sequence[str | Path], out: str | Path) -> int:
    """Convert CSV files (in the order given) into one corpus JSONL, atomically; returns rows."""
    lines = [
        orjson.dumps(record) + b"\n"
        for path, prefix in zip(paths, id_prefixes(paths), strict=True)
        for _, record in uspto_records(path, prefix)
    ]
    atomic_write_bytes(out, b"".join(lines))
    return len(lines)
