"""The ``chemgauge`` command: a Typer app whose family modules only parse arguments."""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

import chemgauge
from chemgauge.cli import board, canon, matchers, report
from chemgauge.errors import ChemgaugeError

app = typer.Typer(
    name="chemgauge",
    help="Honest, reproducible benchmarks for chemical structure-prediction systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from rdkit import rdBase

        typer.echo(f"chemgauge {chemgauge.__version__} (RDKit {rdBase.rdkitVersion})")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Honest, reproducible benchmarks for chemical structure-prediction systems."""


app.command("canon")(canon.canon)
app.command("matchers")(matchers.matchers)
# Top-level `report RUN_DIR`, `compare RUN_A RUN_B` and `verify RUN_DIR` (not a sub-app).
report.register(app)
app.command("board", short_help="Rank many runs: intervals, pairwise tests, letter groups.")(
    board.board
)

# Each benchmark family lives in its own module exposing ``app`` (a Typer sub-app). A module
# that exists is imported for real, so a broken one fails loudly instead of vanishing.
FAMILY_MODULES = ("forward", "retro", "names", "ocsr", "p2s")
for _family in FAMILY_MODULES:
    if importlib.util.find_spec(f"chemgauge.cli.{_family}") is not None:
        _module = importlib.import_module(f"chemgauge.cli.{_family}")
        app.add_typer(_module.app, name=_family)


def main() -> None:
    """Console entry point: user-fixable errors print one line, without a traceback, exit 2."""
    try:
        app()
    except ChemgaugeError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.secho("interrupted", err=True)
        sys.exit(130)
