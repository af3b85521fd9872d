"""chemgauge.cli: argument parsing only; every command calls the library."""

from chemgauge.cli.app import app, main

__all__ = ["app", "main"]
