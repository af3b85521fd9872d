"""The names family's ``chemgauge list`` lines: the registered namers (``--model``)."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]

_NAMERS = {
    "command": "any program: SMILES on stdin, one name a line on stdout (--namer-cmd)",
}


def entries() -> list[ListEntry]:
    """The namers ``names coverage --model`` accepts, built in and from plugins."""
    from chemgauge.families.names.systems import NAMES_SYSTEMS

    return describe_entries("names system", NAMES_SYSTEMS, _NAMERS)
