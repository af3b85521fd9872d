"""The benchmark families: one package each, registered as one :class:`Family` object.

A family package (``chemgauge.families.<name>``) holds everything of one benchmark: its
public API (``__init__``), its command line (``cli.py``, arguments only), its report adapter
(``adapter.py``), its config types, the benchmark modules, the systems it ships or drives
(``engine/``) and its example inputs (``examples/``). The framework (``chem``, ``eval``,
``report``, ``cli``) never imports a family; it reads :data:`FAMILIES`. A family imports the
framework and itself only (the one declared exception is in :data:`DECLARED_CROSS_IMPORTS`).

Third-party packages add a family through the entry-point group ``chemgauge.families``,
naming a :class:`Family` object; adding one is: copy a family folder, register one object.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemgauge.errors import ConfigError
from chemgauge.registry import Registry

if TYPE_CHECKING:
    import typer

    from chemgauge.report.adapter import FamilyAdapter

__all__ = [
    "BUILT_IN",
    "DECLARED_CROSS_IMPORTS",
    "FAMILIES",
    "Family",
    "ListEntry",
    "get_family",
]

#: (kind, name, one line, origin): one line of ``chemgauge list``.
ListEntry = tuple[str, str, str, str]

#: The built-in families, in the order commands and pages list them.
BUILT_IN = ("forward", "retro", "names", "ocsr", "p2s")

#: The only imports allowed from one family into another: (importing family, imported module
#: prefix). Retro's forward round trip runs the forward family's template engine.
DECLARED_CROSS_IMPORTS = (("retro", "chemgauge.families.forward.engine"),)


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


@dataclass(frozen=True)
class Family:
    """One benchmark family: its name, where its parts are, and its schema versions.

    The parts are ``module:attribute`` paths imported on first use, so registering a family
    costs nothing and a command line loads only the family it runs.

    Attributes:
        name: the family's name (``family`` in its ``report.json``, its command's name).
        summary: the question the family answers, one line.
        package: the family's package (``chemgauge.families.forward``).
        schema_version: ``family_schema_version`` of the reports it writes now.
        cli: the Typer app of ``chemgauge <name>``.
        adapter: the report adapter class (:class:`chemgauge.report.adapter.FamilyAdapter`).
        metrics: the pydantic model of the report's ``metrics`` block.
        listing: a callable giving the family's ``chemgauge list`` lines (systems under test,
            conventions, back-ends), or ``""`` for none.
        docs: the family's page of the documentation site (relative to ``docs/``).
    """

    name: str
    summary: str
    package: str
    schema_version: int
    cli: str
    adapter: str
    metrics: str = ""
    listing: str = ""
    docs: str = ""

    def app(self) -> typer.Typer:
        """The family's command line (``chemgauge <name> ...``)."""
        app: typer.Typer = _load(self.cli)
        return app

    def adapter_class(self) -> type[FamilyAdapter]:
        """The report adapter class of this family."""
        adapter: type[FamilyAdapter] = _load(self.adapter)
        return adapter

    def metrics_model(self) -> Any:
        """The pydantic model of the ``metrics`` block of this family's reports."""
        return _load(self.metrics)

    def list_entries(self) -> Sequence[ListEntry]:
        """The family's ``chemgauge list`` lines."""
        if not self.listing:
            return ()
        entries: Callable[[], Sequence[ListEntry]] = _load(self.listing)
        return entries()

    def metrics_schema_path(self) -> Path:
        """The published JSON Schema of the ``metrics`` block, beside the family's modules
        (``metrics.v<schema_version>.schema.json``; a test keeps it equal to the model)."""
        name = f"metrics.v{self.schema_version}.schema.json"
        return Path(str(files(self.package).joinpath(name)))

    def examples_dir(self) -> Path:
        """The family's example inputs (``examples/`` inside its package)."""
        return Path(str(files(self.package).joinpath("examples")))


FAMILIES: Registry[Family] = Registry("family", group="chemgauge.families")
for _name in BUILT_IN:
    FAMILIES.register_lazy(_name, f"chemgauge.families.{_name}.family:FAMILY")


def get_family(name: str) -> Family:
    """The registered family ``name`` (unknown names fail with "did you mean")."""
    family = FAMILIES.get(name)
    if not isinstance(family, Family):
        raise ConfigError(f"entry point {name!r} of group chemgauge.families is not a Family")
    return family
