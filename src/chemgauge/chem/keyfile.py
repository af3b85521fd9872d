"""A file of SMILES keyed under one identity policy: what ``chemgauge canon`` does, as a call.

One output line per input line, so positions line up: the key, then a tab and the rest of
the input line when it had more than one token; an invalid line gets an empty key and is
reported through ``on_invalid`` (or stops the job with ``strict``). Input is streamed block
by block and each distinct string is canonicalized once, on as many workers as the executor
has, in input order.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from chemgauge.chem.canonicalizer import Canonicalizer, canonicalize_stream
from chemgauge.chem.matchers import describe_key_failure, get_matcher
from chemgauge.errors import DataQualityError
from chemgauge.eval.atomic import atomic_open
from chemgauge.eval.executors import ExecutorConfig, make_executor
from chemgauge.eval.lines import Line, check_input_file, read_lines

__all__ = ["KeyFileSummary", "canonicalize_file", "count_lines"]

#: ``on_invalid(source, line number, reason, value)``: one invalid input line.
InvalidSink = Callable[[str, int, str, str], None]


@dataclass(frozen=True, slots=True)
class KeyFileSummary:
    """What a keyed file holds: every line, the invalid ones and the blank ones."""

    policy: str
    lines: int
    invalid: int
    blank: int

    @property
    def smiles(self) -> int:
        """Lines holding a SMILES (valid or not)."""
        return self.lines - self.blank


def count_lines(source: str | Path) -> int | None:
    """Lines of a file (for a progress bar); ``None`` for standard input (``-``)."""
    if str(source) == "-":
        return None
    with open(source, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


def _lines(source: str) -> Iterator[Line]:
    """Every line, undecodable ones included (they get an empty key and a report)."""
    return (
        read_lines(sys.stdin.buffer, keep_undecodable=True)
        if source == "-"
        else read_lines(source, keep_undecodable=True)
    )


@contextlib.contextmanager
def _output(out: Path | None) -> Iterator[IO[str]]:
    """Stream to stdout, or to a temporary file renamed over ``out`` only on success."""
    if out is None:
        yield sys.stdout
        return
    with atomic_open(out, text=True) as handle:
        yield handle


def canonicalize_file(
    source: str | Path,
    policy: str = "exact",
    out: str | Path | None = None,
    *,
    strict: bool = False,
    execution: ExecutorConfig | None = None,
    on_invalid: InvalidSink | None = None,
    progress: Callable[[int], None] | None = None,
) -> KeyFileSummary:
    """Key every line of ``source`` (a SMILES file, first token per line, or ``-`` for
    standard input) under ``policy`` into ``out`` (atomically; standard output when
    ``None``). ``strict`` makes the first invalid line a :class:`DataQualityError` naming the
    file, line and value; ``progress(n)`` is told of every block of lines written."""
    matcher = get_matcher(policy)
    config = execution or ExecutorConfig(chunk_size=2048)
    source_name = str(source)
    if source_name != "-":
        check_input_file(source_name)
    canonicalizer = Canonicalizer(matcher.name, max_entries=100_000)
    lines = invalid = blank = 0
    pending: list[tuple[Line, list[str]]] = []

    def smiles_of(entries: Iterator[Line]) -> Iterator[str]:
        for line in entries:
            tokens = [] if line.problem else line.text.split(maxsplit=1)
            pending.append((line, tokens))
            yield tokens[0] if tokens else ""

    runner = make_executor(config)
    try:
        with _output(None if out is None else Path(out)) as sink:
            keys = canonicalize_stream(
                smiles_of(_lines(source_name)),
                canonicalizer,
                executor=runner,
                chunk_size=config.chunk_size,
            )
            for index, key in enumerate(keys):
                line, tokens = pending[index - lines]
                if line.problem or (key is None and tokens):
                    invalid += 1
                    value = line.text if line.problem else tokens[0]
                    reason = line.problem or describe_key_failure(value, matcher.name)
                    if strict:
                        raise DataQualityError(
                            reason, path=source_name, line=line.number, value=value
                        )
                    if on_invalid is not None:
                        on_invalid(source_name, line.number, reason, value)
                elif not tokens:
                    blank += 1
                rest = f"\t{tokens[1]}" if len(tokens) > 1 else ""
                sink.write(f"{key or ''}{rest}\n" if tokens else "\n")
                if index - lines == len(pending) - 1:
                    if progress is not None:
                        progress(len(pending))
                    lines += len(pending)
                    pending.clear()
    finally:
        runner.close()
    return KeyFileSummary(matcher.name, lines, invalid, blank)
