"""The closing summary of every family command: a compact table of headline numbers.

One helper so every family prints rates the same way (``72.4% [65.1, 78.9]``, the interval
in percent) and to the same place: standard error, because standard output may carry the
command's data (canon keys, a JSON report). On a terminal rich draws a boxed table; anywhere
else (a pipe, a file, a CI log) the table is Markdown, one line per row, never cut to a width,
so every number survives. With ``--json`` (:func:`set_json`) each summary is instead one JSON
object on standard output (``{"tables": [{"title", "columns", "rows"}], "notes": [...]}``).
``--quiet`` commands simply do not call it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chemgauge.eval.stats import wilson_interval

__all__ = [
    "PLAIN_WIDTH",
    "count_rate_cell",
    "json_mode",
    "markdown_table",
    "print_summary",
    "print_table",
    "rate_cell",
    "set_json",
    "summary_table",
    "table_data",
]

PLAIN_WIDTH = 120

_JSON = {"on": False}


def set_json(on: bool) -> None:
    """Print summaries as JSON on standard output (the ``--json`` flag of every command)."""
    _JSON["on"] = on


def json_mode() -> bool:
    """Whether summaries go out as JSON (``--json``)."""
    return _JSON["on"]


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


def _plain(text: Any) -> str:
    """A cell, title or header as the text it shows (rich markup resolved, escapes removed)."""
    if text is None:
        return ""
    if isinstance(text, Text):
        return text.plain
    return Text.from_markup(str(text)).plain


def table_data(table: Table) -> dict[str, Any]:
    """A table as plain data: title, column names, rows of cell texts, caption."""
    columns = [_plain(column.header) for column in table.columns]
    cells = [[_plain(cell) for cell in column.cells] for column in table.columns]
    rows = [list(row) for row in zip(*cells, strict=True)] if cells else []
    data: dict[str, Any] = {"title": _plain(table.title), "columns": columns, "rows": rows}
    if table.caption is not None:
        data["caption"] = _plain(table.caption)
    return data


def _md_cell(text: str) -> str:
    from chemgauge.report.formatting import md_cell

    return md_cell(text)


def markdown_table(table: Table) -> str:
    """A table as Markdown (title line, header, one line per row), never cut to a width."""
    data = table_data(table)
    lines = [data["title"]] if data["title"] else []
    lines.append("| " + " | ".join(_md_cell(c) for c in data["columns"]) + " |")
    aligns = ["---:" if column.justify == "right" else "---" for column in table.columns]
    lines.append("|" + "|".join(aligns) + "|")
    lines.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in data["rows"])
    if "caption" in data:
        lines.append(data["caption"])
    return "\n".join(lines) + "\n"


def print_table(table: Table, *, err: bool = False) -> None:
    """One table to stdout (or stderr): boxed on a terminal, Markdown anywhere else, and with
    ``--json`` one JSON object on standard output."""
    if json_mode():
        sys.stdout.write(json.dumps({"tables": [table_data(table)]}, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    stream: TextIO = sys.stderr if err else sys.stdout
    if stream.isatty():
        Console(stderr=err, highlight=False).print(table)
    else:
        stream.write(markdown_table(table))
        stream.flush()


def print_summary(*tables: Table, notes: Sequence[str] = ()) -> None:
    """Print tables, then plain note lines (paths, hashes: too long for a caption), to stderr.

    Standard error is boxed on a terminal and Markdown anywhere else; with ``--json`` the
    summary is one JSON object on standard output instead.
    """
    if json_mode():
        document = {"tables": [table_data(t) for t in tables], "notes": list(notes)}
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    tty = sys.stderr.isatty()
    for table in tables:
        print_table(table, err=True)
    for note in notes:
        if tty:
            Console(stderr=True, highlight=False).print(note, markup=False, soft_wrap=True)
        else:
            sys.stderr.write(note + "\n")
