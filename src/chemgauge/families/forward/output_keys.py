"""Keys of raw product outputs: what makes two outputs the same product multiset.

An output is split on ``.``; each component is keyed once per distinct string (memo), and
the output's key is the sorted tuple of component keys (multiplicity kept), or ``None`` when
the output is empty or any component has no key. Two identities:

- ``exact``: chemgauge's canonical isomeric SMILES (RDKit, sanitized): the corpus's own
  identity, so outputs are compared with the accepted products.
- ``as_written``: the component strings as written, checked for SMILES syntax only (RDKit
  without sanitization): for files a pipeline already canonicalized with its own rules (the
  Augmented Transformer's charge-stripped ``.can`` files, which RDKit's valence check refuses).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdkit import Chem

from chemgauge.chem import Canonicalizer, try_flatten_stereo
from chemgauge.chem.smiles import size_refusal, smiles_refusal
from chemgauge.errors import ConfigError
from chemgauge.families.forward.conventions import OutputKey

__all__ = ["OUTPUT_IDENTITIES", "OutputKeys"]

OUTPUT_IDENTITIES = ("exact", "as_written")


def _syntax_only(component: str) -> str | None:
    """The component itself if RDKit reads it without sanitizing and it is within the run's
    structure limits (text before the parse, atoms and rings after), else ``None``."""
    if smiles_refusal(component) is not None:
        return None
    mol = Chem.MolFromSmiles(component, sanitize=False)
    return None if mol is None or size_refusal(mol) is not None else component


@dataclass
class OutputKeys:
    """Memoized output keys under one identity (every distinct string keyed once)."""

    identity: str = "exact"
    _outputs: dict[str, OutputKey] = field(default_factory=dict)
    _components: dict[str, str | None] = field(default_factory=dict)
    _flat: dict[tuple[str, ...], tuple[str, ...] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.identity not in OUTPUT_IDENTITIES:
            raise ConfigError(
                f"output identity must be one of {', '.join(OUTPUT_IDENTITIES)}, "
                f"got {self.identity!r}"
            )
        canon = Canonicalizer("exact")
        self._component_key = canon if self.identity == "exact" else _syntax_only

    @property
    def distinct_outputs(self) -> int:
        """Distinct output strings keyed so far."""
        return len(self._outputs)

    def component(self, text: str) -> str | None:
        """The key of one component (memoized)."""
        try:
            return self._components[text]
        except KeyError:
            key = self._component_key(text) if text.strip() else None
            self._components[text] = key
            return key

    def __call__(self, output: str) -> OutputKey:
        """The key of one raw output, ``None`` if it is invalid."""
        try:
            return self._outputs[output]
        except KeyError:
            pass
        parts = output.strip().split(".")
        keys = [self.component(p) for p in parts]
        result: OutputKey = None
        if parts != [""] and all(k is not None for k in keys):
            result = tuple(sorted(k for k in keys if k is not None))
        self._outputs[output] = result
        return result

    def flat(self, key: tuple[str, ...]) -> tuple[str, ...] | None:
        """The stereo-ignored form of a key (``None`` if a component cannot be flattened)."""
        try:
            return self._flat[key]
        except KeyError:
            pass
        text = ".".join(key)
        result: tuple[str, ...] | None = key
        if any(c in text for c in "@/\\"):
            flat = [try_flatten_stereo(c) for c in key]
            result = None if any(f is None for f in flat) else tuple(sorted(f for f in flat if f))
        self._flat[key] = result
        return result
