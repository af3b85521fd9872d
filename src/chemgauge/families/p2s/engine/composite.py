"""Several property providers as one: each property from the first provider that gives it.

Bundles such as ``electronic`` (dipole, gap, ultraviolet-visible) or ``all_properties`` need
more than one calculator: ``--provider xtb --provider mopac`` builds them. Each member keeps
its own size ceiling; a member that refuses or fails a molecule leaves only its properties
out, and its reason is kept (``member_errors``) so the build counts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chemgauge.errors import ConfigError
from chemgauge.families.p2s.engine.guard import size_refusal
from chemgauge.families.p2s.engine.properties import (
    MoleculeProvider,
    PropertyProvider,
    PropertyResult,
)

__all__ = ["CompositeProvider", "combine_providers"]


class CompositeProvider(MoleculeProvider):
    """Members in priority order; the result merges what each one computed."""

    def __init__(self, members: Sequence[PropertyProvider]) -> None:
        super().__init__()
        if len(members) < 2:
            raise ConfigError("a composite provider needs at least two providers")
        names = [m.name for m in members]
        if len(set(names)) != len(names):
            raise ConfigError(f"a provider is named twice: {', '.join(names)}")
        self.members = tuple(members)
        self.name = "+".join(names)
        self.isolated = any(m.isolated for m in members)
        self._owner: dict[str, str] = {}
        for member in members:
            for prop in member.properties:
                self._owner.setdefault(prop, member.name)

    def arguments(self) -> dict[str, Any]:
        """The members travel as their own small references."""
        return {"members": self.members}

    @property
    def properties(self) -> tuple[str, ...]:
        """Every property some member gives."""
        return tuple(sorted(self._owner))

    def describe(self) -> dict[str, Any]:
        """Each member's description and which member gives which property."""
        return {
            "name": self.name,
            "members": [m.describe() for m in self.members],
            "property_sources": dict(sorted(self._owner.items())),
        }

    def fingerprint(self) -> dict[str, Any]:
        """The members' fingerprints (an edited member table is a different provider)."""
        return {"name": self.name, "members": [m.fingerprint() for m in self.members]}

    def _one(self, smiles: str) -> PropertyResult:
        values: dict[str, Any] = {}
        origins: list[str] = []
        errors: dict[str, str] = {}
        for member in self.members:
            result = size_refusal(smiles, member.max_heavy_atoms) or member.compute_one(smiles)
            if result.error is not None:
                errors[member.name] = result.error
                continue
            for prop, value in result.values.items():
                if self._owner.get(prop) == member.name:
                    values[prop] = value
            origins.append(f"{member.name}:{result.origin}")
        if not values:  # the first member's error is the molecule's; the rest ride along
            first = next(iter(errors), None)
            error = errors.pop(first) if first is not None else "no values"
            return PropertyResult({}, "", error, member_errors=errors)
        return PropertyResult(values, "; ".join(origins), member_errors=errors)


def combine_providers(providers: Sequence[PropertyProvider]) -> PropertyProvider:
    """One provider as it is, several as a :class:`CompositeProvider`."""
    if not providers:
        raise ConfigError("name at least one property provider")
    return providers[0] if len(providers) == 1 else CompositeProvider(providers)
