"""Python API of name round-trip coverage: what ``chemgauge names coverage`` does, as a call.

>>> import chemgauge.families.names
>>> report = chemgauge.families.names.coverage("names/pairs.tsv", out="runs/names")
>>> report["metrics"]["lenses"]["strict"]["of_emitted_rt"]["rate"]

A pairs file streams: pairs are read, scored and journaled a block at a time, and the rows
file and report are built by reading the journal back in input order, so memory tracks the
block size; what grows with the corpus is one id a pair (see
:mod:`chemgauge.families.names.runner`). With a namer command the namer names every
structure in one batch, so those structures and names are held for the run. The command
line and this module run the same :func:`score_coverage`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import ExecutorConfig, make_executor
from chemgauge.eval.outputs import Output, claim_outputs
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.records import RejectionStats, ResumableJsonlWriter, atomic_write_rows
from chemgauge.families.names.inputs import NamePair, iter_pairs, read_smiles_file
from chemgauge.families.names.runner import (
    CoverageConfig,
    ReadBack,
    build_report,
    journal_rows,
    score_pairs,
)

__all__ = [
    "DEFAULT_MAX_OPSIN_ERRORS",
    "CoverageOptions",
    "check_opsin_errors",
    "check_source",
    "coverage",
    "journal_path",
    "score_coverage",
]

# Pairs are read, scored (names deduplicated) and journaled a block at a time, so memory
# tracks the block and an interrupted run resumes where it stopped.
_BLOCK = 1000
# OPSIN options that change speed or robustness but never an answer.
_TIMING_ONLY = frozenset({"timeout_s", "jvms", "java", "mode", "extra_jvms_after"})
# JVMs beyond the first start once this many names were answered: a JVM's start-up and cold
# JIT cost more than it saves on a shorter run (bench/names_opsin.py: on 2 cores one JVM
# reads a cold list of 1,044 names faster than two).
_EXTRA_JVMS_AFTER = 2000
# Default largest share of emitted names OPSIN may fail on (timeouts, crashes, refusals)
# before the run fails: beyond it the rates describe a different set of names.
DEFAULT_MAX_OPSIN_ERRORS = 0.01


@dataclass(frozen=True)
class CoverageOptions:
    """How a coverage run reads and scores names (the command's flags of the same names)."""

    jobs: int = 2
    radicals: bool = False
    lenient_stereo: bool = False
    abstain_markers: tuple[str, ...] = ()
    pin_pct: float | None = None
    timeout: float = 30.0
    namer_timeout: float = 600.0
    strict: bool = False
    max_opsin_errors: float = DEFAULT_MAX_OPSIN_ERRORS
    restart: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_opsin_errors <= 1.0:
            raise ConfigError(
                f"--max-opsin-errors must be between 0 and 1, got {self.max_opsin_errors}"
            )


def journal_path(output_rows: Path) -> Path:
    """The journal a run keeps beside its rows file until the rows are written."""
    return output_rows.with_name(output_rows.name + ".journal")


def _blocks(
    pairs: Iterable[NamePair], journal: ResumableJsonlWriter, order: list[str]
) -> Iterator[list[NamePair]]:
    """Blocks of pairs not yet journaled, in input order; every pair's id goes to ``order``."""
    block: list[NamePair] = []
    for pair in pairs:
        order.append(pair.item_id)
        if journal.done(pair.item_id):
            continue
        block.append(pair)
        if len(block) >= _BLOCK:
            yield block
            block = []
    if block:
        yield block


def check_source(pairs: Path | None, namer_cmd: str | None, smiles: Path | None) -> None:
    """A run scores a pairs file or a namer command's names for a SMILES file, never both:
    checked before any output is claimed, so a wrong call leaves nothing behind."""
    if (pairs is None) == (namer_cmd is None):
        raise ConfigError("give exactly one of --input (pairs) or --namer-cmd (with --smiles)")
    if namer_cmd is not None and smiles is None:
        raise ConfigError("--namer-cmd needs --smiles FILE with the structures to name")


def _pairs(
    pairs: Path | None,
    namer_cmd: str | None,
    smiles: Path | None,
    options: CoverageOptions,
    stats: RejectionStats,
) -> tuple[Iterable[NamePair], Path]:
    """The pairs to score and the file they come from (the namer's run on ``smiles``)."""
    check_source(pairs, namer_cmd, smiles)
    if pairs is not None:
        # Checked whole before it streams (under --strict every line), so a refused file
        # never leaves a journal: fixing it changes its hash, and the journal with it.
        return iter_pairs(pairs, stats), pairs
    assert smiles is not None  # check_source: a namer command comes with its SMILES file
    from chemgauge.families.names.engine.namer import CommandNamer

    structures = read_smiles_file(smiles, stats)
    names = CommandNamer.from_string(namer_cmd or "", options.namer_timeout).name(
        [p.smiles for p in structures]
    )
    named = [
        NamePair(p.item_id, p.line, p.smiles, n) for p, n in zip(structures, names, strict=True)
    ]
    return named, smiles


def score_coverage(
    *,
    pairs: Path | None = None,
    namer_cmd: str | None = None,
    smiles: Path | None = None,
    output_rows: Path,
    report_file: Path | None,
    options: CoverageOptions,
    progress: Callable[[int], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Score a pairs file, or a namer command's names for a SMILES file, with the real
    OPSIN: rows to ``output_rows``, the report returned (written to ``report_file`` unless
    ``None``). ``progress`` gets input lines as they are done; ``notice`` a resume message.
    The caller checks the outputs and takes the run lock."""
    from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

    stats = RejectionStats(strict=options.strict)
    started = time.perf_counter()
    stream, source = _pairs(pairs, namer_cmd, smiles, options, stats)
    config = CoverageConfig(
        abstain_markers=tuple(sorted(set(options.abstain_markers))), pin_pct=options.pin_pct
    )
    opsin_config = OpsinConfig(
        allow_radicals=options.radicals,
        allow_uninterpretable_stereo=options.lenient_stereo,
        timeout_s=options.timeout,
        jvms=options.jobs,
        extra_jvms_after=_EXTRA_JVMS_AFTER,
    )
    loaded = time.perf_counter()
    opsin_options = {k: v for k, v in asdict(opsin_config).items() if k not in _TIMING_ONLY}
    run_hash = sha256_json(
        {
            "coverage": config.describe(),
            "opsin": opsin_options,
            "input_sha256": sha256_file(source),
        }
    )
    journal_file = journal_path(output_rows)
    journal = ResumableJsonlWriter(
        journal_file,
        config_sha256=run_hash,
        key_field="id",
        restart=options.restart,
        keep_rows=False,
    )
    if journal.keys and notice is not None:
        notice(f"resuming: {len(journal.keys)} rows already done")
    advance = progress or (lambda _n: None)
    order: list[str] = []  # every accepted pair's id, in input order: the rows file's order
    with OpsinRunner(opsin_config) as opsin:

        def resolve(names: Sequence[str]) -> list[ReadBack]:
            return [
                ReadBack(r.smiles, r.status.value, r.error) for r in opsin.names_to_smiles(names)
            ]

        executor = make_executor(ExecutorConfig(kind="local", jobs=options.jobs, chunk_size=16))
        try:
            with journal:
                done = 0  # input lines, so resumed and rejected lines count too
                for block in _blocks(stream, journal, order):
                    for row in score_pairs(block, resolve, config, executor):
                        journal.write(row)
                    advance(block[-1].line - done)
                    done = block[-1].line
        finally:
            executor.close()
        engine = opsin.provenance()
        engine.pop("jar_path", None)  # a machine path, not content: the jar hash identifies it
    scored = time.perf_counter()
    report = build_report(
        journal_rows(journal_file, order),
        config=config,
        input_path=source,
        input_stats=stats,
        engine=engine,
        timing={"load_s": loaded - started, "score_s": scored - loaded},
        rows_path=output_rows,
        report_path=report_file,
        engine_config=opsin_options,
    )
    atomic_write_rows(output_rows, journal_rows(journal_file, order))
    journal_file.unlink(missing_ok=True)
    if report_file is not None:
        write_envelope(report_file, report)
    return report


def check_opsin_errors(
    report: dict[str, Any],
    rows_file: str,
    options: CoverageOptions,
    warn: Callable[[str], None] | None = None,
) -> None:
    """Warn about OPSIN errors; raise when ``strict`` or their share is over the limit."""
    metrics = report["metrics"]
    errors, names = metrics["opsin_error"], metrics["emitted"]
    if not errors:
        return
    share = errors / names
    kinds = ", ".join(f"{k}: {n}" for k, n in metrics["opsin_error_by_status"].items())
    if warn is not None:
        warn(
            f"warning: OPSIN failed on {errors} of {names} names ({share:.1%}; {kinds}); they "
            f"are opsin_error rows in {rows_file}, in no rate"
        )
    if options.strict:
        raise BackendError(f"--strict: {errors} names hit OPSIN errors; the rows are written")
    if share > options.max_opsin_errors:
        raise BackendError(
            f"{errors} of {names} names ({share:.1%}) hit OPSIN errors, more than "
            f"--max-opsin-errors {options.max_opsin_errors:g}; the rows and report are written "
            "(a timeout: rerun with a larger --timeout)"
        )


def coverage(
    pairs: str | Path | None = None,
    *,
    namer_cmd: str | None = None,
    smiles: str | Path | None = None,
    out: str | Path = "runs/names",
    options: CoverageOptions | None = None,
) -> dict[str, Any]:
    """Score a pairs file (``smiles`` and ``name`` columns), or ``namer_cmd``'s names for
    the structures of ``smiles``, into the run folder ``out`` (``rows.jsonl``,
    ``report.json``); return the report. Too many OPSIN errors raise
    :class:`~chemgauge.errors.BackendError` after the files are written, as the command
    exits non-zero."""
    chosen = options or CoverageOptions()
    folder = Path(out)
    rows, report_file = folder / "rows.jsonl", folder / "report.json"
    pairs_path = None if pairs is None else Path(pairs)
    smiles_path = None if smiles is None else Path(smiles)
    outputs = [Output("out", rows, derived=(journal_path(rows),)), Output("out", report_file)]
    check_source(pairs_path, namer_cmd, smiles_path)
    inputs = [("pairs", pairs_path), ("smiles", smiles_path)]
    with claim_outputs(outputs, inputs, command="chemgauge.families.names.coverage"):
        report = score_coverage(
            pairs=pairs_path,
            namer_cmd=namer_cmd,
            smiles=smiles_path,
            output_rows=rows,
            report_file=report_file,
            options=chosen,
        )
    check_opsin_errors(report, rows.name, chosen)
    return report
