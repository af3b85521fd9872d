"""The forward family's ``chemgauge list`` lines: its systems under test."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]


def entries() -> list[ListEntry]:
    """The registered forward systems (``--model`` of ``forward benchmark``)."""
    from chemgauge.families.forward.systems import FORWARD_SYSTEMS, SYSTEM_LINES

    return describe_entries("forward system", FORWARD_SYSTEMS, SYSTEM_LINES)
