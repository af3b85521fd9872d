"""Lazy package exports (PEP 562): a package names where each public name lives, and the
module holding it is imported on first use, so importing one submodule stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, str], names: Collection[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return the ``__getattr__`` and ``__dir__`` of ``package``: ``homes`` maps each public
    name to its submodule (relative to ``package``), ``names`` is the package's ``__all__``."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return getattr_, dir_
