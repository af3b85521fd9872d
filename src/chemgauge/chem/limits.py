"""Size limits on every structure chemgauge reads: one molecule can never take the machine.

A structure is measured where it enters (:mod:`chemgauge.chem.smiles`, molfiles, reactions)
before any expensive step (standardization and tautomer search, InChI, common-substructure
search, property calculation, template application) can see it; one over a limit is a
counted refusal with its reason (``too_long``, ``too_many_atoms``, ``too_many_rings``,
``too_many_fragments``), never a parse attempt that runs for minutes. The defaults cover
every real data set the project reads with room to spare (largest seen: SMILES text 605
characters (a mapped USPTO-50k reaction side), 211 atoms (an OPSIN test name), 15 rings (a
JPO reference), 5 fragments (a UOB reference), 1 accepted product set per USPTO record)
and are raised per run with ``--max-atoms``, ``--max-smiles-chars``, ``--max-rings``,
``--max-fragments`` and ``--max-alternatives`` on any command. The limits travel to worker
processes through the environment (``CHEMGAUGE_MAX_ATOMS`` ...), so every process of a run
applies the same ones, and every report records them in its provenance.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields, replace

__all__ = [
    "DEFAULT_LIMITS",
    "LIMIT_FLAGS",
    "StructureLimits",
    "pinned_limits",
    "set_limits",
    "structure_limits",
]


@dataclass(frozen=True)
class StructureLimits:
    """The largest structure a run accepts (see the module docstring)."""

    max_smiles_chars: int = 5_000
    max_atoms: int = 500
    max_rings: int = 100
    max_fragments: int = 50
    #: Alternatives one record may list (a forward record's accepted products): the work on
    #: a record grows with them, so a hand-made record of thousands is refused, counted.
    max_alternatives: int = 100

    def to_dict(self) -> dict[str, int]:
        """Plain mapping for provenance."""
        return asdict(self)


DEFAULT_LIMITS = StructureLimits()

#: Field -> the command-line flag that raises it (named in every refusal).
LIMIT_FLAGS = {f.name: "--" + f.name.replace("_", "-") for f in fields(StructureLimits)}

#: Hard ceilings no flag passes: RDKit's canonical SMILES writer recurses once per atom of a
#: chain and overflows its stack (killing the process) at ~20,000 chain atoms.
CEILINGS = StructureLimits(max_smiles_chars=200_000, max_atoms=10_000, max_rings=2_000,
                           max_fragments=10_000, max_alternatives=100_000)  # fmt: skip

_ENV = {f.name: "CHEMGAUGE_" + f.name.upper() for f in fields(StructureLimits)}
_cache: tuple[tuple[str | None, ...], StructureLimits] | None = None
_pinned: StructureLimits | None = None


def structure_limits() -> StructureLimits:
    """The limits of this run: the defaults, raised (or lowered) by the run's flags."""
    global _cache
    if _pinned is not None:
        return _pinned
    key = tuple(os.environ.get(name) for name in _ENV.values())
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    values: dict[str, int] = {}
    for field, raw in zip(_ENV, key, strict=True):
        if raw is not None and raw.strip().isdigit():
            values[field] = min(int(raw), getattr(CEILINGS, field))
    limits = replace(DEFAULT_LIMITS, **values)
    _cache = (key, limits)
    return limits


@contextlib.contextmanager
def pinned_limits() -> Iterator[StructureLimits]:
    """Read the limits once for a block of work that cannot change them (scoring a chunk):
    each later read in the block skips the environment look-ups (a hot path reads the limits
    once per component)."""
    global _pinned
    outer = _pinned
    _pinned = structure_limits()
    try:
        yield _pinned
    finally:
        _pinned = outer


def set_limits(**values: int | None) -> StructureLimits:
    """Set limits for this process and every child it starts (``None`` keeps a value);
    a value out of range is a ``ValueError`` naming the flag and the allowed range."""
    for field, value in values.items():
        if value is None:
            continue
        if field not in _ENV:
            raise ValueError(f"no structure limit named {field!r}")
        ceiling = getattr(CEILINGS, field)
        if not 1 <= value <= ceiling:
            raise ValueError(f"{LIMIT_FLAGS[field]} must be between 1 and {ceiling:,}")
        os.environ[_ENV[field]] = str(value)
    if _pinned is not None:
        raise RuntimeError("set_limits inside pinned_limits(): the block's limits would change")
    return structure_limits()
