"""Python API of name round-trip coverage: what ``chemgauge names coverage`` does, as a call.

>>> import chemgauge.families.names
>>> report = chemgauge.families.names.coverage("names/pairs.tsv", out="runs/names")
>>> report["metrics"]["lenses"]["strict"]["of_emitted_rt"]["value"]

The keywords are the command's flags by name (``jobs=1`` is ``--jobs 1``; see
:class:`~chemgauge.families.names.config.CoverageConfig`). A pairs file streams: pairs are
read, scored and journaled a block at a time, and the rows file and report are built in one
pass reading the journal back in input order, so memory tracks a few blocks; what grows with
the corpus is one id a pair (see :mod:`chemgauge.families.names.runner`). With a namer
(``model``, or ``namer_cmd`` for the ``command`` namer) the namer names every structure of
``smiles`` in one batch, so those structures and names are held for the run. The command line
and this module run the same :func:`score_coverage`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.atomic import atomic_open, row_line
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import ExecutorConfig, make_executor
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.eval.outputs import Output, claim_outputs
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.config import DEFAULT_MAX_OPSIN_ERRORS, CoverageConfig
from chemgauge.families.names.inputs import NamePair, iter_pairs, read_smiles_file
from chemgauge.families.names.pipeline import score_blocks
from chemgauge.families.names.runner import (
    ReadBack,
    RunMemo,
    build_report,
    journal_rows,
)
from chemgauge.families.names.systems import NAMES_SYSTEMS, build_namer
from chemgauge.report.runs import REPORT_NAME, ROWS_NAME

if TYPE_CHECKING:
    from chemgauge.families.names.engine.runner import OpsinRunner

__all__ = [
    "DEFAULT_MAX_OPSIN_ERRORS",
    "CoverageConfig",
    "check_opsin_errors",
    "check_source",
    "coverage",
    "journal_path",
    "run_outputs",
    "score_coverage",
]

# Pairs are read, scored (names deduplicated) and journaled a block at a time, so memory
# tracks a few blocks and an interrupted run resumes where it stopped. The first blocks are
# smaller (_FIRST_BLOCK, doubling up to _BLOCK): the workers' first matching waits only for
# OPSIN's reading of a short block, the later blocks being read while they match.
_BLOCK = 1000
_FIRST_BLOCK = 64
# Matching groups in flight per worker: results come back in input order, and a slow group
# (a long tautomer search) must not leave the other worker idle behind it.
_GROUPS_IN_FLIGHT = 8
# OPSIN options that change speed or robustness but never an answer.
_TIMING_ONLY = frozenset({"timeout_s", "jvms", "java", "mode", "extra_jvms_after"})
# JVMs beyond the first start once this many names were answered: a JVM's start-up and cold
# JIT cost more than it saves on a shorter run (bench/names_opsin.py: on 2 cores one JVM
# reads a cold list of 1,044 names faster than two).
_EXTRA_JVMS_AFTER = 2000


def journal_path(output_rows: Path) -> Path:
    """The journal a run keeps beside its rows file until the rows are written."""
    return output_rows.with_name(output_rows.name + ".journal")


def _blocks(
    pairs: Iterable[NamePair], journal: ResumableJsonlWriter, order: list[str]
) -> Iterator[list[NamePair]]:
    """Blocks of pairs not yet journaled, in input order (sizes ``_FIRST_BLOCK`` doubling up
    to ``_BLOCK``); every pair's id goes to ``order``."""
    block: list[NamePair] = []
    size = min(_FIRST_BLOCK, _BLOCK)
    for pair in pairs:
        order.append(pair.item_id)
        if journal.done(pair.item_id):
            continue
        block.append(pair)
        if len(block) >= size:
            yield block
            block, size = [], min(2 * size, _BLOCK)
    if block:
        yield block


def _written(rows: Iterable[dict[str, Any]], handle: IO[bytes]) -> Iterator[dict[str, Any]]:
    """Pass rows through, writing each as a rows-file line to ``handle`` on the way."""
    for row in rows:
        handle.write(row_line(row))
        yield row


def check_source(input: Path | None, smiles: Path | None, config: CoverageConfig) -> None:
    """A run scores a pairs file or a namer's names for a SMILES file, never both, and a
    namer must be registered: checked before any output is claimed, so a wrong call leaves
    nothing behind."""
    namer = config.namer
    if (input is None) == (namer is None):
        raise ConfigError(
            "give exactly one of --input (a pairs file) or a namer (--model NAME or "
            "--namer-cmd CMD, with --smiles)"
        )
    if namer is None:
        if smiles is not None:
            raise ConfigError(
                "--smiles is read only by a namer: add --model NAME or --namer-cmd CMD"
            )
        return
    if smiles is None:
        raise ConfigError(f"{config.namer_flag} needs --smiles FILE with the structures to name")
    NAMES_SYSTEMS.get(namer)  # an unknown name fails here, with "did you mean"


def run_outputs(out: Path) -> list[Output]:
    """What a run writes into the folder ``out`` (rows, report, the journal until the end)."""
    rows = out / ROWS_NAME
    return [Output("--out", out, files=(ROWS_NAME, REPORT_NAME), derived=(journal_path(rows),))]


def _pairs(
    input: Path | None,
    smiles: Path | None,
    config: CoverageConfig,
    stats: RejectionStats,
    provenance: dict[str, Any],
) -> tuple[Iterable[NamePair], Path]:
    """The pairs to score and the file they come from (the namer's run on ``smiles``); an
    open namer's provenance goes into ``provenance``."""
    check_source(input, smiles, config)
    if input is not None:
        # Checked whole before it streams (under --strict every line), so a refused file
        # never leaves a journal: fixing it changes its hash, and the journal with it.
        return iter_pairs(input, stats), input
    assert smiles is not None  # check_source: a namer comes with its SMILES file
    structures = read_smiles_file(smiles, stats)
    namer = build_namer(config)
    names = list(namer.name([p.smiles for p in structures]))
    statuses = list(getattr(namer, "statuses", lambda: [None] * len(names))())
    describe = getattr(namer, "provenance", None)
    if describe is not None:
        provenance.update(describe())
    if len(names) != len(structures):
        raise BackendError(
            f"{config.namer_flag} returned {len(names)} names for {len(structures)} "
            "structures; a namer answers each structure once (None or empty: abstained)"
        )
    named = [
        NamePair(p.item_id, p.line, p.smiles, n, status)
        for p, n, status in zip(structures, names, statuses, strict=True)
    ]
    return named, smiles


def score_coverage(
    *,
    input: Path | None = None,
    smiles: Path | None = None,
    out: Path,
    config: CoverageConfig,
    progress: Callable[[int], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Score a pairs file, or a namer's names for a SMILES file, with the real OPSIN into
    the run folder ``out`` (``rows.jsonl``, ``report.json``); return the report.
    ``progress`` gets input lines as they are done; ``notice`` a resume message. The caller
    checks the outputs and takes the run lock."""
    from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

    started = time.perf_counter()
    check_source(input, smiles, config)
    opsin_config = OpsinConfig(
        allow_radicals=config.radicals,
        allow_uninterpretable_stereo=config.lenient_stereo,
        timeout_s=config.timeout,
        jvms=config.jobs,
        extra_jvms_after=_EXTRA_JVMS_AFTER,
    )
    opsin = OpsinRunner(opsin_config)
    # The JVM starts (about a second, in its own process) while the input is checked and
    # hashed; a bad input is still reported first, and the JVM is stopped either way.
    starting = ThreadPoolExecutor(1, thread_name_prefix="opsin-start")
    started_jvm = starting.submit(opsin.start)
    starting.shutdown(wait=False)
    try:
        run = _Run(input, smiles, out, config, started, progress, notice)
        return _score(run, opsin, started_jvm)
    finally:
        with contextlib.suppress(Exception):  # a failed start already raised, or never will
            started_jvm.result()
        opsin.close()


@dataclass(frozen=True)
class _Run:
    """One :func:`score_coverage` call's arguments."""

    input: Path | None
    smiles: Path | None
    out: Path
    config: CoverageConfig
    started: float
    progress: Callable[[int], None] | None
    notice: Callable[[str], None] | None


def _score(run: _Run, opsin: OpsinRunner, started_jvm: Future[None]) -> dict[str, Any]:
    """Read, score, journal and report ``run`` (``started_jvm``: the JVM's start, awaited
    before the first name is sent)."""
    input, smiles, out, config = run.input, run.smiles, run.out, run.config
    progress, notice, started = run.progress, run.notice, run.started
    rows_file, report_file = out / ROWS_NAME, out / REPORT_NAME
    stats = RejectionStats(strict=config.strict)
    namer_provenance: dict[str, Any] = {}
    stream, source = _pairs(input, smiles, config, stats, namer_provenance)
    opsin_config = opsin.config
    loaded = time.perf_counter()
    opsin_options = {k: v for k, v in asdict(opsin_config).items() if k not in _TIMING_ONLY}
    run_hash = sha256_json(
        {
            "coverage": config.describe(),
            "opsin": opsin_options,
            "input_sha256": sha256_file(source),
        }
    )
    journal_file = journal_path(rows_file)
    journal = ResumableJsonlWriter(
        journal_file,
        config_sha256=run_hash,
        key_field="id",
        restart=config.restart,
        keep_rows=False,
    )
    if journal.keys and notice is not None:
        notice(f"resuming: {len(journal.keys)} rows already done")
    advance = progress or (lambda _n: None)
    order: list[str] = []  # every accepted pair's id, in input order: the rows file's order
    started_jvm.result()  # a JVM that could not start fails here, before any row
    with opsin:

        def resolve(names: Sequence[str]) -> list[ReadBack]:
            return [
                ReadBack(r.smiles, r.status.value, r.error) for r in opsin.names_to_smiles(names)
            ]

        executor = make_executor(
            ExecutorConfig(kind="local", jobs=config.jobs, in_flight=_GROUPS_IN_FLIGHT)
        )
        try:
            blocks = _blocks(stream, journal, order)
            with journal:
                done = 0  # input lines, so resumed and rejected lines count too
                for block, rows in score_blocks(blocks, resolve, config, executor, RunMemo()):
                    for row in rows:
                        journal.write(row)
                    advance(block[-1].line - done)
                    done = block[-1].line
        finally:
            executor.close()
        engine = opsin.provenance()
        engine.pop("jar_path", None)  # a machine path, not content: the jar hash identifies it
    scored = time.perf_counter()
    with atomic_open(rows_file) as handle:  # the rows file is written as the report reads it
        passed = _written(journal_rows(journal_file, order), handle)
        report = build_report(
            passed,
            config=config,
            input_path=source,
            input_stats=stats,
            engine=engine,
            timing={"load_s": loaded - started, "score_s": scored - loaded},
            rows_path=rows_file,
            report_path=report_file,
            engine_config=opsin_options,
            namer_provenance=namer_provenance,
        )
        for _row in passed:  # every row is in the file, whatever the report read
            pass
    journal_file.unlink(missing_ok=True)
    write_envelope(report_file, report)
    return report


def check_opsin_errors(
    report: dict[str, Any],
    rows_file: str,
    config: CoverageConfig,
    warn: Callable[[str], None] | None = None,
) -> None:
    """Warn about OPSIN errors; raise under ``--strict`` or when their share is over
    ``--max-opsin-errors`` (the report then says ``complete: false``)."""
    metrics = report["metrics"]
    errors, names = metrics["opsin_error"], metrics["emitted"]
    if not errors:
        return
    share = errors / names
    by_status = metrics["opsin_error_by_status"]
    kinds = ", ".join(f"{k}: {n}" for k, n in by_status.items())
    if warn is not None:
        warn(
            f"warning: OPSIN failed on {errors} of {names} names ({share:.1%}; {kinds}); they "
            f"are opsin_error rows in {rows_file}, inside every denominator, never credited"
        )
    if config.strict:
        raise BackendError(f"--strict: {errors} names hit OPSIN errors; the rows are written")
    if not metrics["complete"]:
        hint = " (timeouts: rerun with a larger --timeout)" if by_status.get("timeout") else ""
        raise BackendError(
            f"{errors} of {names} names ({share:.1%}) hit OPSIN errors, more than "
            f"--max-opsin-errors {config.max_opsin_errors:g}: the run is incomplete; the rows "
            f"and report are written{hint}"
        )


def coverage(
    input: str | Path | None = None,
    *,
    smiles: str | Path | None = None,
    out: str | Path = "runs/names",
    **flags: Any,
) -> dict[str, Any]:
    """Score a pairs file ``input`` (``smiles`` and ``name`` columns), or a namer's names for
    the structures of ``smiles``, into the run folder ``out`` (``rows.jsonl``,
    ``report.json``); return the report.

    ``flags`` are the command's other flags by name, e.g. ``model="command"``,
    ``namer_cmd="python3 names/namer.py"``, ``jobs=1``, ``abstain_marker=("n/a",)``
    (:class:`~chemgauge.families.names.config.CoverageConfig`; an unknown name fails with
    "did you mean"). Too many OPSIN errors raise :class:`~chemgauge.errors.BackendError`
    after the files are written, as the command exits non-zero.
    """
    config = CoverageConfig.from_flags(flags)
    folder = Path(out)
    input_path = None if input is None else Path(input)
    smiles_path = None if smiles is None else Path(smiles)
    check_source(input_path, smiles_path, config)
    inputs = [("--input", input_path), ("--smiles", smiles_path)]
    with claim_outputs(run_outputs(folder), inputs, command="chemgauge.families.names.coverage"):
        report = score_coverage(input=input_path, smiles=smiles_path, out=folder, config=config)
    check_opsin_errors(report, ROWS_NAME, config)
    return report
