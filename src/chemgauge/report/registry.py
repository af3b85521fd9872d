"""The report family adapters by name: the five built-ins, open to plugins.

Third-party benchmark families add an adapter class through the entry-point group
``chemgauge.report_families``.
"""

from __future__ import annotations

from chemgauge.registry import Registry
from chemgauge.report.adapters.forward import ForwardAdapter
from chemgauge.report.adapters.names import NamesAdapter
from chemgauge.report.adapters.ocsr import OcsrAdapter
from chemgauge.report.adapters.p2s import P2SAdapter
from chemgauge.report.adapters.retro import RetroAdapter
from chemgauge.report.families import FamilyAdapter

__all__ = ["REPORT_FAMILIES", "adapter_classes", "get_adapter"]

REPORT_FAMILIES: Registry[type[FamilyAdapter]] = Registry(
    "report family", group="chemgauge.report_families"
)


def adapter_classes() -> dict[str, type[FamilyAdapter]]:
    """Every registered adapter class by family name (built-ins, then plugins)."""
    return {name: REPORT_FAMILIES.get(name) for name in REPORT_FAMILIES.names()}


def get_adapter(family: str) -> FamilyAdapter:
    """An adapter instance for a family name (unknown names fail with did-you-mean)."""
    return REPORT_FAMILIES.get(family)()


REPORT_FAMILIES.register("forward", ForwardAdapter)
REPORT_FAMILIES.register("retro", RetroAdapter)
REPORT_FAMILIES.register("names", NamesAdapter)
REPORT_FAMILIES.register("ocsr", OcsrAdapter)
REPORT_FAMILIES.register("p2s", P2SAdapter)
