"""Augmented-input output files (the Augmented Transformer's layout) scored per convention.

The layout is a pair of CSV files with the same lines: ``input,target`` (the reactants of one
augmented input and the true product) and ``input,target,target_2..target_k`` (the model's
ranked outputs for that input). Consecutive lines whose inputs hold the same components (in
any order) are one reaction, as ``compare.pl`` groups them; a reaction's lists are its lines'
outputs in file order. Files may be xz- or gzip-compressed. Everything streams, one reaction
at a time; each distinct output string is keyed once (:class:`OutputKeys`).
"""

from __future__ import annotations

import gzip
import lzma
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from chemgauge.errors import InputFileError
from chemgauge.eval.rates import rate
from chemgauge.eval.stats import bootstrap_mean_interval
from chemgauge.families.forward.conventions import CONVENTIONS, Ranking, rank_outputs
from chemgauge.families.forward.output_keys import OutputKeys

__all__ = [
    "AugmentedReaction",
    "ConventionTally",
    "TieDecided",
    "read_augmented",
    "score_augmented",
]

TOP_KS = (1, 2, 3, 5, 10)


@dataclass(frozen=True, slots=True)
class AugmentedReaction:
    """One reaction of an augmented-output file pair: its lines' targets and output lists."""

    index: int
    first_line: int
    input: str
    targets: tuple[str, ...]
    lists: tuple[tuple[str, ...], ...]


def open_text(path: Path) -> IO[str]:
    """A text file, xz- or gzip-compressed by its suffix (a missing file is an error)."""
    if not path.is_file():
        raise InputFileError("file not found", path=path)
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", newline="")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")  # the caller closes it


def _input_key(text: str) -> tuple[str, ...]:
    return tuple(sorted(c for c in text.split(".") if c))


def read_augmented(inputs: Path, outputs: Path) -> Iterator[AugmentedReaction]:
    """The reactions of an ``input,target`` file and its ranked-output file, in order.

    The two files must hold the same inputs line by line (an error names the first line
    that differs); blank lines are skipped.
    """
    with open_text(inputs) as fin, open_text(outputs) as fout:
        head_in = fin.readline().strip().split(",")
        head_out = fout.readline().strip().split(",")
        if head_in[:2] != ["input", "target"] or head_out[:2] != ["input", "target"]:
            raise InputFileError("needs headers input,target and input,target,...", path=inputs)
        index = 0
        current: tuple[str, ...] | None = None
        first_line, text = 0, ""
        targets: list[str] = []
        lists: list[tuple[str, ...]] = []
        for number, (line_in, line_out) in enumerate(zip(fin, fout, strict=False), start=2):
            line_in, line_out = line_in.rstrip("\r\n"), line_out.rstrip("\r\n")
            if not line_in and not line_out:
                continue
            source, _, target = line_in.partition(",")
            cells = line_out.split(",")
            if cells[0] != source:
                raise InputFileError(
                    f"the output file's input differs: {cells[0][:80]!r}",
                    path=outputs,
                    line=number,
                )
            key = _input_key(source)
            if key != current:
                if current is not None:
                    yield AugmentedReaction(
                        index, first_line, text, tuple(dict.fromkeys(targets)), tuple(lists)
                    )
                    index += 1
                current, first_line, text, targets, lists = key, number, source, [], []
            targets.append(target)
            lists.append(tuple(cells[1:]))
        if current is not None:
            yield AugmentedReaction(
                index, first_line, text, tuple(dict.fromkeys(targets)), tuple(lists)
            )


@dataclass(frozen=True, slots=True)
class TieDecided:
    """A reaction whose top-1 verdict only output order decides: its first rank is an exact
    tie between an accepted product and one that is not.

    Attributes:
        index: 0-based reaction index in the file pair.
        first_line: the reaction's first line in the inputs file (1-based, header is line 1).
        input: the reaction's input as written.
        tied: the products sharing the top score, earliest output first, each with whether
            it is accepted.
    """

    index: int
    first_line: int
    input: str
    tied: tuple[tuple[str, bool], ...]

    @property
    def earliest_hit(self) -> bool:
        """Whether the earliest-output tie break ranks an accepted product first."""
        return self.tied[0][1]


@dataclass
class ConventionTally:
    """One convention's counts over a file pair (every reaction in ``n``)."""

    name: str
    n: int = 0
    answered: int = 0
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(TOP_KS, 0))
    optimistic: dict[int, int] = field(default_factory=lambda: dict.fromkeys(TOP_KS, 0))
    pessimistic: dict[int, int] = field(default_factory=lambda: dict.fromkeys(TOP_KS, 0))
    reciprocal_ranks: list[float] = field(default_factory=list)
    best_ranks: list[int | None] = field(default_factory=list)
    targets: list[tuple[str, ...]] = field(default_factory=list)
    invalid: int = 0
    duplicates: int = 0
    tie_decided: list[TieDecided] = field(default_factory=list)

    def to_dict(self, seed: int = 0) -> dict[str, object]:
        """The tally with Wilson intervals, over all reactions and over answered ones (the
        denominator ``compare.pl`` reports: reactions with at least one valid output)."""
        mrr = bootstrap_mean_interval(self.reciprocal_ranks, seed=seed)
        return {
            "n": self.n,
            "answered": self.answered,
            "top_k": {str(k): rate(self.hits[k], self.n, k=k) for k in TOP_KS},
            "top_k_over_answered": {str(k): rate(self.hits[k], self.answered, k=k) for k in TOP_KS},
            "top_k_tie_range": {str(k): [self.pessimistic[k], self.optimistic[k]] for k in TOP_KS},
            "mrr": {
                "value": sum(self.reciprocal_ranks) / self.n if self.n else None,
                "interval": [mrr.low, mrr.high],
                "method": mrr.method,
            },
            "invalid_outputs": self.invalid,
            "duplicate_outputs": self.duplicates,
            "top1_tie_decided": [
                {
                    "reaction": t.index,
                    "first_line": t.first_line,
                    "tied": [{"output": o, "accepted": a} for o, a in t.tied],
                }
                for t in self.tie_decided
            ],
        }


def _tie_decided(
    reaction: AugmentedReaction, ranking: Ranking, accepted: set[tuple[str, ...]]
) -> TieDecided:
    end = 0
    while end in ranking.ties_at:
        end += 1
    tied = tuple(
        (".".join(key), key in accepted) for key in ranking.ranked[: end + 1] if key is not None
    )
    return TieDecided(reaction.index, reaction.first_line, reaction.input, tied)


def score_augmented(
    reactions: Iterable[AugmentedReaction], keys: OutputKeys
) -> dict[str, ConventionTally]:
    """Every convention's tally over the reactions (targets keyed like the outputs)."""
    tallies = {name: ConventionTally(name) for name in CONVENTIONS}
    for reaction in reactions:
        accepted = {k for k in map(keys, reaction.targets) if k is not None}
        for name, ranking in rank_outputs(reaction.lists, keys).items():
            tally = tallies[name]
            tally.n += 1
            tally.invalid += ranking.invalid
            tally.duplicates += ranking.duplicates
            if any(k is not None for k in ranking.ranked):
                tally.answered += 1
            best = ranking.best_rank(accepted)
            bounds = ranking.rank_bounds(accepted)
            tally.reciprocal_ranks.append(0.0 if best is None else 1.0 / (best + 1))
            tally.best_ranks.append(best)
            tally.targets.append(reaction.targets)
            if bounds is not None and bounds[0] == 0 and bounds[1] > 0:
                tally.tie_decided.append(_tie_decided(reaction, ranking, accepted))
            for k in TOP_KS:
                if best is not None and best < k:
                    tally.hits[k] += 1
                if bounds is not None and bounds[0] < k:
                    tally.optimistic[k] += 1
                if bounds is not None and bounds[1] < k:
                    tally.pessimistic[k] += 1
    return tallies
