"""``chemgauge canon``: canonicalize SMILES under a named policy, one output line per input line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from chemgauge.chem import Canonicalizer, describe_parse_failure, get_matcher
from chemgauge.cli.progress import progress_bar
from chemgauge.errors import DataQualityError, InputFileError
from chemgauge.eval.records import atomic_write_text, iter_lines


def _read(source: str) -> list[tuple[int, str]]:
    if source == "-":
        return [(i, line.rstrip("\r\n")) for i, line in enumerate(sys.stdin, start=1)]
    path = Path(source)
    if not path.exists():
        raise InputFileError("file not found", path=path)
    return list(iter_lines(path))


def canon(
    source: str = typer.Argument("-", help="SMILES file (first token per line), or - for stdin."),
    policy: str = typer.Option("exact", "--policy", "-p", help="Identity policy (see matchers)."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes; 0 = all cores."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here (atomically)."),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first invalid line."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
) -> None:
    """Canonicalize SMILES under a policy; invalid lines give an empty key and a stderr report.

    Output has exactly one line per input line (so positions line up): the key, followed by
    a tab and the rest of the input line when the line had more than one token.
    """
    matcher = get_matcher(policy)
    lines = _read(source)
    tokens = [text.split(maxsplit=1) for _, text in lines]
    smiles = [t[0] if t else "" for t in tokens]
    canonicalizer = Canonicalizer(matcher.name)
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    with progress_bar(f"canon ({matcher.name})", len(smiles), quiet=quiet) as advance:
        keys = canonicalizer.many(smiles, jobs=workers, progress=advance)
    output: list[str] = []
    invalid = 0
    for (number, text), tok, key in zip(lines, tokens, keys, strict=True):
        if key is None and tok:
            invalid += 1
            reason = describe_parse_failure(tok[0])
            if strict:
                raise DataQualityError(reason, path=source, line=number, value=tok[0])
            if not quiet:
                typer.echo(f"{source}:{number}: {reason}: {tok[0]!r}", err=True)
        rest = f"\t{tok[1]}" if len(tok) > 1 else ""
        output.append(f"{key or ''}{rest}" if text.strip() else "")
    body = "".join(line + "\n" for line in output)
    if out is None:
        sys.stdout.write(body)
    else:
        atomic_write_text(out, body)
    if not quiet:
        distinct = len(set(smiles))
        typer.echo(
            f"{len(lines)} lines, {distinct} distinct, {invalid} invalid (policy {matcher.name})",
            err=True,
        )
    if invalid and strict:
        raise typer.Exit(1)
