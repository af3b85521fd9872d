"""``chemgauge canon``: canonicalize SMILES under a named policy, one output line per input line."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import typer

from chemgauge.chem import Canonicalizer, describe_parse_failure, get_matcher
from chemgauge.chem.canonicalizer import canonicalize_stream
from chemgauge.cli.options import CHUNK_SIZE, EXECUTOR, JOBS, QUIET, RAY_ADDRESS, executor_config
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import count_rate_cell, print_summary, summary_table
from chemgauge.errors import DataQualityError, InputFileError
from chemgauge.eval.executors import make_executor
from chemgauge.eval.records import atomic_open, iter_lines


def _check_source(source: str) -> None:
    if source == "-":
        return
    path = Path(source)
    if not path.is_file():
        reason = "expected a file, found a directory" if path.is_dir() else "file not found"
        raise InputFileError(reason, path=path)


def _lines(source: str) -> Iterator[tuple[int, str]]:
    if source == "-":
        for number, line in enumerate(sys.stdin, start=1):
            yield number, line.rstrip("\r\n")
        return
    yield from iter_lines(source)


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


def canon(
    source: str = typer.Argument("-", help="SMILES file (first token per line), or - for stdin."),
    policy: str = typer.Option("exact", "--policy", "-p", help="Identity policy (see matchers)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here (atomically)."),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first invalid line."),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    chunk_size: int | None = CHUNK_SIZE,
    quiet: bool = QUIET,
) -> None:
    """Canonicalize SMILES under a policy; invalid lines give an empty key and a stderr report.

    Output has exactly one line per input line (so positions line up): the key, followed by
    a tab and the rest of the input line when the line had more than one token. Input is
    streamed block by block, so memory does not grow with the file.
    """
    matcher = get_matcher(policy)
    config = executor_config(executor, jobs, ray_address, chunk_size, default_chunk=2048)
    canonicalizer = Canonicalizer(matcher.name, max_entries=100_000)
    _check_source(source)
    total = _count_lines(source)
    lines = 0
    invalid = 0
    blank = 0
    runner = make_executor(config)
    pending: list[tuple[int, str, list[str]]] = []

    def smiles_of(entries: Iterator[tuple[int, str]]) -> Iterator[str]:
        for number, text in entries:
            tokens = text.split(maxsplit=1)
            pending.append((number, text, tokens))
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
                number, text, tokens = pending[index - lines]
                if key is None and tokens:
                    invalid += 1
                    reason = describe_parse_failure(tokens[0])
                    if strict:
                        raise DataQualityError(reason, path=source, line=number, value=tokens[0])
                    # reported even with --quiet: it hides progress and summary, not data issues
                    typer.echo(f"{source}:{number}: {reason}: {tokens[0]!r}", err=True)
                if not tokens:
                    blank += 1
                rest = f"\t{tokens[1]}" if len(tokens) > 1 else ""
                sink.write(f"{key or ''}{rest}\n" if text.strip() else "\n")
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
