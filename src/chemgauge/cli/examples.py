"""``chemgauge examples DIR``: copy the small example inputs shipped in the package.

Every command in the README runs as written in a folder these files were copied to (a test
extracts the README's commands and runs them so). Existing identical files are left alone;
an existing file with other content is never overwritten.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import typer

from chemgauge.errors import ConfigError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.families import FAMILIES, get_family

__all__ = ["copy_examples", "example_sources", "examples"]


def example_sources() -> list[tuple[Path, Path]]:
    """Every shipped example file as (source, path relative to the copy): the shared files
    (``chemgauge/examples``), then each registered family's ``examples/`` under its name."""
    roots = [(Path(str(files("chemgauge").joinpath("examples"))), Path("."))]
    roots.extend(
        (get_family(name).examples_dir(), Path(name))
        for name in FAMILIES.names()
        if get_family(name).examples_dir().is_dir()
    )
    found = []
    for root, prefix in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = path.relative_to(root)
            if "__pycache__" not in relative.parts:
                found.append((path, prefix / relative))
    return found


def copy_examples(target: Path) -> list[Path]:
    """Copy every shipped example file under ``target``; return the files written."""
    planned: list[tuple[Path, Path]] = []
    clashes = []
    for source, relative in example_sources():
        destination = target / relative
        if destination.exists():
            if not destination.is_file() or destination.read_bytes() != source.read_bytes():
                clashes.append(str(destination))
            continue
        planned.append((source, destination))
    if clashes:
        raise ConfigError(
            f"{len(clashes)} example file(s) exist with other content, nothing copied "
            f"(first: {clashes[0]}); choose an empty folder"
        )
    for source, destination in planned:  # atomically: an interrupted copy leaves no half file
        atomic_write_bytes(destination, source.read_bytes())
    return [destination for _, destination in planned]


def examples(
    target: Path = typer.Argument(
        Path("."), help="Folder to copy the example inputs into (created if needed)."
    ),
) -> None:
    """Copy the example inputs (SMILES, corpus CSVs, retro predictions, name pairs, images,
    p2s sources) that every README command uses; see EXAMPLES.md in the copy."""
    written = copy_examples(target)
    typer.echo(f"copied {len(written)} example file(s) into {target}", err=True)
