"""The OCSR family's ``chemgauge list`` lines: back-ends and registered Python recognizers."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]

_BACKENDS = {
    "osra": "OSRA executable (Debian's osra package)",
    "command": "any program: an argument list with {image}; SMILES, molfile or JSON out",
    "http": "an OpenAI-compatible vision endpoint (key from $OPENAI_API_KEY)",
    "python": "a registered callable (ocsr recognizer) or module:function",
}


def entries() -> list[ListEntry]:
    """The back-ends (``--model``; plugins included), then the recognizers registered for
    the ``python`` back-end."""
    from chemgauge.families.ocsr.engine.base import RECOGNIZERS
    from chemgauge.families.ocsr.engine.registry import OCSR_SYSTEMS

    rows = describe_entries(OCSR_SYSTEMS.kind, OCSR_SYSTEMS, _BACKENDS)
    rows.extend(describe_entries(RECOGNIZERS.kind, RECOGNIZERS))
    return rows
