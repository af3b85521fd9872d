"""``chemgauge list``: every named thing a command accepts, one line each, and its origin.

Identity policies, then what each registered family accepts by name (retro models and
ranking conventions, OCSR back-ends and Python recognizers, p2s models and property
providers, forward models for retro round trips), then the families: each with one line
saying what it is and whether it is built in or comes from a plugin (an entry point of
another package).
"""

from __future__ import annotations

import typer
from rich.table import Table

from chemgauge.cli.summary import print_table
from chemgauge.families import FAMILIES, get_family
from chemgauge.registry import describe_entries

__all__ = ["entries", "list_command"]


def entries() -> list[tuple[str, str, str, str]]:
    """(kind, name, one line, origin) for every listed entry, in a fixed order: identity
    policies, each registered family's own lines, then the families."""
    from chemgauge.chem import MATCHERS

    rows = describe_entries("identity policy", MATCHERS)
    for name in FAMILIES.names():
        rows.extend(get_family(name).list_entries())
    rows.extend(
        ("family", name, get_family(name).summary, FAMILIES.origin(name))
        for name in FAMILIES.names()
    )
    return rows


def list_command(
    kind: str | None = typer.Argument(
        None,
        help="Only this kind (e.g. 'p2s system'; a prefix like 'retro' works).",
        show_default=False,
    ),
) -> None:
    """List identity policies, models, back-ends, conventions, property providers and report
    families, one line each, built in or from a plugin."""
    rows = [row for row in entries() if kind is None or row[0].startswith(kind)]
    if not rows:
        kinds = sorted({row[0] for row in entries()})
        raise typer.BadParameter(f"no kind starts with {kind!r}; kinds: {', '.join(kinds)}")
    table = Table(title="chemgauge: what commands accept by name")
    for column in ("kind", "name", "what it is", "from"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    print_table(table)
