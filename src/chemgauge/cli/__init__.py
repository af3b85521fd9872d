"""chemgauge.cli: argument parsing only; every command calls the library.

``app`` (the whole command tree) is built on first use; :func:`main` loads only the command
it runs.
"""

import importlib
from typing import Any

from chemgauge.cli.app import main

__all__ = ["app", "main"]

_APP_MODULE = importlib.import_module("chemgauge.cli.app")
# Importing the submodule bound its name here; ``app`` is the Typer app instead, built on
# first use by the module's own ``__getattr__``.
del globals()["app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        return _APP_MODULE.__getattr__("app")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
