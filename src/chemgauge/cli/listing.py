"""``chemgauge list``: every named thing a command accepts, one line each, and its origin.

Identity policies, retro models and ranking conventions, OCSR back-ends and registered
Python recognizers, p2s models and property providers, forward models for retro round trips
and report families: each with one line saying what it is and whether it is built in or
comes from a plugin (an entry point of another package).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import typer
from rich.table import Table

from chemgauge.cli.summary import print_table
from chemgauge.registry import Registry

__all__ = ["entries", "list_command"]

# One line for each built-in entry whose object has no docstring of its own (a factory).
_BUILT_IN: dict[tuple[str, str], str] = {
    ("retro model", "predictions"): "precomputed ranked outputs from a JSONL file (model_dir=)",
    ("retro model", "templates"): "rdchiral template baseline extracted from the training fold",
    ("p2s model", "structure_only"): "baseline that sees the structures and ignores the evidence",
    ("p2s model", "random"): "seeded uniform choice among the candidates (chance)",
    ("p2s model", "property_oracle"): "recomputes each candidate's property and picks the closest",
    ("p2s model", "chat"): "an OpenAI-compatible chat model over HTTP",
    ("property provider", "table"): "your precomputed values (--table FILE)",
    ("property provider", "xtb"): "GFN2-xTB (tblite): dipole, gap; IR and Raman on request",
    ("property provider", "mopac"): "INDO/S-CIS (MOPAC): UV-vis excitations",
    ("property provider", "nmr"): "GIAO-HF/6-31G (PySCF): proton and carbon NMR shifts",
    ("forward model", "chemgauge"): "chemgauge's template forward predictor (embedded rules)",
}

_OCSR_BACKENDS = {
    "osra": "OSRA executable (Debian's osra package)",
    "command": "any program: an argument list with {image}; SMILES, molfile or JSON out",
    "http": "an OpenAI-compatible vision endpoint (key from $OPENAI_API_KEY)",
    "python": "a registered callable (ocsr recognizer) or module:function",
}

_CONVENTIONS = {
    "syntheseus": "invalid outputs dropped, duplicates removed (syntheseus's ranking)",
    "raw_slots": "an invalid output keeps its rank slot",
}


def _summary_line(kind: str, name: str, entry: Any) -> str:
    if (kind, name) in _BUILT_IN:
        return _BUILT_IN[(kind, name)]
    claim = getattr(entry, "claim", None)
    if isinstance(claim, str) and claim:
        return claim.split(". ")[0].rstrip(".")
    doc = inspect.getdoc(entry) or ""
    return doc.strip().splitlines()[0] if doc.strip() else "-"


def _registered(kind: str, registry: Registry[Any]) -> Iterator[tuple[str, str, str, str]]:
    for name in registry.names():
        yield kind, name, _summary_line(kind, name, registry.get(name)), registry.origin(name)


def entries() -> list[tuple[str, str, str, str]]:
    """(kind, name, one line, origin) for every listed entry, in a fixed order."""
    from chemgauge.benchmarks.retro.roundtrip import FORWARD_MODELS
    from chemgauge.chem import MATCHERS
    from chemgauge.engines.ocsr.base import RECOGNIZERS
    from chemgauge.engines.ocsr.registry import BACKEND_NAMES
    from chemgauge.engines.p2s.registry import P2S_MODELS, PROPERTY_PROVIDERS
    from chemgauge.engines.retro.registry import RETRO_MODELS
    from chemgauge.report.registry import REPORT_FAMILIES

    rows: list[tuple[str, str, str, str]] = []
    rows.extend(_registered("identity policy", MATCHERS))
    rows.extend(_registered("retro model", RETRO_MODELS))
    rows.append(("retro model", "syntheseus:<ModelClass>", "a syntheseus model class", "built in"))
    rows.extend(("retro convention", n, line, "built in") for n, line in _CONVENTIONS.items())
    rows.extend(
        ("ocsr back-end", name, _OCSR_BACKENDS.get(name, "-"), "built in") for name in BACKEND_NAMES
    )
    rows.extend(_registered("ocsr recognizer", RECOGNIZERS))
    rows.extend(_registered("p2s model", P2S_MODELS))
    rows.extend(_registered("property provider", PROPERTY_PROVIDERS))
    rows.extend(_registered("forward model", FORWARD_MODELS))
    rows.extend(_registered("report family", REPORT_FAMILIES))
    return rows


def list_command(
    kind: str | None = typer.Argument(
        None,
        help="Only this kind (e.g. 'p2s model'; a prefix like 'retro' works).",
        show_default=False,
    ),
) -> None:
    """List identity policies, models, back-ends, conventions, property providers and report
    families, one line each, built in or from a plugin."""
    rows = [row for row in entries() if kind is None or row[0].startswith(kind)]
    if not rows:
        kinds = sorted({row[0] for row in entries()})
        raise typer.BadParameter(f"no kind starts with {kind!r}; kinds: {', '.join(kinds)}")
    table = Table(title="chemgauge: what commands accept by name")
    for column in ("kind", "name", "what it is", "from"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    print_table(table)
