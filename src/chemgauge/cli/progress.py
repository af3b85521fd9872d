"""Progress display for long work: a rich bar on a terminal, silence otherwise or with --quiet."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@contextmanager
def progress_bar(
    description: str, total: int | None, *, quiet: bool = False, min_total: int = 1000
) -> Iterator[Callable[[int], None]]:
    """Yield an ``advance(n)`` callback; a bar shows only on a terminal for long work."""
    show = not quiet and sys.stderr.isatty() and (total is None or total >= min_total)
    if not show:
        yield lambda n: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
