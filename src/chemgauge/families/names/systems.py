"""The systems under test of the names family: namers, registered by name.

A namer names a batch of structures (SMILES) and returns, for each, one name or an
abstention (``None`` or an empty name). Each registered factory takes the run's
:class:`~chemgauge.families.names.config.CoverageConfig` and returns a :class:`Namer`;
``--model NAME`` picks one (``--namer-cmd`` picks ``command``). Adding a namer is one
registration here (``NAMES_SYSTEMS.register_lazy(name, "module:factory")``) or, from another
package, one entry point in the group ``chemgauge.names_systems``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from chemgauge.registry import Systems

if TYPE_CHECKING:
    from chemgauge.families.names.config import CoverageConfig

__all__ = ["NAMES_SYSTEMS", "Namer", "build_namer"]


@runtime_checkable
class Namer(Protocol):
    """A structure-to-name generator: one name (or ``None``/empty: abstained) per SMILES."""

    def name(self, smiles: Sequence[str]) -> Sequence[str | None]:
        """Names for a batch of SMILES, in order, exactly one per structure."""
        ...


NAMES_SYSTEMS: Systems[CoverageConfig, Namer] = Systems("names", Namer)
NAMES_SYSTEMS.register_lazy("command", "chemgauge.families.names.engine.namer:command_namer")
# The open namers, each in its own environment (`chemgauge names namers install NAME`).
for _name in ("orthonym", "openclatura", "nispo"):
    NAMES_SYSTEMS.register_lazy(_name, f"chemgauge.families.names.engine.open_namer:{_name}")


def build_namer(config: CoverageConfig) -> Namer:
    """The namer ``config`` selects (unknown names fail with "did you mean")."""
    name = config.namer
    if name is None:
        raise ValueError("this run scores a pairs file: it has no namer")
    return NAMES_SYSTEMS.build(name, config)
