"""Run the coverage instrument: one OPSIN call per distinct emitted name, rows and a report.

The run streams: pairs are scored a block at a time (:func:`score_pairs`; names, and
(input, read-back) matches, are deduplicated within the block), each block's rows are
journaled as it finishes, and the report is folded from the rows as they are read back from
the journal in input order (:class:`RowSummary`: per-lens counts and the first
``MAX_WRONG_LISTED`` wrong rows). What grows with the corpus is a short key or an int per
pair, never a row: the ids seen (to reject a repeat) and the ids in input order, and one
journal offset per row while the rows file is written (:func:`journal_rows`). OPSIN
answers are not shared across blocks: a name repeated far apart is read back once a block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from chemgauge.benchmarks.names.inputs import NamePair
from chemgauge.benchmarks.names.metrics import (
    LENSES,
    CoverageTally,
    RowClass,
    RowResult,
    classify_parsed,
    classify_row,
    is_abstention,
)
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    base_provenance,
    build_envelope,
    record_input,
)
from chemgauge.eval.executors import Executor, ItemFailure, SerialExecutor
from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.eval.records import RejectionStats, iter_journal_by_keys

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "CoverageConfig",
    "ReadBack",
    "RowSummary",
    "build_report",
    "confidently_wrong_rows",
    "journal_rows",
    "score_pairs",
]

REPORT_SCHEMA_VERSION = 1
#: The row field the envelope's ``counts.by_status`` counts (the seed's house lens).
STATUS_FIELD = "strict"
MAX_WRONG_LISTED = 200


@dataclass(frozen=True, slots=True)
class ReadBack:
    """What the round trip returned for one name: a SMILES or a reason."""

    smiles: str | None
    status: str
    error: str | None = None


ResolveBatch = Callable[[Sequence[str]], Sequence[ReadBack]]


@dataclass(frozen=True)
class CoverageConfig:
    """What decides a row's class: abstention markers and which lenses are reported."""

    abstain_markers: tuple[str, ...] = ()
    pin_pct: float | None = None

    def describe(self) -> dict[str, Any]:
        """Config for hashing (every field changes results)."""
        return {**asdict(self), "lenses": dict(LENSES)}


@dataclass(frozen=True, slots=True)
class ClassifyChunk:
    """Picklable chunk function: lens classes for (input, read-back) pairs, in order."""

    def __call__(self, chunk: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [
            {lens: classify_parsed(smiles, parsed, lens).value for lens in LENSES}
            for smiles, parsed in chunk
        ]


def score_pairs(
    pairs: Sequence[NamePair],
    resolve: ResolveBatch,
    config: CoverageConfig,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Classify every pair; names are read back in one batch of distinct emitted names.

    Matching read-backs is the expensive part (the parity lens enumerates tautomers), so
    distinct (input, read-back) pairs are matched once, on ``executor`` when given.
    """
    emitted = [
        p.name
        for p in pairs
        if p.name is not None and not is_abstention(p.name, config.abstain_markers)
    ]
    distinct = list(dict.fromkeys(emitted))
    answers = list(resolve(distinct))
    if len(answers) != len(distinct):
        raise RuntimeError(f"round trip returned {len(answers)} answers for {len(distinct)} names")
    lookup = dict(zip(distinct, answers, strict=True))
    to_match = list(
        dict.fromkeys(
            (p.smiles, smiles)
            for p in pairs
            if p.name in lookup and (smiles := lookup[p.name].smiles)
        )
    )
    runner = executor or SerialExecutor()
    matched: dict[tuple[str, str], dict[str, str]] = {}
    results = runner.map(ClassifyChunk(), to_match)
    for key, classes in zip(to_match, results, strict=True):
        if isinstance(classes, ItemFailure):
            # Matching crashed twice: fail closed, as the seed's matchers do.
            classes = dict.fromkeys(LENSES, RowClass.CONFIDENTLY_WRONG.value)
        matched[key] = classes
    rows: list[dict[str, Any]] = []
    for pair in pairs:
        result = classify_row(
            pair.smiles,
            pair.name,
            lambda n: lookup[n].smiles,
            markers=config.abstain_markers,
            lenses=(),
        )
        if result.opsin_smiles:
            result = replace(
                result,
                classes={
                    k: RowClass(v) for k, v in matched[(pair.smiles, result.opsin_smiles)].items()
                },
            )
        elif result.emitted:
            result = replace(result, classes=dict.fromkeys(LENSES, RowClass.UNPARSEABLE))
        else:
            result = replace(result, classes=dict.fromkeys(LENSES, RowClass.ABSTAINED))
        answer = lookup.get(pair.name) if result.emitted and pair.name is not None else None
        rows.append(
            {
                "id": pair.item_id,
                "line": pair.line,
                "smiles": pair.smiles,
                "name": pair.name,
                "emitted": result.emitted,
                "opsin_parsed": result.opsin_parsed,
                "opsin_smiles": result.opsin_smiles,
                "opsin_status": None if answer is None else answer.status,
                "opsin_error": None if answer is None else answer.error,
                **{lens: result.classes[lens].value for lens in LENSES},
            }
        )
    return rows


def _row_result(row: dict[str, Any]) -> RowResult:
    return RowResult(
        row["smiles"],
        row["name"],
        row["emitted"],
        row["opsin_parsed"],
        row["opsin_smiles"],
        {lens: RowClass(row[lens]) for lens in LENSES},
    )


def _wrong_entry(row: dict[str, Any], lenses: Sequence[str]) -> dict[str, Any] | None:
    """A row's listing as confidently wrong (both structures and the lenses), or ``None``."""
    wrong_under = [lens for lens in lenses if row[lens] == RowClass.CONFIDENTLY_WRONG]
    if not wrong_under:
        return None
    return {
        "id": row["id"],
        "smiles": row["smiles"],
        "name": row["name"],
        "opsin_smiles": row["opsin_smiles"],
        "wrong_under": wrong_under,
    }


def confidently_wrong_rows(
    rows: Iterable[dict[str, Any]], lenses: Sequence[str]
) -> list[dict[str, Any]]:
    """Every row wrong under at least one lens, with both structures and the lenses."""
    return [entry for r in rows if (entry := _wrong_entry(r, lenses)) is not None]


class RowSummary:
    """What the report needs from the rows, folded in one row at a time.

    Per-lens counts (:class:`CoverageTally`), the first ``MAX_WRONG_LISTED`` confidently
    wrong rows and how many there were: bounded whatever the number of rows.
    """

    def __init__(self) -> None:
        self.tally = CoverageTally()
        self.wrong: list[dict[str, Any]] = []
        self.wrong_total = 0

    def add(self, row: dict[str, Any]) -> None:
        """Count one row (a rows-file row, as journaled)."""
        self.tally.add(_row_result(row))
        entry = _wrong_entry(row, tuple(LENSES))
        if entry is not None:
            self.wrong_total += 1
            if len(self.wrong) < MAX_WRONG_LISTED:
                self.wrong.append(entry)

    def fold(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Pass rows through unchanged, adding each on the way (one pass for several uses)."""
        for row in rows:
            self.add(row)
            yield row


def journal_rows(path: str | Path, keys: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Rows of a closed journal in the order of ``keys`` (input order), whatever the order
    they were journaled in; a key without a row is an error, never a gap."""
    for key, row in zip(keys, iter_journal_by_keys(path, "id", keys), strict=True):
        if row is None:
            raise RuntimeError(f"{path}: no row was journaled for id {key!r}")
        yield row


def build_report(
    rows: Iterable[dict[str, Any]],
    *,
    config: CoverageConfig,
    input_path: str | Path,
    input_stats: RejectionStats,
    engine: dict[str, Any],
    timing: dict[str, float],
    rows_path: str | Path,
    report_path: str | Path | None = None,
    engine_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Aggregate rows into the report (a run envelope) in one pass (``rows`` may be a stream,
    read once); every number is a pure function of the rows.

    ``engine_config`` holds the OPSIN options that can change a read-back (part of the
    config); ``report_path`` is where the report will be written (default: beside the rows).
    """
    summary = RowSummary()
    counts = CountsTally(STATUS_FIELD)
    digest = reproducibility_sha256(counts.feed(summary.fold(rows)), ())
    rows_file = Path(rows_path)
    envelope = build_envelope(
        EnvelopeParts(
            family="names",
            family_schema_version=REPORT_SCHEMA_VERSION,
            config={"coverage": config.describe(), "engine": dict(engine_config or {})},
            inputs=[record_input("input", input_path)],
            provenance=base_provenance({"opsin": engine}),
            rows_path=rows_file,
            reproducibility_sha256=digest,
            timing=timing,
            counts=counts.result(input_stats.counts),
            metrics={
                **summary.tally.result(config.pin_pct),
                "input_stats": input_stats.to_dict(),
                "confidently_wrong_rows": summary.wrong,
                "confidently_wrong_listed_truncated": summary.wrong_total > MAX_WRONG_LISTED,
            },
        ),
        report_path if report_path is not None else rows_file.with_name("report.json"),
    )
    return envelope.model_dump(mode="json")
