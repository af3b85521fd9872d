"""The report adapter of each registered family (:data:`chemgauge.families.FAMILIES`).

A family's adapter is named by its :class:`~chemgauge.families.Family` object; third-party
families register theirs through the entry-point group ``chemgauge.families``.
"""

from __future__ import annotations

from chemgauge.families import FAMILIES, get_family
from chemgauge.report.adapter import FamilyAdapter

__all__ = ["adapter_classes", "get_adapter"]


def adapter_classes() -> dict[str, type[FamilyAdapter]]:
    """Every registered adapter class by family name (built-ins, then plugins)."""
    return {name: get_family(name).adapter_class() for name in FAMILIES.names()}


def get_adapter(family: str) -> FamilyAdapter:
    """An adapter instance for a family name (unknown names fail with did-you-mean)."""
    return get_family(family).adapter_class()()
