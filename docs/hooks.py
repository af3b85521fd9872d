"""MkDocs hooks: pages that list what the code registers are made from the registry."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- families: this table is made from the Family registry when the site is built -->"


def families_table() -> str:
    """The table of every registered family: name, the question it answers, its page."""
    from chemgauge.families import FAMILIES, get_family

    lines = ["| family | question | page |", "|---|---|---|"]
    for name in FAMILIES.names():
        family = get_family(name)
        page = f"[{name}]({family.docs})" if family.docs else "-"
        lines.append(f"| {name} | {family.summary} | {page} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the families marker with the registry's table."""
    return markdown.replace(MARKER, families_table()) if MARKER in markdown else markdown
