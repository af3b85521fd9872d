"""``chemgauge canon``: canonicalize SMILES under a named policy, one output line per input line."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from chemgauge.chem.keyfile import canonicalize_file, count_lines
from chemgauge.chem.matchers import get_matcher
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
from chemgauge.errors import excerpt, file_label
from chemgauge.eval.lines import check_input_file
from chemgauge.eval.outputs import Output


def _report_invalid(source: str, number: int, reason: str, value: str) -> None:
    # reported even with --quiet: it hides progress and summary, not data issues
    typer.echo(f"{file_label(source)}:{number}: {reason}: {excerpt(value)!r}", err=True)


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
    if source != "-":
        check_input_file(source)
    with progress_bar(f"canon ({matcher.name})", count_lines(source), quiet=quiet) as advance:
        summary = canonicalize_file(
            source,
            matcher.name,
            out,
            strict=strict,
            execution=config,
            on_invalid=_report_invalid,
            progress=advance,
        )
    if not quiet:
        print_summary(
            summary_table(
                f"canon ({matcher.name}): {summary.lines} lines, {summary.invalid} invalid",
                ("policy", "SMILES", "valid [95% CI]", "invalid", "blank lines"),
                [
                    (
                        matcher.name,
                        str(summary.smiles),
                        count_rate_cell(summary.smiles - summary.invalid, summary.smiles),
                        str(summary.invalid),
                        str(summary.blank),
                    )
                ],
            )
        )
