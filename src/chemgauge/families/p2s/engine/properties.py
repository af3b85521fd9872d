"""Property providers: where the physical evidence of a p2s task comes from.

A provider maps canonical SMILES to property value objects (formats in
``chemgauge.families.p2s.spec``). The base class owns deduplication, caching, count checks,
call counting and timing; a back-end implements ``_compute(batch)``. Providers register by
name in :data:`PROPERTY_PROVIDERS`; third-party ones join through the entry-point group
``chemgauge.property_providers``.

Built-ins:

* ``table``: precomputed values from a JSONL file, one molecule a line:
  ``{"smiles": "c1ccccc1O", "properties": {"dipole": {"value": 1.3, "unit": "D"}}}``.
  SMILES are canonicalized, so any spelling of a molecule finds its row.
* ``xtb``: GFN2-xTB single points through ``tblite`` (``pip install chemgauge[xtb]``).
"""

from __future__ import annotations

import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemgauge.chem import canonical_smiles, try_canonical_smiles
from chemgauge.errors import ChemgaugeError, ConfigError, InputFileError, SmilesError
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.rejections import RejectionStats

__all__ = [
    "MoleculeProvider",
    "PropertyProvider",
    "PropertyResult",
    "ProviderOptions",
    "TableProvider",
]


@dataclass(frozen=True, slots=True)
class PropertyResult:
    """Property values of one molecule, where they came from, or why there are none."""

    values: Mapping[str, Any]
    origin: str = ""
    error: str | None = None
    # Wall seconds spent on this molecule (timing only: never part of equality or outputs).
    seconds: float = field(default=0.0, compare=False)
    # A composite provider's members that failed while others gave values: name -> error.
    member_errors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Run policy for a provider factory (each provider reads what concerns it)."""

    table: Path | None = None
    seed: int = 0xC0FFEE
    infrared: bool = False
    raman: bool = False


# Providers rebuilt in this process from a pickled reference, by the token of the original.
_REBUILT: dict[str, PropertyProvider] = {}


def _rebuild(
    cls: type[PropertyProvider], token: str, arguments: dict[str, Any]
) -> PropertyProvider:
    """The provider a worker process builds (once) for a parent's provider token."""
    provider = _REBUILT.get(token)
    if provider is None:
        provider = cls(**arguments)
        provider.token = token
        _REBUILT[token] = provider
    return provider


class PropertyProvider(ABC):
    """Batch-first property calculator with one hook, ``_compute``.

    ``isolated`` providers run native code (quantum chemistry) that a Python signal cannot
    interrupt: a build runs them in a killable child process under a time limit.
    ``max_heavy_atoms`` is the provider's own size ceiling (its cost grows steeply with size).
    """

    name: str = "provider"
    isolated: bool = False
    max_heavy_atoms: int | None = None

    def __init__(self) -> None:
        self._cache: dict[str, PropertyResult] = {}
        self.calls = 0
        self.computed = 0
        self.seconds = 0.0
        self.token = secrets.token_hex(8)

    def arguments(self) -> dict[str, Any] | None:
        """Constructor keywords that rebuild this provider in another process, or ``None``
        when it pickles as it is. A provider that holds a module or a handle overrides this,
        so executors ship a small reference and each worker builds the provider once."""
        return None

    def __reduce__(self) -> Any:
        arguments = self.arguments()
        if arguments is None:
            return super().__reduce__()
        return (_rebuild, (type(self), self.token, arguments))

    def fingerprint(self) -> dict[str, Any]:
        """What its values depend on, to key a resume journal (default: :meth:`describe`)."""
        return self.describe()

    @property
    def properties(self) -> tuple[str, ...]:
        """The single properties this provider can give."""
        return ()

    def describe(self) -> dict[str, Any]:
        """Name, version and settings for provenance (no secrets, no timings)."""
        return {"name": self.name}

    def compute(self, smiles: Sequence[str]) -> list[PropertyResult]:
        """Results for canonical SMILES, in input order; each distinct string computed once."""
        self.calls += 1
        todo = list(dict.fromkeys(s for s in smiles if s not in self._cache))
        if todo:
            start = time.perf_counter()
            results = self._compute(todo)
            self.seconds += time.perf_counter() - start
            if len(results) != len(todo):
                raise ConfigError(
                    f"provider {self.name!r} returned {len(results)} results for {len(todo)}"
                )
            self.computed += len(todo)
            self._cache.update(zip(todo, results, strict=True))
        return [self._cache[s] for s in smiles]

    def compute_one(self, smiles: str) -> PropertyResult:
        """Result for one canonical SMILES."""
        return self.compute([smiles])[0]

    @abstractmethod
    def _compute(self, batch: list[str]) -> list[PropertyResult]:
        """Compute each distinct, uncached canonical SMILES of the batch."""


class MoleculeProvider(PropertyProvider):
    """A calculator that works one molecule at a time (hook ``_one``); any exception it raises
    becomes that molecule's counted failure, never the batch's."""

    failure_label = "calculation failed"

    @abstractmethod
    def _one(self, smiles: str) -> PropertyResult:
        """The result for one canonical SMILES."""

    def _compute(self, batch: list[str]) -> list[PropertyResult]:
        out = []
        for smiles in batch:
            try:
                out.append(self._one(smiles))
            except ChemgaugeError as exc:
                out.append(PropertyResult({}, "", str(exc)))
            except Exception as exc:  # native back-ends raise their own error types
                message = f"{self.failure_label}: {type(exc).__name__}: {exc}"
                out.append(PropertyResult({}, "", message[:500]))
        return out


class TableProvider(PropertyProvider):
    """User-supplied precomputed values, keyed by canonical SMILES."""

    name = "table"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self._rows: dict[str, PropertyResult] = {}
        self._names: set[str] = set()
        stats = RejectionStats(path=str(self.path), strict=True)
        for number, obj in read_jsonl(self.path, stats):
            smiles, props = obj.get("smiles"), obj.get("properties")
            if not isinstance(smiles, str) or not isinstance(props, dict) or not props:
                raise InputFileError(
                    "a table line needs a 'smiles' string and a non-empty 'properties' object",
                    path=self.path,
                    line=number,
                    value=str(obj)[:200],
                )
            try:
                key = canonical_smiles(smiles)
            except SmilesError as exc:
                raise InputFileError(
                    exc.reason, path=self.path, line=number, value=smiles
                ) from None
            origin = f"{self.path}:{number}"
            previous = self._rows.get(key)
            if previous is not None and dict(previous.values) != props:
                raise InputFileError(
                    f"molecule already has other values at {previous.origin}",
                    path=self.path,
                    line=number,
                    value=smiles,
                )
            self._rows.setdefault(key, PropertyResult(props, origin))
            self._names.update(props)
        if not self._rows:
            raise InputFileError("property table is empty", path=self.path)
        self._sha256 = sha256_file(self.path)

    @property
    def properties(self) -> tuple[str, ...]:
        """Every property name that some row of the table carries."""
        return tuple(sorted(self._names))

    def describe(self) -> dict[str, Any]:
        """Name and table path (the file hash goes into the run provenance)."""
        return {"name": self.name, "table": str(self.path), "rows": len(self._rows)}

    def _compute(self, batch: list[str]) -> list[PropertyResult]:
        out = []
        for smiles in batch:
            key = try_canonical_smiles(smiles) or smiles
            out.append(self._rows.get(key) or PropertyResult({}, "", "not in the table"))
        return out

    def arguments(self) -> dict[str, Any]:
        """Rebuilt from its path in a worker (read once per process, not shipped per chunk)."""
        return {"path": self.path}

    def fingerprint(self) -> dict[str, Any]:
        """Name, path and the table file's SHA-256, so an edited table is never resumed."""
        return {**self.describe(), "sha256": self._sha256}
