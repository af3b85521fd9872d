"""The forward family's ``chemgauge list`` lines: its systems under test and conventions."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]


def entries() -> list[ListEntry]:
    """The registered forward systems (``--model`` of ``forward benchmark``) and the ranking
    conventions outside systems are scored under (``--convention``)."""
    from chemgauge.families.forward.conventions import CONVENTION_LINES
    from chemgauge.families.forward.systems import FORWARD_SYSTEMS, SYSTEM_LINES

    rows = describe_entries("forward system", FORWARD_SYSTEMS, SYSTEM_LINES)
    rows.extend(("forward convention", n, line, "built in") for n, line in CONVENTION_LINES.items())
    return rows
