"""Reaction data for single-step retrosynthesis: fold files found by name, three formats.

``data_dir`` is scanned for files whose names end in ``{train,val,test}.{jsonl,csv,smi}``;
the extension picks the format. Two files for one fold, or files in two formats, is an error
listing them; only the fold being evaluated has to exist. Every target is canonicalized
through :mod:`chemgauge.chem` with atom maps stripped; reagents are kept out of scoring; a
bad line is a counted rejection with its line number (an error under ``strict``). Lines are
read by :mod:`chemgauge.eval.lines`: a BOM is stripped, a line that is not UTF-8 is an
``invalid_utf8`` rejection, and a CSV line is parsed on its own (a quoted field cannot span
lines; each line of one is counted).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from chemgauge.chem import ReactionParts, canonical_multiset, split_reaction_smiles
from chemgauge.chem.limits import pinned_limits
from chemgauge.errors import ConfigError, InputFileError, SmilesError
from chemgauge.eval.executors import Executor, ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.jsonl import json_object
from chemgauge.eval.lines import Line, parse_delimited, read_lines
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.retro.syntheseus_verdict import syntheseus_truth

__all__ = [
    "CSV_COLUMN",
    "FOLDS",
    "FORMATS",
    "DataFile",
    "RetroTarget",
    "TargetSet",
    "find_fold_file",
    "iter_targets",
    "load_targets",
    "scan_data_dir",
]

Fold = Literal["train", "val", "test"]
Format = Literal["jsonl", "csv", "smi"]
FOLDS: tuple[Fold, ...] = ("train", "val", "test")
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "smi")
CSV_COLUMN = "reactants>reagents>production"


@dataclass(frozen=True, slots=True)
class DataFile:
    """One fold file and the format its extension names."""

    fold: Fold
    format: Format
    path: Path


@dataclass(frozen=True, slots=True)
class RetroTarget:
    """One evaluation target: a product and its true reactant multiset (canonical, unmapped).

    Attributes:
        target: identity of the target in this data file (``<fold>:<line>``), used to resume.
        line: 1-based line of the reaction in its file.
        source_id: the data's own id column or field, when it has one.
        product: canonical SMILES of the single product.
        reactants: sorted canonical reactant components (multiplicity kept).
        reaction_class: the data's reaction class, ``None`` when absent or ``UNK``.
        syntheseus_reactants: the true reactants as syntheseus reads this line (its own
            canonical SMILES, sorted; ``None`` where syntheseus cannot read the line), so the
            syntheseus-shaped results are syntheseus's own
            (:mod:`~chemgauge.families.retro.syntheseus_verdict`).
    """

    target: str
    line: int
    source_id: str | None
    product: str
    reactants: tuple[str, ...]
    reaction_class: str | None
    syntheseus_reactants: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for rows."""
        theirs = self.syntheseus_reactants
        return {  # by hand: dataclasses.asdict costs more than the rest of a target's spooling
            "target": self.target,
            "line": self.line,
            "source_id": self.source_id,
            "product": self.product,
            "reactants": list(self.reactants),
            "reaction_class": self.reaction_class,
            "syntheseus_reactants": None if theirs is None else list(theirs),
        }


@dataclass
class TargetSet:
    """Targets of one fold file plus the accounting of every line that was not one."""

    file: DataFile
    targets: list[RetroTarget]
    stats: RejectionStats
    truncated_to: int | None = None


def scan_data_dir(data_dir: str | Path) -> dict[Fold, DataFile]:
    """Find fold files by name; ambiguity (two files for a fold, two formats) is an error."""
    root = Path(data_dir)
    if not root.is_dir():
        raise ConfigError(f"data_dir {str(root)!r} is not a directory")
    found: dict[Format, dict[Fold, list[Path]]] = {}
    for path in sorted(p for p in root.iterdir() if p.is_file()):
        for fmt in FORMATS:
            for fold in FOLDS:
                if path.name.endswith(f"{fold}.{fmt}"):
                    found.setdefault(fmt, {}).setdefault(fold, []).append(path)
    if len(found) > 1:
        listing = "; ".join(
            f"{fmt}: {', '.join(p.name for ps in folds.values() for p in ps)}"
            for fmt, folds in sorted(found.items())
        )
        raise ConfigError(f"{root}: fold files in more than one format ({listing})")
    result: dict[Fold, DataFile] = {}
    for fmt, folds in found.items():
        for fold, paths in folds.items():
            if len(paths) > 1:
                names = ", ".join(p.name for p in paths)
                raise ConfigError(f"{root}: more than one {fmt} file for fold {fold!r}: {names}")
            result[fold] = DataFile(fold, fmt, paths[0])
    return result


def find_fold_file(data_dir: str | Path, fold: str) -> DataFile:
    """The one file for ``fold`` in ``data_dir`` (error naming what was found otherwise)."""
    if fold not in FOLDS:
        raise ConfigError(f"unknown fold {fold!r}; choose one of {', '.join(FOLDS)}")
    files = scan_data_dir(data_dir)
    if fold not in files:
        have = ", ".join(f.path.name for f in files.values()) or "no matching files"
        raise ConfigError(
            f"{data_dir}: no file ending in {fold}.{{jsonl,csv,smi}} for fold {fold!r} "
            f"(found: {have})"
        )
    return files[fold]


class _Raw(NamedTuple):
    line: int
    reactants: str
    reagents: str
    products: str
    source_id: str | None
    reaction_class: str | None
    entries: tuple[str, ...] | None = None  # JSONL reactant entries, as written


class _Reject(NamedTuple):
    line: int
    reason: str
    excerpt: str
    detail: str


def _split(line: int, text: str) -> ReactionParts | _Reject:
    """The three sides, or a rejection (a quoted CSV cell may hold whitespace before a '>')."""
    try:
        return split_reaction_smiles(text)
    except SmilesError:
        return _Reject(line, "not_a_reaction", text, "needs reactants>reagents>products")


def _unreadable(line: Line) -> _Reject:
    """A line whose bytes are not UTF-8 text, counted with its own number."""
    return _Reject(line.number, "invalid_utf8", line.text, line.problem or "")


def _csv_records(path: Path) -> Iterator[_Raw | _Reject]:
    """One record per physical line (:func:`~chemgauge.eval.lines.parse_delimited`): a quote
    left open is that line's ``malformed_row``, never a merge with the next line."""
    lines = read_lines(path, keep_undecodable=True)
    first = next(lines, None)
    if first is None:
        raise InputFileError("empty CSV file (no header)", path=path, line=1)
    if first.problem is not None:
        raise InputFileError(first.problem, path=path, line=1, value=first.text)
    header = parse_delimited(first.text)
    if isinstance(header, str):
        raise InputFileError(f"unreadable CSV header ({header})", path=path, line=1)
    if CSV_COLUMN not in header:
        raise InputFileError(
            f"CSV header has no {CSV_COLUMN!r} column", path=path, line=1, value=first.text
        )
    col = header.index(CSV_COLUMN)
    id_col = header.index("id") if "id" in header else None
    class_col = header.index("class") if "class" in header else None
    for line in lines:
        if line.problem is not None:
            yield _unreadable(line)
            continue
        if not line.text.strip():
            continue
        row = parse_delimited(line.text)
        if isinstance(row, str):
            yield _Reject(line.number, "malformed_row", line.text, row)
            continue
        if all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            yield _Reject(
                line.number, "wrong_column_count", line.text, f"{len(row)} != {len(header)}"
            )
            continue
        parts = _split(line.number, row[col])
        if isinstance(parts, _Reject):
            yield parts
            continue
        yield _Raw(
            line.number,
            parts.reactants,
            parts.reagents,
            parts.products,
            row[id_col] if id_col is not None else None,
            row[class_col] if class_col is not None else None,
        )


def _smi_records(path: Path) -> Iterator[_Raw | _Reject]:
    for line in read_lines(path, keep_undecodable=True):
        if line.problem is not None:
            yield _unreadable(line)
            continue
        if not line.text.strip():
            continue
        parts = _split(line.number, line.text)
        if isinstance(parts, _Reject):
            yield parts
            continue
        yield _Raw(line.number, parts.reactants, parts.reagents, parts.products, None, None)


def _smiles_list(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("smiles"), str):
            return None
        out.append(item["smiles"])
    return out


def _jsonl_records(path: Path) -> Iterator[_Raw | _Reject]:
    for entry in read_lines(path, keep_undecodable=True):
        if entry.problem is not None:
            yield _unreadable(entry)
            continue
        line, text = entry.number, entry.text
        if not text.strip():
            continue
        obj = json_object(text)
        if isinstance(obj, str):
            yield _Reject(line, "malformed_json", text, obj)
            continue
        reactants = _smiles_list(obj.get("reactants"))
        products = _smiles_list(obj.get("products"))
        if reactants is None or products is None:
            yield _Reject(
                line, "bad_schema", text, 'needs "reactants" and "products": [{"smiles": ...}]'
            )
            continue
        reagents = obj.get("reagents", "")
        raw_id = obj.get("id", obj.get("identifier"))
        raw_class = obj.get("class", obj.get("reaction_class"))
        yield _Raw(
            line,
            ".".join(reactants),
            reagents if isinstance(reagents, str) else "",
            ".".join(products),
            None if raw_id is None else str(raw_id),
            None if raw_class is None else str(raw_class),
            tuple(reactants),
        )


def _canonical_record(fold: str, raw: _Raw) -> RetroTarget | _Reject:
    line, reactants_text, products_text = raw.line, raw.reactants, raw.products
    source_id, raw_class = raw.source_id, raw.reaction_class
    whole = f"{reactants_text}>>{products_text}"
    if not products_text:
        return _Reject(line, "no_product", whole, "")
    if not reactants_text:
        return _Reject(line, "no_reactants", whole, "")
    try:
        products = canonical_multiset(products_text)
    except SmilesError as exc:
        return _Reject(line, "unparsable_product", whole, exc.reason)
    if len(products) != 1:
        return _Reject(line, "multiple_products", whole, f"{len(products)} product molecules")
    try:
        reactants = canonical_multiset(reactants_text)
    except SmilesError as exc:
        return _Reject(line, "unparsable_reactants", whole, exc.reason)
    cls = None if raw_class is None or raw_class.strip().upper() in ("", "UNK") else raw_class
    if raw.entries is None:
        theirs = syntheseus_truth(reactants_text.split("."), mapped=True)
    else:
        theirs = syntheseus_truth(raw.entries, mapped=False)
    return RetroTarget(
        f"{fold}:{line}",
        line,
        source_id or None,
        products[0],
        reactants,
        cls,
        None if theirs is None else tuple(theirs),
    )


def _canonical_chunk(items: list[tuple[str, _Raw | _Reject]]) -> list[RetroTarget | _Reject]:
    with pinned_limits():  # the limits cannot change within a chunk: read them once
        return [
            raw if isinstance(raw, _Reject) else _canonical_record(fold, raw) for fold, raw in items
        ]


#: Inputs shorter than this are canonicalized in-process (a pool costs more than it saves).
_SERIAL_BELOW = 512
#: Lines per worker chunk: small enough that the last chunks of a fold keep every worker busy.
_CHUNK = 64


def _records(file: DataFile) -> Iterator[_Raw | _Reject]:
    if file.format == "csv":
        return _csv_records(file.path)
    if file.format == "smi":
        return _smi_records(file.path)
    return _jsonl_records(file.path)


def iter_targets(
    file: DataFile,
    stats: RejectionStats,
    *,
    limit: int | None = None,
    executor: ExecutorConfig | None = None,
    runner: Executor | None = None,
) -> Iterator[RetroTarget]:
    """Read and canonicalize a fold file as a stream, in file order; ``limit`` keeps the first
    N data lines. Rejected lines are counted in ``stats`` (which raises under ``strict``);
    memory tracks the executor's window of chunks, not the file. ``runner``: an open
    executor to use (the run's, so its workers start once), left open; otherwise one is
    made from ``executor`` and closed."""
    records = _records(file)
    if limit is not None:
        records = itertools.islice(records, limit)
    head = list(itertools.islice(records, _SERIAL_BELOW))
    config = executor or ExecutorConfig(kind="serial", jobs=1)
    if len(head) < _SERIAL_BELOW:
        config, runner = ExecutorConfig(kind="serial", jobs=1), None
    fed: deque[_Raw | _Reject] = deque()

    def feed() -> Iterator[tuple[str, _Raw | _Reject]]:
        for record in itertools.chain(head, records):
            fed.append(record)
            yield file.fold, record

    owned = runner is None
    if runner is None:
        runner = make_executor(config)
    try:
        for result in runner.map(_canonical_chunk, feed(), chunk_size=_CHUNK):
            record = fed.popleft()
            if isinstance(result, RetroTarget):
                stats.accepted += 1
                yield result
            elif isinstance(result, ItemFailure):
                stats.reject(record.line, "worker_failure", f"line {record.line}", result.detail)
            else:
                stats.reject(result.line, result.reason, result.excerpt, result.detail)
    finally:
        if owned:
            runner.close()


def load_targets(
    file: DataFile,
    *,
    strict: bool = False,
    limit: int | None = None,
    executor: ExecutorConfig | None = None,
) -> TargetSet:
    """Every target of a fold file in memory (:func:`iter_targets`, collected)."""
    stats = RejectionStats(path=str(file.path), strict=strict)
    targets = list(iter_targets(file, stats, limit=limit, executor=executor))
    return TargetSet(file, targets, stats, truncated_to=limit)
