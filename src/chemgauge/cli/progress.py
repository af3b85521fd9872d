"""Progress display for long work: a rich bar on a terminal, silence otherwise or with --quiet.

The bar shows done/total, the rate in items per second, the time elapsed and the time
remaining; with an unknown total it shows the count and the rate. Nothing is drawn when
standard error is not a terminal, so logs and pipes stay plain.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["RateColumn", "progress_bar"]


class RateColumn(ProgressColumn):
    """Items per second over rich's recent-speed window (``-`` until there is one)."""

    def render(self, task: Task) -> Text:
        """The rate text for one task."""
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("- /s", style="progress.data.speed")
        text = f"{speed:,.0f}/s" if speed >= 10 else f"{speed:.2f}/s"
        return Text(text, style="progress.data.speed")


@contextmanager
def progress_bar(
    description: str, total: int | None, *, quiet: bool = False, min_total: int = 1000
) -> Iterator[Callable[[int], None]]:
    """Yield an ``advance(n)`` callback; a bar shows only on a terminal for long work.

    ``min_total`` is the size below which work is too short to be worth a bar.
    """
    show = not quiet and sys.stderr.isatty() and (total is None or total >= min_total)
    if not show:
        yield lambda n: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        # Standard error, like the check above: standard output may be the command's data.
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
