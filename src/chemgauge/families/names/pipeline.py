"""Score blocks of pairs as one stream: OPSIN reads block k+1 while workers match block k.

:func:`~chemgauge.families.names.runner.score_pairs` scores one block and waits for its last
group, so the workers idle while OPSIN reads the next block's names and the rows are built.
:func:`score_blocks` feeds every block's matching groups into one ``executor.map``: the
next block is read back when the current one's groups are all submitted (while they run),
and a block's rows are built and handed back, in block order, as soon as its last group's
result is in. A pair already queued by an earlier block is not queued again: it is handed
over when that block finishes. Each block queues at least one group (an empty one when it
has nothing to match), so the blocks held at once are bounded by the chunks in flight.
Rows are the same bytes as :func:`score_pairs` gives block by block, whatever the executor.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemgauge.eval.executors import Executor, ItemFailure
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.runner import (
    GROUP_WEIGHT,
    ClassifyGroup,
    Match,
    ReadBack,
    ResolveBatch,
    RunMemo,
    balanced_groups,
    build_rows,
    match_groups,
    pairs_to_match,
    read_back,
)

__all__ = ["score_blocks"]

Pair = tuple[str, str]


@dataclass(slots=True)
class _Block:
    """A block read back and queued, waiting for the results of its groups."""

    pairs: Sequence[NamePair]
    lookup: dict[str, ReadBack]
    groups: list[list[Pair]] = field(default_factory=list)
    results: list[list[Match] | ItemFailure] = field(default_factory=list)
    matched: dict[Pair, Match] = field(default_factory=dict)  # known, or handed over

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.groups)


def score_blocks(
    blocks: Iterable[Sequence[NamePair]],
    resolve: ResolveBatch,
    config: CoverageConfig,
    executor: Executor,
    memo: RunMemo,
) -> Iterator[tuple[Sequence[NamePair], list[dict[str, Any]]]]:
    """Each block with its rows, in block order (rows as :func:`score_pairs` gives them)."""
    lenses = config.lenses
    pending: deque[_Block] = deque()  # read back, rows not yet built, in block order
    owners: deque[_Block] = deque()  # the block of each group queued, in queue order
    waiting: dict[Pair, list[_Block]] = {}  # queued pair -> later blocks that need it

    def groups() -> Iterator[list[Pair]]:
        for pairs in blocks:
            block = _Block(pairs, read_back(pairs, resolve, config, memo))
            todo: list[Pair] = []
            for pair in pairs_to_match(pairs, block.lookup):
                if pair in memo.matches:
                    block.matched[pair] = memo.matches[pair]
                elif pair in waiting:
                    waiting[pair].append(block)
                else:
                    waiting[pair] = []
                    todo.append(pair)
            block.groups = balanced_groups(todo, GROUP_WEIGHT) if todo else [[]]
            pending.append(block)
            for group in block.groups:
                owners.append(block)
                yield group

    def finished() -> Iterator[tuple[Sequence[NamePair], list[dict[str, Any]]]]:
        while pending and pending[0].complete:
            block = pending.popleft()
            fresh = match_groups(block.groups, block.results, executor, lenses)
            memo.keep_matches(fresh)
            for pair, match in fresh.items():
                for later in waiting.pop(pair):
                    later.matched[pair] = match
            block.matched.update(fresh)
            yield block.pairs, build_rows(block.pairs, block.lookup, block.matched, lenses)

    for result in executor.map(ClassifyGroup(lenses), groups(), chunk_size=1):
        owners.popleft().results.append(result)
        yield from finished()
    yield from finished()
