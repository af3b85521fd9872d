"""The toy family's systems under test: ``upper`` (always right) and ``echo`` (right only on
words already in upper case)."""

from dataclasses import dataclass

from chemgauge.registry import Systems, describe_entries


@dataclass(frozen=True)
class ToyOptions:
    """What a toy system is built from (nothing yet)."""


SYSTEMS: Systems[ToyOptions, object] = Systems("toy", object)
SYSTEMS.register("upper", lambda options: str.upper)
SYSTEMS.register("echo", lambda options: str)


def entries() -> list[tuple[str, str, str, str]]:
    """The ``chemgauge list`` lines of the toy family."""
    return describe_entries("toy system", SYSTEMS, {"upper": "upper-cases", "echo": "echoes"})
