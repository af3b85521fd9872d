"""The p2s family's ``chemgauge list`` lines: models and property providers."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]

_MODELS = {
    "structure_only": "baseline that sees the structures and ignores the evidence",
    "random": "seeded uniform choice among the candidates (chance)",
    "property_oracle": "recomputes each candidate's property and picks the closest",
    "chat": "an OpenAI-compatible chat model over HTTP",
}
_PROVIDERS = {
    "table": "your precomputed values (--table FILE)",
    "xtb": "GFN2-xTB (tblite): dipole, gap; IR and Raman on request",
    "mopac": "INDO/S-CIS (MOPAC): UV-vis excitations",
    "nmr": "GIAO-HF/6-31G (PySCF): proton and carbon NMR shifts",
}


def entries() -> list[ListEntry]:
    """The models (``--model``, the systems under test), then the property providers."""
    from chemgauge.families.p2s.engine.registry import P2S_SYSTEMS, PROPERTY_PROVIDERS

    rows = describe_entries(P2S_SYSTEMS.kind, P2S_SYSTEMS, _MODELS)
    rows.extend(describe_entries(PROPERTY_PROVIDERS.kind, PROPERTY_PROVIDERS, _PROVIDERS))
    return rows
