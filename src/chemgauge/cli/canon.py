"""``chemgauge canon``: canonicalize SMILES under a named policy, one output line per input line."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import typer

from chemgauge.chem import Canonicalizer, get_matcher
from chemgauge.chem.canonicalizer import canonicalize_stream
from chemgauge.chem.matchers import describe_key_failure
from chemgauge.cli.options import (
    CHUNK_SIZE,
    EXECUTOR,
    JOBS,
    QUIET,
    RAY_ADDRESS,
    RAY_TIMEOUT,
    Inputs,
    executor_config,
    guarded,
)
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import count_rate_cell, print_summary, summary_table
from chemgauge.errors import DataQualityError, excerpt
from chemgauge.eval.executors import make_executor
from chemgauge.eval.lines import Line, check_input_file, iter_text_lines, read_stream
from chemgauge.eval.outputs import Output
from chemgauge.eval.records import atomic_open


def _check_source(source: str) -> None:
    if source != "-":
        check_input_file(source)


def _lines(source: str) -> Iterator[Line]:
    """Every line, undecodable ones included (they get an empty key and a report)."""
    return read_stream(sys.stdin.buffer) if source == "-" else iter_text_lines(source)


def _count_lines(source: str) -> int | None:
    if source == "-":
        return None
    with open(source, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


@contextlib.contextmanager
def _output(out: Path | None) -> Iterator[IO[str]]:
    """Stream to stdout, or to a temporary file renamed over ``out`` only on success."""
    if out is None:
        yield sys.stdout
        return
    with atomic_open(out, text=True) as handle:
        yield handle


def _canon_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    source = args["source"]
    inputs = [] if source == "-" else [("SOURCE", Path(source))]
    return ([] if args["out"] is None else [Output("--out", args["out"])]), inputs


@guarded(_canon_files)
def canon(
    source: str = typer.Argument("-", help="SMILES file (first token per line), or - for stdin."),
    policy: str = typer.Option("exact", "--policy", "-p", help="Identity policy (see matchers)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here (atomically)."),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first invalid line."),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    ray_timeout: float = RAY_TIMEOUT,
    chunk_size: int | None = CHUNK_SIZE,
    quiet: bool = QUIET,
) -> None:
    """Canonicalize SMILES under a policy; invalid lines give an empty key and a stderr report.

    Output has exactly one line per input line (so positions line up): the key, followed by
    a tab and the rest of the input line when the line had more than one token. Input is
    streamed block by block, so memory does not grow with the file.
    """
    matcher = get_matcher(policy)
    config = executor_config(
        executor, jobs, ray_address, chunk_size, default_chunk=2048, ray_timeout=ray_timeout
    )
    canonicalizer = Canonicalizer(matcher.name, max_entries=100_000)
    _check_source(source)
    total = _count_lines(source)
    lines = 0
    invalid = 0
    blank = 0
    runner = make_executor(config)
    pending: list[tuple[Line, list[str]]] = []

    def smiles_of(entries: Iterator[Line]) -> Iterator[str]:
        for line in entries:
            tokens = [] if line.problem else line.text.split(maxsplit=1)
            pending.append((line, tokens))
            yield tokens[0] if tokens else ""

    try:
        with (
            progress_bar(f"canon ({matcher.name})", total, quiet=quiet) as advance,
            _output(out) as sink,
        ):
            keys = canonicalize_stream(
                smiles_of(_lines(source)),
                canonicalizer,
                executor=runner,
                chunk_size=config.chunk_size,
            )
            for index, key in enumerate(keys):
                line, tokens = pending[index - lines]
                number, text = line.number, line.text
                if line.problem or (key is None and tokens):
                    invalid += 1
                    value = text if line.problem else tokens[0]
                    reason = line.problem or describe_key_failure(value, matcher.name)
                    if strict:
                        raise DataQualityError(reason, path=source, line=number, value=value)
                    # reported even with --quiet: it hides progress and summary, not data issues
                    typer.echo(f"{source}:{number}: {reason}: {excerpt(value)!r}", err=True)
                elif not tokens:
                    blank += 1
                rest = f"\t{tokens[1]}" if len(tokens) > 1 else ""
                sink.write(f"{key or ''}{rest}\n" if tokens else "\n")
                if index - lines == len(pending) - 1:
                    advance(len(pending))
                    lines += len(pending)
                    pending.clear()
    finally:
        runner.close()
    if not quiet:
        smiles = lines - blank
        print_summary(
            summary_table(
                f"canon ({matcher.name}): {lines} lines, {invalid} invalid",
                ("policy", "SMILES", "valid [95% CI]", "invalid", "blank lines"),
                [
                    (
                        matcher.name,
                        str(smiles),
                        count_rate_cell(smiles - invalid, smiles),
                        str(invalid),
                        str(blank),
                    )
                ],
            )
        )
