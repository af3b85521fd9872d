"""``chemgauge names``: structure -> name -> OPSIN -> structure coverage.

A pairs file streams: pairs are read, scored and journaled a block at a time, and the rows
file and report are built by reading the journal back in input order, so memory tracks the
block size; what grows with the corpus is one id a pair (see
:mod:`chemgauge.benchmarks.names.runner`). With ``--namer-cmd`` the namer names every
structure in one batch, so those structures and names are held for the run.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from chemgauge.benchmarks.names.inputs import (
    NamePair,
    count_lines,
    iter_pairs,
    read_smiles_file,
)
from chemgauge.benchmarks.names.runner import (
    CoverageConfig,
    ReadBack,
    build_report,
    journal_rows,
    score_pairs,
)
from chemgauge.cli.options import QUIET
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import print_summary, rate_cell, summary_table
from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.envelope import envelope_bytes, write_envelope
from chemgauge.eval.executors import ExecutorConfig, make_executor
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.records import (
    RejectionStats,
    ResumableJsonlWriter,
    atomic_write_rows,
)

# Pairs are read, scored (names deduplicated) and journaled a block at a time, so memory
# tracks the block and an interrupted run resumes where it stopped.
_BLOCK = 1000
# OPSIN options that change speed or robustness but never an answer.
_TIMING_ONLY = frozenset({"timeout_s", "jvms", "java", "mode", "extra_jvms_after"})
# JVMs beyond the first start once this many names were answered: a JVM's start-up and cold
# JIT cost more than it saves on a shorter run (bench/names_opsin.py: on 2 cores one JVM
# reads a cold list of 1,044 names faster than two).
_EXTRA_JVMS_AFTER = 2000

app = typer.Typer(help="Name round-trip coverage with the real OPSIN.", no_args_is_help=True)


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


_CLASSES = ("rt_valid", "confidently_wrong", "unparseable", "abstained", "unscorable")
# Default largest share of emitted names OPSIN may fail on (timeouts, crashes, refusals)
# before the run exits non-zero: beyond it the rates describe a different set of names.
DEFAULT_MAX_OPSIN_ERRORS = 0.01


def _rejected_note(stats: dict[str, Any]) -> str:
    rejected = int(stats.get("rejected", 0))
    reasons = stats.get("rejections_by_reason") or {}
    detail = ", ".join(f"{reason}: {count}" for reason, count in sorted(reasons.items()))
    lines = "input line" if rejected == 1 else "input lines"
    return f"{rejected} {lines} rejected" + (f" ({detail})" if detail else "")


def _print_summary(report: dict[str, Any], rows_file: str) -> None:
    """Every class per lens (each lens adds up to the total), the namer's rates, rejected
    lines, and where the complete lists of wrong rows and OPSIN errors are."""
    metrics = report["metrics"]
    rows, rates = [], []
    for lens, values in metrics["lenses"].items():
        counts = values["counts"]
        cells = [str(counts[c]) for c in (*_CLASSES, "opsin_error")]
        rows.append((lens, *cells, str(metrics["total"])))
        rate = values["of_emitted_rt"]
        low, high = rate["ci95"] if rate["rate"] is not None else (None, None)
        rates.append(f"{lens} {rate_cell(rate['rate'], low, high)}")
    notes = [
        "round-trip valid / names OPSIN answered for (95% Wilson): " + ", ".join(rates),
        _rejected_note(metrics["input_stats"]),
    ]
    for lens, values in metrics["lenses"].items():
        reasons = values.get("unscorable_reasons") or {}
        if reasons:
            detail = ", ".join(f"{reason}: {count}" for reason, count in reasons.items())
            notes.append(f"unscorable under {lens} (never credited): {detail}")
    wrong = metrics.get("confidently_wrong_total", 0)
    if wrong:
        listed = len(metrics["confidently_wrong_rows"])
        notes.append(
            f"{wrong} {'row' if wrong == 1 else 'rows'} confidently wrong under a lens: "
            f"the report lists {listed}, {rows_file} holds all of them"
        )
    print_summary(
        summary_table(
            f"name round trip: {metrics['total']} structures",
            ("lens", *_CLASSES, "opsin_error", "total"),
            rows,
            caption=f"{metrics['opsin_error']} OPSIN errors (timeout, crash, refusal): in no rate",
        ),
        notes=notes,
    )


def _check_opsin_errors(
    report: dict[str, Any], rows_file: str, max_share: float, strict: bool
) -> None:
    """Warn about OPSIN errors; raise when ``--strict`` or their share is over the limit."""
    metrics = report["metrics"]
    errors, names = metrics["opsin_error"], metrics["emitted"]
    if not errors:
        return
    share = errors / names
    kinds = ", ".join(f"{k}: {n}" for k, n in metrics["opsin_error_by_status"].items())
    typer.echo(
        f"warning: OPSIN failed on {errors} of {names} names ({share:.1%}; {kinds}); they are "
        f"opsin_error rows in {rows_file}, in no rate",
        err=True,
    )
    if strict:
        raise BackendError(f"--strict: {errors} names hit OPSIN errors; the rows are written")
    if share > max_share:
        raise BackendError(
            f"{errors} of {names} names ({share:.1%}) hit OPSIN errors, more than "
            f"--max-opsin-errors {max_share:g}; the rows and report are written (a timeout: "
            "rerun with a larger --timeout)"
        )


@app.command("coverage")
def coverage(
    input_path: Path | None = typer.Option(
        None, "--input", "-i", help="Pairs file (.tsv, .csv or .jsonl) with smiles and name."
    ),
    namer_cmd: str | None = typer.Option(
        None, "--namer-cmd", help="Structure-to-name command: SMILES on stdin, names on stdout."
    ),
    smiles_file: Path | None = typer.Option(
        None, "--smiles", help="SMILES file to name with --namer-cmd."
    ),
    output_rows: Path = typer.Option(..., "--output-rows", help="Row file (JSONL)."),
    output_report: Path | None = typer.Option(
        None, "--output-report", help="Report JSON (default: stdout)."
    ),
    jvms: int = typer.Option(
        2,
        "--jobs",
        "-j",
        help=(
            "OPSIN JVMs (the second and later start once 2,000 names were answered) and "
            "matching workers; results keep input order."
        ),
    ),
    radicals: bool = typer.Option(False, "--radicals", help="OPSIN -r: allow radicals."),
    lenient_stereo: bool = typer.Option(
        False, "--lenient-stereo", help="OPSIN -s: ignore uninterpretable stereo."
    ),
    abstain_marker: list[str] = typer.Option(
        [], "--abstain-marker", help="A namer output that means 'no name' (repeatable)."
    ),
    pin_pct: float | None = typer.Option(
        None, "--pin-pct", help="Curated gold-gate pass rate, carried verbatim."
    ),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds OPSIN may take per name."),
    namer_timeout: float = typer.Option(600.0, "--namer-timeout", help="Seconds for the namer."),
    strict: bool = typer.Option(
        False, "--strict", help="Any bad input line, or any OPSIN error, is a hard error."
    ),
    max_opsin_errors: float = typer.Option(
        DEFAULT_MAX_OPSIN_ERRORS,
        "--max-opsin-errors",
        help=(
            "Largest share of names OPSIN may fail on (timeout, crash, refusal) before the "
            "run exits non-zero; the rows and report are written either way."
        ),
    ),
    restart: bool = typer.Option(
        False, "--restart", help="Discard rows kept from an interrupted run instead of resuming."
    ),
    quiet: bool = QUIET,
) -> None:
    """Score a structure-to-name generator: a name counts only if OPSIN reads it back right."""
    from chemgauge.engines.opsin.runner import OpsinConfig, OpsinRunner

    if (input_path is None) == (namer_cmd is None):
        raise ConfigError("give exactly one of --input (pairs) or --namer-cmd (with --smiles)")
    if not 0.0 <= max_opsin_errors <= 1.0:
        raise ConfigError(f"--max-opsin-errors must be between 0 and 1, got {max_opsin_errors}")
    stats = RejectionStats(strict=strict)
    started = time.perf_counter()
    pairs: Iterable[NamePair]
    if input_path is not None:
        # Checked whole before it streams (under --strict every line), so a refused file
        # never leaves a journal: fixing it changes its hash, and the journal with it.
        pairs = iter_pairs(input_path, stats)
        source = input_path
    else:
        if smiles_file is None:
            raise ConfigError("--namer-cmd needs --smiles FILE with the structures to name")
        from chemgauge.engines.opsin.namer import CommandNamer

        structures = read_smiles_file(smiles_file, stats)
        names = CommandNamer.from_string(namer_cmd or "", namer_timeout).name(
            [p.smiles for p in structures]
        )
        pairs = [
            NamePair(p.item_id, p.line, p.smiles, n) for p, n in zip(structures, names, strict=True)
        ]
        source = smiles_file
    lines = count_lines(source)  # the progress total
    config = CoverageConfig(abstain_markers=tuple(sorted(set(abstain_marker))), pin_pct=pin_pct)
    opsin_config = OpsinConfig(
        allow_radicals=radicals,
        allow_uninterpretable_stereo=lenient_stereo,
        timeout_s=timeout,
        jvms=jvms,
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
    journal_path = output_rows.with_name(output_rows.name + ".journal")
    journal = ResumableJsonlWriter(
        journal_path, config_sha256=run_hash, key_field="id", restart=restart, keep_rows=False
    )
    if journal.keys and not quiet:
        typer.echo(f"resuming: {len(journal.keys)} rows already done", err=True)
    order: list[str] = []  # every accepted pair's id, in input order: the rows file's order
    with OpsinRunner(opsin_config) as opsin:

        def resolve(names: Sequence[str]) -> list[ReadBack]:
            return [
                ReadBack(r.smiles, r.status.value, r.error) for r in opsin.names_to_smiles(names)
            ]

        executor = make_executor(ExecutorConfig(kind="local", jobs=jvms, chunk_size=16))
        try:
            with journal, progress_bar("names", lines, quiet=quiet, min_total=2000) as advance:
                progressed = 0  # input lines, so resumed and rejected lines count too
                for block in _blocks(pairs, journal, order):
                    for row in score_pairs(block, resolve, config, executor):
                        journal.write(row)
                    advance(block[-1].line - progressed)
                    progressed = block[-1].line
                advance(lines - progressed)
        finally:
            executor.close()
        engine = opsin.provenance()
        engine.pop("jar_path", None)  # a machine path, not content: the jar hash identifies it
    scored = time.perf_counter()
    report = build_report(
        journal_rows(journal_path, order),
        config=config,
        input_path=source,
        input_stats=stats,
        engine=engine,
        timing={"load_s": loaded - started, "score_s": scored - loaded},
        rows_path=output_rows,
        report_path=output_report,
        engine_config=opsin_options,
    )
    atomic_write_rows(output_rows, journal_rows(journal_path, order))
    journal_path.unlink(missing_ok=True)
    if output_report is None:
        typer.echo(envelope_bytes(report).decode(), nl=False)
    else:
        write_envelope(output_report, report)
    if not quiet:
        _print_summary(report, output_rows.name)
    _check_opsin_errors(report, output_rows.name, max_opsin_errors, strict)
