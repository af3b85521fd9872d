"""``forward enumerate``: candidates for every line of a reactants file, into one JSONL file.

Each input line is ``SMILES [id]`` (dot-separated reactants); each output line is one record
in input order (an unreadable line is counted, a failed prediction is a record with its
``error``), written atomically so an interrupted run leaves no half file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import orjson

from chemgauge.errors import DataQualityError
from chemgauge.eval.atomic import atomic_open
from chemgauge.eval.lines import read_lines
from chemgauge.eval.outputs import claim_outputs
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.forward.batch import EnumerateItem, RulesSpec, iter_enumerated
from chemgauge.families.forward.config import EnumerateConfig
from chemgauge.families.forward.engine.rules import load_rules

__all__ = ["Enumeration", "ProgressBar", "enumerate_file", "read_items"]

#: ``progress(total)``: a context giving ``advance(n)`` (the command's progress bar).
ProgressBar = Callable[[int], AbstractContextManager[Callable[[int], None]]]
#: ``note(line, detail)``: a problem with one input line (unreadable, or its prediction failed).
Note = Callable[[int, str], None]


@dataclass(frozen=True)
class Enumeration:
    """What one enumeration wrote: reactions read (unreadable lines included), how many have
    a candidate, how many failed, and where the records went."""

    reactions: int
    with_candidates: int
    with_errors: int
    out: Path


def read_items(path: Path, stats: RejectionStats) -> list[EnumerateItem]:
    """The reactions of a reactants file (blank lines skipped, unreadable ones counted)."""
    items: list[EnumerateItem] = []
    for line, text, *_ in read_lines(path, stats):
        tokens = text.split()
        if not tokens:
            continue
        item_id = tokens[1] if len(tokens) > 1 else None
        items.append(EnumerateItem(line, item_id, tuple(tokens[0].split("."))))
    return items


@contextlib.contextmanager
def _no_bar(_total: int) -> Iterator[Callable[[int], None]]:
    yield lambda _n: None


def _ignore(_line: int, _detail: str) -> None:
    return None


def enumerate_file(
    config: EnumerateConfig,
    *,
    progress: ProgressBar | None = None,
    note: Note | None = None,
) -> Enumeration:
    """Write the candidates of every reaction of ``config.input`` to ``config.out``.

    The outputs are checked against the inputs and locked first; ``note`` hears of every
    unreadable line, then of every failed prediction as it streams past; with ``strict`` the
    first of either stops the run (:class:`DataQualityError`) and nothing is written.
    """
    note = note or _ignore
    outputs, inputs = config.files()
    with claim_outputs(outputs, inputs):
        paths = tuple(str(p) for p in config.templates)
        rules = load_rules(paths, embedded=True)
        spec = RulesSpec.of(rules, paths, True)
        unreadable = RejectionStats(strict=config.strict)
        items = read_items(config.input, unreadable)
        for diagnostic in unreadable.diagnostics:
            note(diagnostic.line, diagnostic.detail)
        errors = unreadable.rejected
        pooled = 0
        records = iter_enumerated(items, spec, config.execution(), config.max_results)
        with (
            (progress or _no_bar)(len(items)) as advance,
            atomic_open(config.out) as sink,
            contextlib.closing(records),
        ):
            for record in records:
                if record["error"] is not None:
                    errors += 1
                    if config.strict:
                        raise DataQualityError(
                            record["error"], path=config.input, line=record["line"]
                        )
                    note(record["line"], record["error"])
                if record["candidates"]:
                    pooled += 1
                sink.write(orjson.dumps(record) + b"\n")
                advance(1)
    return Enumeration(len(items) + unreadable.rejected, pooled, errors, config.out)
