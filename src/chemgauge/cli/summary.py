"""The closing summary of every family command: a compact rich table of headline numbers.

One helper so every family prints rates the same way (``72.4% [65.1, 78.9]``, the interval
in percent) and to the same place: standard error, because standard output may carry the
command's data (canon keys, a JSON report). On a terminal rich adds colour; anywhere else
(a pipe, a file, a test runner) the table is plain text with no escape codes, 120 columns
wide so it is not squeezed. ``--quiet`` commands simply do not call it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chemgauge.eval.stats import wilson_interval

__all__ = ["PLAIN_WIDTH", "count_rate_cell", "print_summary", "rate_cell", "summary_table"]

PLAIN_WIDTH = 120


def rate_cell(estimate: float | None, low: float | None, high: float | None) -> str:
    """``72.4% [65.1, 78.9]``; ``n/a`` when there were no items."""
    if estimate is None or low is None or high is None:
        return "n/a"
    return f"{100 * estimate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def count_rate_cell(count: int, n: int) -> str:
    """``count/n`` as a rate with its Wilson 95% interval, then the counts."""
    interval = wilson_interval(count, n)
    return f"{rate_cell(interval.estimate, interval.low, interval.high)} ({count}/{n})"


def summary_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    caption: str | None = None,
    labels: int = 1,
) -> Table:
    """A table whose first ``labels`` columns are left-aligned labels, the rest numbers.

    Cells are text, never rich markup: a SMILES or a path with brackets prints as it is.
    """
    table = Table(
        title=escape(title),
        caption=None if caption is None else escape(caption),
        highlight=False,
        # Wide enough for the title on one line (rich wraps a title to the table's width).
        min_width=min(len(title) + 4, PLAIN_WIDTH),
    )
    for index, column in enumerate(columns):
        table.add_column(escape(column), justify="left" if index < labels else "right")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def print_summary(*tables: Table, notes: Sequence[str] = ()) -> None:
    """Print tables, then plain note lines (paths, hashes: too long for a caption), to stderr.

    Standard error is plain and 120 columns wide when it is no terminal.
    """
    tty = sys.stderr.isatty()
    console = Console(stderr=True, highlight=False, width=None if tty else PLAIN_WIDTH)
    for table in tables:
        console.print(table)
    for note in notes:
        console.print(note, markup=False, soft_wrap=True)
